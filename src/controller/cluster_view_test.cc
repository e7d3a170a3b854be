#include "controller/cluster_view.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/stored_object.h"
#include "controller/controller_test_support.h"
#include "controller/training_pod.h"

namespace strata::controller {
namespace {

using testing::TestCluster;

// Everything a view hands the scheduler adapter, as text: two views that read alike schedule
// alike.
std::string Describe(const ClusterView& view) {
  const scheduler::Cluster& cluster = *view.snapshot.cluster;
  std::string out;
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const scheduler::Node& node = cluster.nodes[i];
    out += fmt::format("node {} {} taints={} gpus={} cpu={} ref={}\n", i, node.name,
                       node.taints.size(), node.gpus.size(), node.cpu_milli,
                       view.nodes[i]->raw.resource_version);
  }
  for (const scheduler::Flavor& flavor : cluster.flavors) out += "flavor " + flavor.name + "\n";
  for (const scheduler::Queue& queue : cluster.queues) {
    out += fmt::format("queue {} flavors={}\n", queue.name, queue.flavors.size());
    for (const scheduler::FlavorQuota& quota : queue.flavors) {
      const auto& gpu = quota.resources[static_cast<int>(scheduler::Resource::kGpu)];
      out += fmt::format("  quota {} gpu={}\n", quota.flavor, gpu ? gpu->nominal : -1);
    }
  }
  for (const cluster::ObjectRef& queue : view.queues) {
    out += fmt::format("queue object {} v{}\n", queue->raw.key.name, queue->raw.resource_version);
  }
  for (const scheduler::RunningWorkload& r : view.snapshot.running) {
    out += fmt::format(
        "running {} queue={} priority={} flavor={} started={} checkpoint={} "
        "preempted={} reclaimable={}\n",
        r.workload.name, r.workload.queue, r.workload.priority, r.flavor, FormatRfc3339(r.started),
        FormatRfc3339(r.last_checkpoint), r.times_preempted, r.reclaimable);
    for (const scheduler::PodPlacement& pod : r.pods) {
      const scheduler::PodSet& set = r.workload.pod_sets[pod.pod_set];
      out += fmt::format("  pod {} node={} gpus={} cpu={} gpu={}/{}\n", set.name, pod.node,
                         fmt::join(pod.gpus, ","), set.cpu_milli, set.gpu.count, set.gpu.milli);
    }
  }
  for (const scheduler::Workload& w : view.pending) {
    out += fmt::format("pending {} queue={} priority={} nominated={} sets={}\n", w.name, w.queue,
                       w.priority, w.nominated, w.pod_sets.size());
  }
  for (const scheduler::Pending& held : view.held) {
    out += fmt::format("held {} {} {}\n", held.workload, scheduler::PendingTierName(held.tier),
                       held.message);
  }
  for (const auto& [name, objects] : view.workloads) {
    out += fmt::format("objects {} job={}", name,
                       objects.job ? objects.job->raw.resource_version : -1);
    for (const cluster::ObjectRef& pod : objects.pods) {
      out += fmt::format(" {}@{}", pod->raw.key.name, pod->raw.resource_version);
    }
    out += "\n";
  }
  for (const std::string& name : view.preempted_groups) out += "preempted " + name + "\n";
  for (const auto& [key, charge] : view.charges.charged) {
    out += fmt::format("charged {}/{} gpu={}\n", key.first, key.second,
                       charge[scheduler::Resource::kGpu]);
  }
  for (const auto& [queue, count] : view.charges.admitted) {
    out += fmt::format("admitted {} {}\n", queue, count);
  }
  for (const UnfinishedBind& bind : view.unfinished) {
    out += fmt::format("unfinished job={} missing={} unbound={}\n",
                       bind.job ? bind.job->raw.key.name : "", bind.missing.size(),
                       bind.unbound.size());
  }
  const scheduler::CapacityIndex& index = view.snapshot.held->index();
  for (int n = 0; n < index.num_nodes(); ++n) {
    out += fmt::format("free {} cpu={} whole={}", n, index.free_cpu(n), index.free_whole_gpus(n));
    for (size_t g = 0; g < cluster.nodes[n].gpus.size(); ++g) {
      out += fmt::format(" {}", index.gpu(n, static_cast<int>(g)).milli);
    }
    out += "\n";
  }
  return out;
}

// A reader that has followed the cluster through every change reads what one that reads it for
// the first time reads.
void ExpectLikeAFreshRead(ClusterViewReader& reader, TestCluster& cluster,
                          const std::set<std::string>& nominated = {}) {
  ASSERT_TRUE(cluster.cache.Sync().ok());
  ClusterViewReader fresh;
  const std::string followed = Describe(reader.Read(cluster.cache, nominated, cluster.clock.Now()));
  const std::string first = Describe(fresh.Read(cluster.cache, nominated, cluster.clock.Now()));
  EXPECT_EQ(followed, first);
}

template <typename T>
void Update(TestCluster& cluster, const store::ObjectKey& key,
            const std::function<void(T&)>& change) {
  Result<store::Object> raw = cluster.store->Get(key);
  ASSERT_TRUE(raw.has_value());
  Result<api::Object> decoded = cluster::DecodeStoredObject(*raw);
  ASSERT_TRUE(decoded.has_value());
  change(*decoded->As<T>());
  ASSERT_TRUE(cluster.store->Update(cluster::EncodeForStore(*decoded, *raw)).has_value());
}

void UpdateNode(TestCluster& cluster, const std::string& name,
                const std::function<void(api::Node&)>& change) {
  Update<api::Node>(cluster, {"Node", "", name}, change);
}

std::string Job(const std::string& name, int replicas, int gpus, int priority,
                const std::string& queue) {
  return fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {{name: {}, namespace: default}}
spec:
  replicas: {}
  priority: {}
  queue: {}
  resources: {{cpu: "8", memory: 64Gi, gpu: {}}}
  template: {{command: [python, train.py]}}
)",
                     name, replicas, priority, queue, gpus);
}

