// Watches and the reflector against a real kube-apiserver: events in order with bookmarks, a
// 410 for a version the watch cache no longer holds, the relist it leads to, reconnection when
// a watch ends, and Stop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "kube/reflector.h"
#include "kube_test_cluster.h"

namespace strata::kube::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const GroupVersionResource kWidgets{"test.strata.dev", "v1", "widgets"};

// A CRD whose watch cache starts when the CRD is created, so a version from before then (such
// as "2") is older than anything the cache holds: a watch from it gets a 410.
void EnsureWidgetCrd(Client& client) {
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "widgets.test.strata.dev"}}},
              {"spec",
               {{"group", "test.strata.dev"},
                {"names",
                 {{"kind", "Widget"},
                  {"plural", "widgets"},
                  {"singular", "widget"},
                  {"listKind", "WidgetList"}}},
                {"scope", "Namespaced"},
                {"versions",
                 {{{"name", "v1"},
                   {"served", true},
                   {"storage", true},
                   {"schema",
                    {{"openAPIV3Schema",
                      {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  Result<json> created = client.Create(resources::kCustomResourceDefinitions, "", crd);
  ASSERT_TRUE(created || created.error().code() == StatusCode::kAlreadyExists)
      << created.error().ToString();
  // Served once Established; the first requests may still get 429 "storage is (re)initializing",
  // which the client retries after its Retry-After.
  ASSERT_TRUE(WaitFor(30, [&] { return client.List(kWidgets, "default").has_value(); }));
}

json Widget(const std::string& name) {
  return {{"apiVersion", "test.strata.dev/v1"},
          {"kind", "Widget"},
          {"metadata", {{"name", name}}},
          {"spec", {{"size", 1}}}};
}

// The next delta that is not a bookmark.
Result<Delta> NextChange(Reflector& reflector) {
  while (true) {
    Result<Delta> delta = reflector.Next(seconds(30));
    if (!delta || delta->type != DeltaType::kBookmark) return delta;
  }
}

std::string NameOf(const json& object) { return object["metadata"]["name"]; }

TEST(KubeWatchTest, SeesAddedModifiedDeletedInOrderAndBookmarks) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "watch");
  Result<ObjectList> list = client->List(resources::kPods, ns);
  ASSERT_TRUE(list) << list.error().ToString();

  WatchOptions options;
  options.resource_version = list->resource_version;
  options.timeout = seconds(6);  // the server sends a bookmark shortly before it ends the watch
  Result<std::unique_ptr<WatchStream>> stream = client->Watch(resources::kPods, ns, options);
  ASSERT_TRUE(stream) << stream.error().ToString();

  ASSERT_TRUE(client->Create(resources::kPods, ns, StrataPod("watched")));
  ASSERT_TRUE(client->Patch(resources::kPods, ns, "watched", PatchType::kMerge,
                            {{"metadata", {{"labels", {{"seen", "yes"}}}}}}));
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(client->Delete(resources::kPods, ns, "watched", now));

  std::vector<std::string> changes;
  int bookmarks = 0;
  while (true) {
    Result<std::optional<WatchEvent>> event = (*stream)->Next(seconds(30));
    ASSERT_TRUE(event) << event.error().ToString();
    if (!event->has_value()) break;  // the server ended the watch at its timeout
    const WatchEvent& watched = **event;
    if (watched.type == WatchEventType::kBookmark) {
      ++bookmarks;
      EXPECT_FALSE(watched.ResourceVersion().empty());
      continue;
    }
    // Deleting a pod first marks it (deletionTimestamp, a MODIFIED), then removes it.
    if (watched.type == WatchEventType::kModified &&
        watched.object["metadata"].contains("deletionTimestamp")) {
      continue;
    }
    changes.push_back(std::string(WatchEventTypeName(watched.type)) + " " + NameOf(watched.object));
    if (watched.type == WatchEventType::kModified) {
      EXPECT_EQ(watched.object["metadata"]["labels"]["seen"], "yes");
    }
  }
  EXPECT_THAT(changes,
              ::testing::ElementsAre("ADDED watched", "MODIFIED watched", "DELETED watched"));
  EXPECT_GE(bookmarks, 1);
  EXPECT_FALSE((*stream)->last_resource_version().empty());
}

TEST(KubeWatchTest, AWatchFromAVersionTheServerNoLongerHasIsExpired) {
  std::unique_ptr<Client> client = AdminClient();
  EnsureWidgetCrd(*client);
  WatchOptions options;
  options.resource_version = "2";
  Result<std::unique_ptr<WatchStream>> stream = client->Watch(kWidgets, "default", options);
  ASSERT_TRUE(stream) << stream.error().ToString();  // accepted, then an ERROR event
  Result<std::optional<WatchEvent>> event = (*stream)->Next(seconds(30));
  ASSERT_FALSE(event);
  EXPECT_EQ(event.error().code(), StatusCode::kExpired);
  EXPECT_THAT(event.error().message(), ::testing::HasSubstr("too old resource version: 2"));
}

TEST(KubeWatchTest, TheReflectorRelistsAfterA410) {
  std::unique_ptr<Client> client = AdminClient();
  EnsureWidgetCrd(*client);
  std::string ns = NewNamespace(*client, "relist");
  ASSERT_TRUE(client->Create(kWidgets, ns, Widget("w1")));

  // A consumer resuming from a version long gone (as one that kept its state across a
  // restart would): the watch's 410 makes the reflector list again.
  ReflectorOptions options;
  options.namespace_name = ns;
  options.resume_resource_version = "2";
  Reflector reflector(client.get(), kWidgets, options);
  Result<Delta> replace = NextChange(reflector);
  ASSERT_TRUE(replace) << replace.error().ToString();
  ASSERT_EQ(replace->type, DeltaType::kReplace);
  ASSERT_EQ(replace->items.size(), 1u);
  EXPECT_EQ(NameOf(replace->items[0]), "w1");
  EXPECT_EQ(replace->items[0]["kind"], "Widget");
  EXPECT_EQ(reflector.stats().expired, 1u);
  EXPECT_EQ(reflector.stats().lists, 1u);

  ASSERT_TRUE(client->Create(kWidgets, ns, Widget("w2")));
  Result<Delta> added = NextChange(reflector);
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->type, DeltaType::kAdded);
  EXPECT_EQ(NameOf(added->object), "w2");
  EXPECT_EQ(added->resource_version, reflector.resource_version());

  ASSERT_TRUE(client->Delete(kWidgets, ns, "w1"));
  Result<Delta> deleted = NextChange(reflector);
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  EXPECT_EQ(deleted->type, DeltaType::kDeleted);
  EXPECT_EQ(NameOf(deleted->object), "w1");
}

TEST(KubeWatchTest, TheReflectorListsInPagesThenFollowsChanges) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "reflector");
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(client->Create(resources::kPods, ns, StrataPod(name)));
  }
  ReflectorOptions options;
  options.namespace_name = ns;
  options.page_size = 2;
  Reflector reflector(client.get(), resources::kPods, options);
  Result<Delta> replace = NextChange(reflector);
  ASSERT_TRUE(replace) << replace.error().ToString();
  ASSERT_EQ(replace->type, DeltaType::kReplace);
  std::vector<std::string> names;
  for (const json& item : replace->items) names.push_back(NameOf(item));
  EXPECT_THAT(names, ::testing::ElementsAre("a", "b", "c"));

  ASSERT_TRUE(client->Bind(ns, "b", "kwok-node-0").ok());
  Result<Delta> bound = NextChange(reflector);
  ASSERT_TRUE(bound) << bound.error().ToString();
  EXPECT_EQ(bound->type, DeltaType::kModified);
  EXPECT_EQ(NameOf(bound->object), "b");
  EXPECT_EQ(bound->object["spec"]["nodeName"], "kwok-node-0");

  // Stop from another thread ends a Next that is waiting on the watch.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    reflector.Stop();
  });
  Result<Delta> stopped = reflector.Next(seconds(60));
  stopper.join();
  while (stopped && stopped->type != DeltaType::kReplace) stopped = reflector.Next(seconds(60));
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().code(), StatusCode::kCancelled);
}

