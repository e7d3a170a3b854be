// The kube client's REST verbs against a real kube-apiserver: kubeconfig, nodes, a pod's
// create/get/update/patch/delete with their preconditions, pods/binding and pods/status,
// server-side apply, paging and selectors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube_test_cluster.h"

namespace strata::kube::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string ResourceVersionOf(const json& object) {
  return object["metadata"]["resourceVersion"].get<std::string>();
}

TEST(KubeRestTest, LoadsTheKubeconfigAndReachesTheServer) {
  KubeConfig config = AdminConfig();
  EXPECT_THAT(config.server, ::testing::StartsWith("https://127.0.0.1:"));
  EXPECT_FALSE(config.ca_pem.empty());
  EXPECT_FALSE(config.client_certificate_pem.empty());
  std::unique_ptr<Client> client = AdminClient();
  Result<json> version = client->GetPath("/version");
  ASSERT_TRUE(version) << version.error().ToString();
  EXPECT_EQ((*version)["gitVersion"], "v1.37.2");
}

TEST(KubeRestTest, ListsTheThreeGpuNodes) {
  std::unique_ptr<Client> client = AdminClient();
  Result<ObjectList> nodes = client->ListAll(resources::kNodes, "");
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  ASSERT_EQ(nodes->items.size(), 3u);
  EXPECT_FALSE(nodes->resource_version.empty());
  std::vector<std::string> names;
  for (const json& node : nodes->items) {
    names.push_back(node["metadata"]["name"]);
    EXPECT_EQ(node["kind"], "Node");
    EXPECT_EQ(node["apiVersion"], "v1");
    EXPECT_EQ(node["status"]["allocatable"]["nvidia.com/gpu"], "8");
    EXPECT_EQ(node["metadata"]["labels"]["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("kwok-node-0", "kwok-node-1", "kwok-node-2"));
}

TEST(KubeRestTest, PagesAndSelectors) {
  std::unique_ptr<Client> client = AdminClient();
  ListOptions first_page;
  first_page.limit = 1;
  Result<ObjectList> page = client->List(resources::kNodes, "", first_page);
  ASSERT_TRUE(page) << page.error().ToString();
  EXPECT_EQ(page->items.size(), 1u);
  EXPECT_FALSE(page->continue_token.empty());
  EXPECT_EQ(page->remaining_item_count, 2);

  Result<ObjectList> all = client->ListAll(resources::kNodes, "", {}, /*page_size=*/1);
  ASSERT_TRUE(all) << all.error().ToString();
  EXPECT_EQ(all->items.size(), 3u);
  EXPECT_TRUE(all->continue_token.empty());

  ListOptions by_label;
  by_label.label_selector = "kubernetes.io/hostname=kwok-node-1";
  Result<ObjectList> one = client->ListAll(resources::kNodes, "", by_label);
  ASSERT_TRUE(one) << one.error().ToString();
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ(one->items[0]["metadata"]["name"], "kwok-node-1");

  ListOptions by_field;
  by_field.field_selector = "metadata.name=kwok-node-2";
  one = client->ListAll(resources::kNodes, "", by_field);
  ASSERT_TRUE(one) << one.error().ToString();
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ(one->items[0]["metadata"]["name"], "kwok-node-2");

  ListOptions bad;
  bad.label_selector = "a in (";
  Result<ObjectList> refused = client->List(resources::kNodes, "", bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
}

TEST(KubeRestTest, APodsLifeWithItsPreconditions) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "lifecycle");
  Result<json> created = client->Create(resources::kPods, ns, StrataPod("p1"));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_EQ((*created)["spec"]["schedulerName"], "strata");

  Result<json> again = client->Create(resources::kPods, ns, StrataPod("p1"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(again.error().message(), HasSubstr("pods \"p1\" already exists"));

  Result<json> got = client->Get(resources::kPods, ns, "p1");
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_EQ((*got)["metadata"]["uid"], (*created)["metadata"]["uid"]);

  // Update with the version read: accepted, and the version moves on.
  json changed = *got;
  changed["metadata"]["labels"]["stage"] = "one";
  Result<json> updated = client->Update(resources::kPods, ns, changed);
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_NE(ResourceVersionOf(*updated), ResourceVersionOf(*got));
  // The same update from the stale version: Conflict, nothing written.
  changed["metadata"]["labels"]["stage"] = "stale";
  Result<json> stale = client->Update(resources::kPods, ns, changed);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);
  EXPECT_THAT(stale.error().message(), HasSubstr("the object has been modified"));

  Result<json> merged = client->Patch(resources::kPods, ns, "p1", PatchType::kMerge,
                                      {{"metadata", {{"labels", {{"stage", "two"}}}}}});
  ASSERT_TRUE(merged) << merged.error().ToString();
  EXPECT_EQ((*merged)["metadata"]["labels"]["stage"], "two");
  EXPECT_EQ((*merged)["metadata"]["labels"]["app"], "kube-client-test");

  Result<json> json_patched = client->Patch(
      resources::kPods, ns, "p1", PatchType::kJson,
      json::array({{{"op", "add"}, {"path", "/metadata/annotations"}, {"value", {{"a", "b"}}}},
                   {{"op", "test"}, {"path", "/metadata/labels/stage"}, {"value", "two"}}}));
  ASSERT_TRUE(json_patched) << json_patched.error().ToString();
  EXPECT_EQ((*json_patched)["metadata"]["annotations"]["a"], "b");
  Result<json> failed_test = client->Patch(
      resources::kPods, ns, "p1", PatchType::kJson,
      json::array({{{"op", "test"}, {"path", "/metadata/labels/stage"}, {"value", "nine"}}}));
  ASSERT_FALSE(failed_test);
  EXPECT_EQ(failed_test.error().code(), StatusCode::kInvalidArgument);

  // Strategic merge: the container list merges by name instead of being replaced.
  Result<json> strategic = client->Patch(
      resources::kPods, ns, "p1", PatchType::kStrategicMerge,
      {{"spec", {{"containers", {{{"name", "main"}, {"image", "registry.example/train:2"}}}}}}});
  ASSERT_TRUE(strategic) << strategic.error().ToString();
  ASSERT_EQ((*strategic)["spec"]["containers"].size(), 1u);
  EXPECT_EQ((*strategic)["spec"]["containers"][0]["image"], "registry.example/train:2");
  EXPECT_EQ((*strategic)["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");

  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  Result<json> refused = client->Delete(resources::kPods, ns, "p1", wrong_uid);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kConflict);
  DeleteOptions stale_version;
  stale_version.precondition_resource_version = ResourceVersionOf(*got);
  refused = client->Delete(resources::kPods, ns, "p1", stale_version);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kConflict);

  DeleteOptions right;
  right.precondition_uid = (*created)["metadata"]["uid"];
  right.grace_period_seconds = 0;
  right.propagation = PropagationPolicy::kBackground;
  Result<json> deleted = client->Delete(resources::kPods, ns, "p1", right);
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  // An unbound pod goes at once; NotFound from then on.
  Result<json> gone = client->Get(resources::kPods, ns, "p1");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), StatusCode::kNotFound);
  Result<json> twice = client->Delete(resources::kPods, ns, "p1");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), StatusCode::kNotFound);
}

