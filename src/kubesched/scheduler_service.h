#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "kube/leader_election.h"
#include "kubesched/kube_scheduler.h"

namespace strata::kubesched {

struct SchedulerServiceOptions {
  // --kubeconfig; empty: $KUBECONFIG, ~/.kube/config, then the in-cluster service account.
  std::string kubeconfig;
  // The API client's rate limit (kube-scheduler's defaults: 50 / 100).
  double qps = 50;
  int burst = 100;
  // One active scheduler through a coordination.k8s.io/v1 Lease; others stand by.
  bool leader_elect = true;
  // The Lease and client-go's timings; the identity is made at start.
  kube::LeaderElectionConfig election = kube::ElectionFor("kube-system", "strata-scheduler");
  KubeSchedulerOptions scheduler;
};

// `strata up --kubernetes`: strata as the scheduler of a Kubernetes cluster. Connects with the
// kubeconfig, campaigns for the Lease (unless leader election is off) and, while it leads, runs
// a KubeScheduler. Losing the lease stops it for good (as kube-scheduler exits), so that two
// schedulers never act at once for longer than the lease allows.
//
// Start and Stop from one thread; done() from any.
class SchedulerService {
 public:
  // Fails with the kubeconfig's or the client's error. Progress lines go to `out`.
  static Result<std::unique_ptr<SchedulerService>> Start(SchedulerServiceOptions options,
                                                         std::ostream& out);
  ~SchedulerService();

  // Stops scheduling, releases the lease, and returns how the service ended: OK when stopped
  // here, Unavailable when leadership was lost before.
  Status Stop();
  // The service ended by itself (leadership lost, or an error); Stop returns why.
  bool done() const { return done_.load(); }

 private:
  SchedulerService() = default;
  void Campaign();
  void Lead();

  SchedulerServiceOptions options_;
  std::ostream* out_ = nullptr;
  std::string identity_;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<kube::LeaderElector> elector_;
  std::unique_ptr<KubeScheduler> scheduler_;
  std::thread campaign_, scheduling_;
  std::mutex mutex_;
  Status ended_;  // guarded by mutex_
  std::atomic<bool> done_{false};
};

}  // namespace strata::kubesched
