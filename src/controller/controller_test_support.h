#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/event.h"
#include "api/pod.h"
#include "cluster/cache.h"
#include "common/clock.h"
#include "controller/job_controller.h"
#include "controller/node_controller.h"
#include "controller/scheduler_loop.h"
#include "store/store.h"

namespace strata::controller::testing {

// A control plane in memory for the controller tests: a memory store and its cache, a
// FakeClock, the scheduler adapter, the job controller and the node controller, plus the node
// agent's side of the contract done by hand (start bound pods, stop pods marked for stopping,
// report exits). Single-threaded, like the loops.
class TestCluster {
 public:
  TestCluster();

  // Stores every object of a YAML manifest (native or compatible kinds). Fails the test on error.
  void Apply(const std::string& yaml);
  // A Ready node with `gpus` GPUs of `model` (80Gi each, one NVLink island), 128 CPUs, 1Ti,
  // heartbeating now, in `rack` when given.
  void AddNode(const std::string& name, int gpus, const std::string& rack = "",
               const std::string& model = "H100-80GB");

  // One pass of each loop, in the order scheduler, jobs, nodes; repeated `passes` times.
  void Reconcile(int passes = 2);

  // The agent: bound pods not yet running start (phase Running).
  void StartBoundPods();
  // The agent: pods marked for stopping end (Failed, exit code 143, the SIGTERM exit).
  void StopMarkedPods();
  // The agent: `pod` (namespace "default" unless given as "ns/name") ends or changes phase.
  void SetPodPhase(const std::string& pod, const std::string& phase, int exit_code);
  // The agent: `pod` reports a checkpoint written at `when`.
  void ReportCheckpoint(const std::string& pod, TimePoint when);
  // The agent: heartbeat of `node` now.
  void Heartbeat(const std::string& node);
  // Advances the clock by `d`, every node's agent heartbeating at the end.
  void AdvanceWithHeartbeats(Duration d);

  std::vector<api::Pod> Pods() const;
  // Pods of job `name` in `namespace_name`.
  std::vector<api::Pod> JobPods(const std::string& name,
                                const std::string& namespace_name = "default") const;
  api::JobStatus Job(const std::string& name, const std::string& namespace_name = "default") const;
  api::Pod Pod(const std::string& name, const std::string& namespace_name = "default") const;
  std::vector<api::Event> Events() const;
  // GPUs (whole or shared) held by non-terminal bound pods.
  int GpusHeld() const;
  // GPUs held on `node`.
  int GpusHeldOn(const std::string& node) const;

  FakeClock clock;
  std::unique_ptr<store::Store> store;
  cluster::Cache cache;
  SchedulerLoop scheduler;
  JobController jobs;
  NodeController nodes;

  // Applies `change` to the stored `pod` ("ns/name", or a name in "default").
  void UpdatePod(const std::string& pod, const std::function<void(api::Pod&)>& change);
};

}  // namespace strata::controller::testing