std::string GangMember(int index) {
  return fmt::format(R"(apiVersion: strata.dev/v1alpha1
kind: Pod
metadata: {{name: member-{}, namespace: default}}
spec:
  restartPolicy: Never
  queue: research
  resources: {{gpu: 2}}
  gang: {{name: trio, minMember: 3}}
  template: {{command: [python, work.py]}}
)",
                     index);
}

std::string Quota() {
  return std::string(R"(apiVersion: strata.dev/v1alpha1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {gpu: h100}}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: research}
spec:
  preemption: {withinQueue: LowerPriority}
  flavors:
    - name: h100
      resources: [{name: gpu, nominal: 16}]
)");
}

TEST(ClusterViewReaderTest, ReadsAfterEveryChangeWhatAFirstReadReads) {
  TestCluster cluster;
  ClusterViewReader reader;
  cluster.AddNode("node-a", 8, "r1");
  cluster.AddNode("node-b", 8, "r1");
  cluster.AddNode("node-c", 4, "r2");
  for (const char* node : {"node-a", "node-b", "node-c"}) {
    UpdateNode(cluster, node, [](api::Node& n) { n.metadata.labels["gpu"] = "h100"; });
  }
  ExpectLikeAFreshRead(reader, cluster);

  cluster.Apply(Quota());
  cluster.Apply(Job("train", 2, 4, 0, "research"));
  cluster.Apply(Job("small", 1, 2, 0, "research"));
  cluster.Apply(GangMember(0));
  cluster.Apply(GangMember(1));
  ExpectLikeAFreshRead(reader, cluster);

  cluster.Reconcile(1);  // the jobs bound, the gang held as incomplete
  ExpectLikeAFreshRead(reader, cluster);
  cluster.Apply(GangMember(2));
  cluster.Reconcile(1);
  cluster.StartBoundPods();
  cluster.Reconcile(1);
  ExpectLikeAFreshRead(reader, cluster);

  // A heartbeat changes the Node, not the scheduler's view of it; a taint does.
  cluster.Heartbeat("node-a");
  ExpectLikeAFreshRead(reader, cluster);
  UpdateNode(cluster, "node-c", [](api::Node& n) {
    n.spec.taints.push_back({"k", "v", "NoSchedule"});
  });
  ExpectLikeAFreshRead(reader, cluster);

  // A higher-priority job preempts within the queue; its victims are nominated and stopped.
  cluster.Apply(Job("urgent", 1, 8, 10, "research"));
  cluster.Reconcile(1);
  ExpectLikeAFreshRead(reader, cluster, {"Job/default/urgent"});
  cluster.StopMarkedPods();
  cluster.Reconcile(2);
  ExpectLikeAFreshRead(reader, cluster);

  // One member of the gang is being stopped as preempted: the adapter stops the rest.
  cluster.UpdatePod("member-1", [](api::Pod& pod) {
    RequestStop(pod, api::kStopPreempted, "preempted by a test");
  });
  ExpectLikeAFreshRead(reader, cluster);
  cluster.Reconcile(1);
  EXPECT_EQ(api::StopRequested(cluster.Pod("member-0")), api::kStopPreempted);
  EXPECT_EQ(api::StopRequested(cluster.Pod("member-2")), api::kStopPreempted);
  ExpectLikeAFreshRead(reader, cluster);

  // The quota's spec changes; its status (written by the scheduler) alone does not.
  Update<api::Queue>(cluster, {"Queue", "", "research"}, [](api::Queue& queue) {
    queue.spec.flavors[0].resources[0].nominal = Quantity::FromUnits(24);
  });
  ExpectLikeAFreshRead(reader, cluster);

  // A pod ends; a node goes away with what ran on it.
  cluster.SetPodPhase("member-0", "Succeeded", 0);
  ExpectLikeAFreshRead(reader, cluster);
  ASSERT_TRUE(cluster.store->Delete({"Node", "", "node-b"}).has_value());
  ExpectLikeAFreshRead(reader, cluster);
  cluster.Reconcile(2);
  ExpectLikeAFreshRead(reader, cluster);
}

TEST(ClusterViewReaderTest, APassAfterOneChangeConvertsOnlyWhatChanged) {
  TestCluster cluster;
  ClusterViewReader reader;
  cluster.AddNode("node-a", 8);
  cluster.Apply(GangMember(0));
  ASSERT_TRUE(cluster.cache.Sync().ok());
  ClusterView first = reader.Read(cluster.cache, {}, cluster.clock.Now());
  const scheduler::Cluster* before = first.snapshot.cluster.get();
  ASSERT_EQ(first.held.size(), 1u);
  EXPECT_EQ(first.held[0].tier, scheduler::PendingTier::kGangIncomplete);

  // A heartbeat leaves the scheduler's cluster as it was: no copy of it, no new nodes.
  cluster.Heartbeat("node-a");
  ASSERT_TRUE(cluster.cache.Sync().ok());
  ClusterView second = reader.Read(cluster.cache, {}, cluster.clock.Now());
  EXPECT_EQ(second.snapshot.cluster.get(), before);
}

}  // namespace
}  // namespace strata::controller