TEST(KubeWatchTest, TheReflectorWatchesAgainWhenAWatchEndsWithoutRelisting) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "rewatch");
  ReflectorOptions options;
  options.namespace_name = ns;
  options.min_watch_timeout = seconds(1);  // each watch ends after 1-2 s
  Reflector reflector(client.get(), resources::kPods, options);
  Result<Delta> replace = NextChange(reflector);
  ASSERT_TRUE(replace) << replace.error().ToString();
  EXPECT_EQ(replace->type, DeltaType::kReplace);
  // Let a few watches end and be reopened, then change something.
  auto until = std::chrono::steady_clock::now() + seconds(5);
  while (std::chrono::steady_clock::now() < until) {
    Result<Delta> delta = reflector.Next(seconds(1));
    if (delta) {
      EXPECT_EQ(delta->type, DeltaType::kBookmark);
    }
  }
  ASSERT_TRUE(client->Create(resources::kPods, ns, StrataPod("late")));
  Result<Delta> added = NextChange(reflector);
  ASSERT_TRUE(added) << added.error().ToString();
  EXPECT_EQ(added->type, DeltaType::kAdded);
  EXPECT_EQ(NameOf(added->object), "late");
  EXPECT_GE(reflector.stats().watches, 2u);
  EXPECT_EQ(reflector.stats().lists, 1u);
}

TEST(KubeWatchTest, TheReflectorReportsAPermissionDenied) {
  KubeConfig config = AdminConfig();
  config.impersonate_user = "alice";
  ClientOptions unlimited;
  unlimited.qps = 0;
  std::unique_ptr<Client> alice = NewClient(config, unlimited);
  Reflector reflector(alice.get(), resources::kPods);
  Result<Delta> delta = reflector.Next(seconds(30));
  ASSERT_FALSE(delta);
  EXPECT_EQ(delta.error().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace strata::kube::testing