TEST(KubeRestTest, BindsAnUnscheduledPodThroughPodsBinding) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "binding");
  Result<json> pod = client->Create(resources::kPods, ns, StrataPod("trainer", 8));
  ASSERT_TRUE(pod) << pod.error().ToString();
  EXPECT_FALSE((*pod)["spec"].contains("nodeName"));  // nothing schedules strata's pods here
  std::string uid = (*pod)["metadata"]["uid"];

  Status wrong_uid = client->Bind(ns, "trainer", "kwok-node-1", "not-the-uid");
  EXPECT_EQ(wrong_uid.code(), StatusCode::kConflict) << wrong_uid.ToString();

  Status bound = client->Bind(ns, "trainer", "kwok-node-1", uid);
  ASSERT_TRUE(bound.ok()) << bound.ToString();
  Result<json> got = client->Get(resources::kPods, ns, "trainer");
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_EQ((*got)["spec"]["nodeName"], "kwok-node-1");

  Status rebound = client->Bind(ns, "trainer", "kwok-node-2", uid);
  EXPECT_EQ(rebound.code(), StatusCode::kConflict) << rebound.ToString();
  EXPECT_THAT(rebound.message(), HasSubstr("already assigned to node \"kwok-node-1\""));

  // kwok, as the node's kubelet, runs what was bound to its node.
  bool running = WaitFor(60, [&] {
    Result<json> now = client->Get(resources::kPods, ns, "trainer");
    return now && (*now)["status"].value("phase", "") == "Running";
  });
  EXPECT_TRUE(running);

  Status no_such_pod = client->Bind(ns, "ghost", "kwok-node-1");
  EXPECT_EQ(no_such_pod.code(), StatusCode::kNotFound) << no_such_pod.ToString();
}

