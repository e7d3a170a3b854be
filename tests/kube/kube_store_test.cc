// The store over the Kubernetes API (src/kubestore) against a real kube-apiserver with strata's
// CRDs: the store contract (preconditions, versions, list, watch from a version, Expired) on
// strata's kinds as custom resources, Pods as v1 Pods that any client sees (bound through
// pods/binding, owned by their Job so that the garbage collector deletes them with it), the
// cluster's Nodes with their GPUs, and a virtual kubelet's view of the pods bound to its node
// (strata's or anyone's) beside the control plane's (strata's only).
#include "kubestore/kube_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/annotations.h"
#include "api/custom_resources.h"
#include "api/encode.h"
#include "api/manifest.h"
#include "api/object.h"
#include "api/pod_contract.h"
#include "kube_test_cluster.h"

namespace strata::kube::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using ::testing::HasSubstr;

const GroupVersionResource kStrataJobs{"strata.dev", "v1alpha1", "jobs"};

class KubeStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::unique_ptr<Client> client = AdminClient();
    for (const json& crd : api::CustomResourceDefinitions()) {
      Result<json> created = client->Create(resources::kCustomResourceDefinitions, "", crd);
      ASSERT_TRUE(created || created.error().code() == StatusCode::kAlreadyExists)
          << created.error().ToString();
    }
    ASSERT_TRUE(WaitFor(30, [&] { return client->List(kStrataJobs, "default").has_value(); }));
  }

  void SetUp() override {
    client_ = AdminClient();
    store_ = std::make_unique<kubestore::KubeStore>(*client_);
    ns_ = NewNamespace(*client_, "store");
  }

  store::Object Stored(const api::Object& value) {
    store::Object object;
    object.key = {std::string(value.kind()), value.namespace_name(), value.name()};
    object.labels = value.metadata().labels;
    object.body = api::EncodeObject(value);
    return object;
  }

  api::Job TrainJob(const std::string& name) {
    api::Job job;
    job.metadata.name = name;
    job.metadata.namespace_name = ns_;
    job.metadata.labels = {{"team", "a"}};
    job.spec.replicas = 2;
    job.spec.template_.command = {"python3", "train.py"};
    return job;
  }

  api::Pod WorkerPod(const std::string& name, const std::string& job) {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_name = ns_;
    if (!job.empty()) {  // else a standalone pod
      pod.metadata.labels = {{std::string(api::kJobNameLabel), job}};
      pod.spec.owner = {"Job", job, 0, 0};
    }
    pod.spec.restart_policy = "Never";
    pod.spec.resources.gpu = Quantity::FromUnits(1);
    pod.spec.tolerations = {{"kwok.x-k8s.io/node", "Exists", "", "NoSchedule"}};
    pod.spec.template_.command = {"python3", "train.py"};
    return pod;
  }

  template <typename T>
  T Decode(const store::Object& object) {
    Result<api::Object> decoded = api::DecodeObject(object.body);
    EXPECT_TRUE(decoded.has_value()) << decoded.error().ToString();
    const T* value = decoded ? decoded->As<T>() : nullptr;
    return value != nullptr ? *value : T{};
  }

  std::unique_ptr<Client> client_;
  std::unique_ptr<kubestore::KubeStore> store_;
  std::string ns_;
};

TEST_F(KubeStoreTest, AJobIsACustomResourceWithTheStoresPreconditions) {
  Result<store::Object> created = store_->Create(Stored(TrainJob("train")));
  ASSERT_TRUE(created) << created.error().ToString();
  EXPECT_GT(created->resource_version, 0);
  EXPECT_FALSE(created->uid.empty());
  Result<json> raw = client_->Get(kStrataJobs, ns_, "train");
  ASSERT_TRUE(raw) << raw.error().ToString();
  EXPECT_EQ((*raw)["spec"]["replicas"], 2);
  EXPECT_EQ((*raw)["metadata"]["labels"]["team"], "a");

  Result<store::Object> again = store_->Create(Stored(TrainJob("train")));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);

  // Spec and status in one store write: the object, then its /status.
  api::Job job = Decode<api::Job>(*created);
  job.spec.replicas = 4;
  job.status.phase = api::JobPhase::kRunning;
  job.status.restart_count = 1;
  store::Object update = Stored(job);
  update.resource_version = created->resource_version;
  Result<store::Object> updated = store_->Update(update);
  ASSERT_TRUE(updated) << updated.error().ToString();
  EXPECT_GT(updated->resource_version, created->resource_version);
  raw = client_->Get(kStrataJobs, ns_, "train");
  ASSERT_TRUE(raw);
  EXPECT_EQ((*raw)["spec"]["replicas"], 4);
  EXPECT_EQ((*raw)["status"]["phase"], "Running");
  EXPECT_EQ((*raw)["status"]["restartCount"], 1);
  api::Job read = Decode<api::Job>(*store_->Get(created->key));
  EXPECT_EQ(read.spec.replicas, 4);
  EXPECT_EQ(read.status.phase, api::JobPhase::kRunning);

  // The version it was read at is stale now: Conflict, for update and delete alike.
  Result<store::Object> stale = store_->Update(update);
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), StatusCode::kConflict);
  Result<store::Object> stale_delete = store_->Delete(created->key, created->resource_version);
  ASSERT_FALSE(stale_delete);
  EXPECT_EQ(stale_delete.error().code(), StatusCode::kConflict);
  store::Object other_uid = Stored(job);
  other_uid.uid = "not-its-uid";
  Result<store::Object> replaced = store_->Update(other_uid);
  ASSERT_FALSE(replaced);
  EXPECT_EQ(replaced.error().code(), StatusCode::kConflict);

  ASSERT_TRUE(store_->Delete(created->key, updated->resource_version));
  Result<store::Object> gone = store_->Get(created->key);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), StatusCode::kNotFound);
}

TEST_F(KubeStoreTest, ABatchOfSeveralWritesIsRefusedWithoutWritingAny) {
  Result<std::vector<store::Object>> batch =
      store_->Apply({{store::WriteOp::kCreate, Stored(TrainJob("a"))},
                     {store::WriteOp::kCreate, Stored(TrainJob("b"))}});
  ASSERT_FALSE(batch);
  EXPECT_EQ(batch.error().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(client_->Get(kStrataJobs, ns_, "a"));
}

TEST_F(KubeStoreTest, ListsByKindNamespaceAndLabelsInNameOrder) {
  for (std::string name : {"c", "a", "b"}) {
    api::Job job = TrainJob(name);
    if (name == "b") job.metadata.labels["team"] = "b";
    ASSERT_TRUE(store_->Create(Stored(job)));
  }
  store::Selection selection{"Job", ns_, {}};
  Result<store::ListResult> all = store_->List(selection);
  ASSERT_TRUE(all) << all.error().ToString();
  std::vector<std::string> names;
  for (const store::Object& object : all->items) names.push_back(object.key.name);
  EXPECT_THAT(names, ::testing::ElementsAre("a", "b", "c"));
  EXPECT_GE(all->resource_version, all->items.back().resource_version);
  selection.labels = *store::LabelSelector::Parse("team=a");
  Result<store::ListResult> team_a = store_->List(selection);
  ASSERT_TRUE(team_a);
  EXPECT_EQ(team_a->items.size(), 2u);
}

TEST_F(KubeStoreTest, AWatchFromAListsVersionMissesNothingAndSeesLabelsLeave) {
  store::Selection selection{"Job", ns_, *store::LabelSelector::Parse("team=a")};
  Result<store::ListResult> listed = store_->List(selection);
  ASSERT_TRUE(listed);
  store::WatchOptions options;
  options.selection = selection;
  options.from_version = listed->resource_version;
  Result<std::unique_ptr<store::Watcher>> watcher = store_->Watch(options);
  ASSERT_TRUE(watcher) << watcher.error().ToString();

  Result<store::Object> created = store_->Create(Stored(TrainJob("w")));
  ASSERT_TRUE(created);
  api::Job job = Decode<api::Job>(*created);
  job.metadata.labels["team"] = "b";  // leaves the selection
  Result<store::Object> moved = store_->Update(Stored(job));
  ASSERT_TRUE(moved) << moved.error().ToString();

  Result<store::WatchEvent> added = (*watcher)->Next(seconds(30));
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->type, store::WatchEventType::kAdded);
  EXPECT_EQ(added->object.key.name, "w");
  EXPECT_EQ(added->object.resource_version, created->resource_version);
  Result<store::WatchEvent> left = (*watcher)->Next(seconds(30));
  ASSERT_TRUE(left) << left.error().ToString();
  EXPECT_EQ(left->type, store::WatchEventType::kDeleted) << "out of the selection";
  EXPECT_GE((*watcher)->ProgressVersion(), created->resource_version);
}