TEST(KubeRestTest, WritesThePodsStatusSubresource) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "status");
  ASSERT_TRUE(client->Create(resources::kPods, ns, StrataPod("waiting")));
  Result<json> pod = client->Get(resources::kPods, ns, "waiting");
  ASSERT_TRUE(pod) << pod.error().ToString();

  json with_condition = *pod;
  with_condition["status"]["conditions"] =
      json::array({{{"type", "PodScheduled"},
                    {"status", "False"},
                    {"reason", "Unschedulable"},
                    {"message", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}}});
  with_condition["spec"]["schedulerName"] = "someone-else";  // ignored by pods/status
  WriteOptions status_only;
  status_only.subresource = "status";
  status_only.field_manager = "strata-scheduler";
  Result<json> updated = client->Update(resources::kPods, ns, with_condition, status_only);
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_EQ((*updated)["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_EQ((*updated)["spec"]["schedulerName"], "strata");

  PatchOptions patch_status;
  patch_status.subresource = "status";
  Result<json> patched =
      client->Patch(resources::kPods, ns, "waiting", PatchType::kMerge,
                    {{"status", {{"nominatedNodeName", "kwok-node-0"}}}}, patch_status);
  ASSERT_TRUE(patched) << patched.error().ToString();
  EXPECT_EQ((*patched)["status"]["nominatedNodeName"], "kwok-node-0");
}

TEST(KubeRestTest, ServerSideApplyTracksFieldManagers) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "apply");
  json config = {{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata", {{"name", "settings"}}},
                 {"data", {{"queue", "team-a"}}}};
  Result<json> applied = client->Apply(resources::kConfigMaps, ns, config, "strata-controller");
  ASSERT_TRUE(applied) << applied.error().ToString();
  EXPECT_EQ((*applied)["data"]["queue"], "team-a");
  EXPECT_EQ((*applied)["metadata"]["managedFields"][0]["manager"], "strata-controller");

  // Applying the same document again is a no-op.
  Result<json> again = client->Apply(resources::kConfigMaps, ns, config, "strata-controller");
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(ResourceVersionOf(*again), ResourceVersionOf(*applied));

  // Another manager setting the same field: Conflict, unless it forces.
  json theirs = config;
  theirs["data"]["queue"] = "team-b";
  Result<json> conflict = client->Apply(resources::kConfigMaps, ns, theirs, "someone-else");
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), StatusCode::kConflict);
  EXPECT_THAT(conflict.error().message(), HasSubstr("conflict with \"strata-controller\""));
  Result<json> forced =
      client->Apply(resources::kConfigMaps, ns, theirs, "someone-else", /*force=*/true);
  ASSERT_TRUE(forced) << forced.error().ToString();
  EXPECT_EQ((*forced)["data"]["queue"], "team-b");

  PatchOptions no_manager;
  Result<json> refused =
      client->Patch(resources::kConfigMaps, ns, "settings", PatchType::kApply, config, no_manager);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
}

TEST(KubeRestTest, EventsAndHeadlessServices) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "core");
  Result<json> pod = client->Create(resources::kPods, ns, StrataPod("big", 9));
  ASSERT_TRUE(pod) << pod.error().ToString();
  // What a scheduler records for `kubectl describe pod`.
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"generateName", "big."}}},
                {"involvedObject",
                 {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"name", "big"},
                  {"namespace", ns},
                  {"uid", (*pod)["metadata"]["uid"]}}},
                {"type", "Warning"},
                {"reason", "FailedScheduling"},
                {"message", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."},
                {"source", {{"component", "strata"}}}};
  Result<json> recorded = client->Create(resources::kEvents, ns, event);
  ASSERT_TRUE(recorded) << recorded.error().ToString();
  ListOptions about_big;
  about_big.field_selector = "involvedObject.name=big,reason=FailedScheduling";
  Result<ObjectList> events = client->ListAll(resources::kEvents, ns, about_big);
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events->items.size(), 1u);
  EXPECT_EQ(events->items[0]["kind"], "Event");
  EXPECT_EQ(events->items[0]["source"]["component"], "strata");

  // The headless Service that makes a training job's MASTER_ADDR resolve.
  Result<json> service = client->Create(resources::kServices, ns,
                                        {{"apiVersion", "v1"},
                                         {"kind", "Service"},
                                         {"metadata", {{"name", "resnet50-train"}}},
                                         {"spec",
                                          {{"clusterIP", "None"},
                                           {"selector", {{"app", "kube-client-test"}}},
                                           {"ports", {{{"name", "c10d"}, {"port", 29500}}}}}}});
  ASSERT_TRUE(service) << service.error().ToString();
  EXPECT_EQ((*service)["spec"]["clusterIP"], "None");
  Result<json> ns_object = client->Get(resources::kNamespaces, "", ns);
  ASSERT_TRUE(ns_object) << ns_object.error().ToString();
  EXPECT_EQ((*ns_object)["status"]["phase"], "Active");
}

TEST(KubeRestTest, DryRunStoresNothing) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "dry-run");
  WriteOptions dry_run;
  dry_run.dry_run = true;
  Result<json> created = client->Create(resources::kPods, ns, StrataPod("maybe"), dry_run);
  ASSERT_TRUE(created) << created.error().ToString();
  Result<json> got = client->Get(resources::kPods, ns, "maybe");
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), StatusCode::kNotFound);

  json invalid = StrataPod("Bad_Name");
  Result<json> refused = client->Create(resources::kPods, ns, invalid);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.error().message(), HasSubstr("Invalid"));
}

}  // namespace
}  // namespace strata::kube::testing