TEST_F(KubeStoreTest, AWatchFromNowOutlivesTheServersEndOfEachRequest) {
  // Requests of 1 s: the server ends each one, and the watcher goes on from its last version.
  kubestore::KubeStoreOptions options;
  options.watch_request_timeout = seconds(1);
  kubestore::KubeStore store(*client_, options);
  store::WatchOptions watch;
  watch.selection = {"Job", ns_, {}};
  Result<std::unique_ptr<store::Watcher>> watcher = store.Watch(watch);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  Result<store::WatchEvent> nothing = (*watcher)->Next(std::chrono::milliseconds(2500));
  ASSERT_FALSE(nothing);
  EXPECT_EQ(nothing.error().code(), StatusCode::kDeadlineExceeded) << nothing.error().ToString();
  Result<store::Object> created = store.Create(Stored(TrainJob("late")));
  ASSERT_TRUE(created) << created.error().ToString();
  Result<store::WatchEvent> added = (*watcher)->Next(seconds(30));
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->type, store::WatchEventType::kAdded);
  EXPECT_EQ(added->object.resource_version, created->resource_version);
  ASSERT_TRUE(store.Delete(created->key));
  Result<store::WatchEvent> deleted = (*watcher)->Next(seconds(30));
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  EXPECT_EQ(deleted->type, store::WatchEventType::kDeleted);
  EXPECT_GT(deleted->object.resource_version, created->resource_version);
}

TEST_F(KubeStoreTest, AWholeKindWatcherHoldsTheStoresOwnWriteAtOnce) {
  // Read-your-writes: right after a write, TryNext does not come back empty before its event.
  store::WatchOptions watch;
  watch.selection.kind = "Job";
  Result<std::unique_ptr<store::Watcher>> watcher = store_->Watch(watch);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  for (int i = 0; i < 3; ++i) {
    Result<store::Object> created = store_->Create(Stored(TrainJob("mine-" + std::to_string(i))));
    ASSERT_TRUE(created) << created.error().ToString();
    while (true) {
      Result<std::optional<store::WatchEvent>> next = (*watcher)->TryNext();
      ASSERT_TRUE(next) << next.error().ToString();
      ASSERT_TRUE(next->has_value()) << "the write's event was not there for a Sync after it";
      if ((*next)->object.resource_version == created->resource_version) break;
    }
  }
}

TEST_F(KubeStoreTest, AWatchFromAVersionTheServerNoLongerHoldsIsExpired) {
  // Version 2 predates strata's CRDs, hence their watch caches: the server answers 410.
  store::WatchOptions options;
  options.selection.kind = "Job";
  options.from_version = 2;
  Result<std::unique_ptr<store::Watcher>> watcher = store_->Watch(options);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  Result<store::WatchEvent> event = (*watcher)->Next(seconds(30));
  ASSERT_FALSE(event);
  EXPECT_EQ(event.error().code(), StatusCode::kExpired) << event.error().ToString();
}

TEST_F(KubeStoreTest, APodIsAV1PodBoundThroughBindingAndDeletedWithItsJob) {
  Result<store::Object> job = store_->Create(Stored(TrainJob("train")));
  ASSERT_TRUE(job) << job.error().ToString();
  Result<store::Object> pod = store_->Create(Stored(WorkerPod("train-0", "train")));
  ASSERT_TRUE(pod) << pod.error().ToString();

  // What any Kubernetes client sees.
  Result<json> raw = client_->Get(resources::kPods, ns_, "train-0");
  ASSERT_TRUE(raw) << raw.error().ToString();
  EXPECT_EQ((*raw)["spec"]["schedulerName"], "strata");
  EXPECT_EQ((*raw)["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_EQ((*raw)["spec"]["containers"][0]["command"], json::array({"python3", "train.py"}));
  EXPECT_EQ((*raw)["metadata"]["ownerReferences"][0]["uid"], job->uid);
  EXPECT_EQ((*raw)["metadata"]["ownerReferences"][0]["kind"], "Job");

  // A pod the store did not write is not one of its Pods.
  json foreign = StrataPod("foreign");
  ASSERT_TRUE(client_->Create(resources::kPods, ns_, foreign));
  Result<store::ListResult> pods = store_->List({"Pod", ns_, {}});
  ASSERT_TRUE(pods) << pods.error().ToString();
  ASSERT_EQ(pods->items.size(), 1u);
  EXPECT_EQ(pods->items[0].key.name, "train-0");
  EXPECT_EQ(store_->Get({"Pod", ns_, "foreign"}).error().code(), StatusCode::kNotFound);

  // Binding: the store's update with a node name is a pods/binding.
  api::Pod bound = Decode<api::Pod>(*pod);
  bound.spec.node_name = "kwok-node-1";
  bound.metadata.annotations[api::kBoundAtAnnotation] = "2026-12-02T07:00:00Z";
  store::Object bind = Stored(bound);
  bind.resource_version = pod->resource_version;
  Result<store::Object> after_bind = store_->Update(bind);
  ASSERT_TRUE(after_bind) << after_bind.error().ToString();
  raw = client_->Get(resources::kPods, ns_, "train-0");
  ASSERT_TRUE(raw);
  EXPECT_EQ((*raw)["spec"]["nodeName"], "kwok-node-1");
  EXPECT_EQ((*raw)["metadata"]["annotations"][api::kBoundAtAnnotation], "2026-12-02T07:00:00Z");
  api::Pod read = Decode<api::Pod>(*store_->Get(pod->key));
  EXPECT_EQ(read.spec.node_name, "kwok-node-1");
  EXPECT_EQ(read.spec.owner.name, "train");
  EXPECT_EQ(read.spec.resources.gpu, Quantity::FromUnits(1));

  // Bound pods do not move.
  read.spec.node_name = "kwok-node-2";
  Result<store::Object> moved = store_->Update(Stored(read));
  ASSERT_FALSE(moved);
  EXPECT_THAT(moved.error().message(), HasSubstr("spec.nodeName"));

  // Deleting the Job deletes its pods: the garbage collector follows the owner reference.
  ASSERT_TRUE(store_->Delete(job->key));
  EXPECT_TRUE(WaitFor(60, [&] {
    Result<json> left = client_->Get(resources::kPods, ns_, "train-0");
    return !left && left.error().code() == StatusCode::kNotFound;
  }));
}

TEST_F(KubeStoreTest, APodsStatusIsWrittenThroughTheStatusSubresource) {
  Result<store::Object> pod = store_->Create(Stored(WorkerPod("solo", "")));
  ASSERT_TRUE(pod) << pod.error().ToString();
  api::Pod failed = Decode<api::Pod>(*pod);
  failed.status.phase = api::PodPhase::kFailed;
  failed.status.exit_code = 3;
  failed.status.message = "exited 3";
  Result<store::Object> written = store_->Update(Stored(failed));
  ASSERT_TRUE(written) << written.error().ToString();
  Result<json> raw = client_->Get(resources::kPods, ns_, "solo");
  ASSERT_TRUE(raw);
  EXPECT_EQ((*raw)["status"]["phase"], "Failed");
  EXPECT_EQ((*raw)["status"]["message"], "exited 3");
  EXPECT_EQ((*raw)["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  api::Pod read = Decode<api::Pod>(*written);
  EXPECT_EQ(read.status.phase, api::PodPhase::kFailed);
  EXPECT_EQ(read.status.exit_code, 3);
}

TEST_F(KubeStoreTest, TheClustersNodesAreNodesWithTheirGpus) {
  Result<store::ListResult> nodes = store_->List({"Node", std::nullopt, {}});
  ASSERT_TRUE(nodes) << nodes.error().ToString();
  ASSERT_EQ(nodes->items.size(), 3u);
  api::Node node = Decode<api::Node>(nodes->items[0]);
  EXPECT_EQ(node.metadata.name, "kwok-node-0");
  ASSERT_EQ(node.status.gpus.size(), 8u);
  EXPECT_EQ(node.status.gpus[0].model, "NVIDIA-H100-80GB-HBM3");
}

TEST_F(KubeStoreTest, AKubeletsStoreReadsEveryPodOnItsNodeAndWritesOnlyTheirStatus) {
  // No such Node: nothing else (kwok) runs or reports its pods.
  const std::string node = "kubelet-" + ns_;
  kubestore::KubeStoreOptions options;
  options.kubelet_node = node;
  kubestore::KubeStore kubelet(*client_, options);
  store::WatchOptions watch;
  watch.selection = {"Pod", std::nullopt, {}};
  Result<std::unique_ptr<store::Watcher>> watcher = kubelet.Watch(watch);
  ASSERT_TRUE(watcher) << watcher.error().ToString();
  // Pods strata did not make, as a Deployment's or kubectl run's.
  auto create = [&](const std::string& name, const std::string& node_name) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", ns_}, {"labels", {{"app", "web"}}}}},
                {"spec",
                 {{"containers", json::array({{{"name", "web"},
                                               {"image", "registry.example/web:1"},
                                               {"command", {"sleep", "60"}}}})}}}};
    if (!node_name.empty()) pod["spec"]["nodeName"] = node_name;
    Result<json> created = client_->Create(resources::kPods, ns_, pod);
    ASSERT_TRUE(created) << created.error().ToString();
  };
  create("here", node);
  create("elsewhere", node + "-other");
  create("unbound", "");

  Result<store::ListResult> theirs = store_->List({"Pod", ns_, {}});
  ASSERT_TRUE(theirs) << theirs.error().ToString();
  EXPECT_TRUE(theirs->items.empty()) << "the control plane's loops never see another's pods";
  Result<store::ListResult> listed = kubelet.List({"Pod", ns_, {}});
  ASSERT_TRUE(listed) << listed.error().ToString();
  ASSERT_EQ(listed->items.size(), 1u) << "only the pods bound to the kubelet's node";
  EXPECT_EQ(listed->items[0].key.name, "here");
  api::Pod here = Decode<api::Pod>(listed->items[0]);
  ASSERT_NE(api::PodAnnotation(here, api::kForeignPodAnnotation), nullptr);
  EXPECT_EQ(*api::PodAnnotation(here, api::kForeignPodAnnotation), "web");
  EXPECT_EQ(here.spec.template_.command, (std::vector<std::string>{"sleep", "60"}));
  Result<store::WatchEvent> added = (*watcher)->Next(seconds(30));
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->type, store::WatchEventType::kAdded);
  EXPECT_EQ(added->object.key.name, "here");

  // Its status, as a kubelet writes it; its spec and metadata stay its owner's.
  api::Pod running = here;
  running.status.phase = api::PodPhase::kRunning;
  running.status.pod_ip = "127.0.100.9";
  running.metadata.annotations[api::kStartedAtAnnotation] = "2026-12-06T10:00:00Z";
  store::Object update = listed->items[0];
  update.body = api::EncodeObject(api::Object(running));
  Result<store::Object> written = kubelet.Update(update);
  ASSERT_TRUE(written) << written.error().ToString();
  Result<json> raw = client_->Get(resources::kPods, ns_, "here");
  ASSERT_TRUE(raw);
  EXPECT_EQ((*raw)["status"]["phase"], "Running");
  EXPECT_EQ((*raw)["status"]["podIP"], "127.0.100.9");
  EXPECT_EQ((*raw)["status"]["startTime"], "2026-12-06T10:00:00Z");
  EXPECT_EQ((*raw)["status"]["containerStatuses"][0]["name"], "web");
  EXPECT_EQ((*raw)["status"]["containerStatuses"][0]["state"]["running"]["startedAt"],
            "2026-12-06T10:00:00Z");
  EXPECT_EQ((*raw)["metadata"]["labels"], json({{"app", "web"}}));
  EXPECT_FALSE((*raw)["metadata"].contains("annotations"));
  EXPECT_EQ(Decode<api::Pod>(*written).status.phase, api::PodPhase::kRunning);
  Result<store::Object> refused = store_->Update(update);
  ASSERT_FALSE(refused) << "the control plane's store writes strata's pods only";
  EXPECT_EQ(refused.error().code(), StatusCode::kConflict);

  // Deleted with a grace period, it reads as one to stop; the kubelet ends the deletion.
  DeleteOptions graceful;
  graceful.grace_period_seconds = 30;
  ASSERT_TRUE(client_->Delete(resources::kPods, ns_, "here", graceful));
  Result<store::Object> deleting = kubelet.Get({"Pod", ns_, "here"});
  ASSERT_TRUE(deleting) << deleting.error().ToString();
  const api::Pod deleting_pod = Decode<api::Pod>(*deleting);
  const std::string* grace = api::PodAnnotation(deleting_pod, api::kForeignDeletingAnnotation);
  ASSERT_NE(grace, nullptr);
  EXPECT_EQ(*grace, "30");
  store::Object gone;
  gone.key = deleting->key;
  gone.uid = deleting->uid;
  Result<std::vector<store::Object>> deleted =
      kubelet.Apply({store::Write{store::WriteOp::kDelete, gone}});
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  Result<json> after = client_->Get(resources::kPods, ns_, "here");
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata::kube::testing
