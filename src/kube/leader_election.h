#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"

namespace strata::kube {

// client-go's leaderelection defaults (as kube-scheduler and kube-controller-manager use them).
struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per candidate: host name plus a random suffix, a pod name
  // How long a candidate waits, after it last saw the lease change, before it takes the lease
  // from a holder that stopped renewing.
  Duration lease_duration = std::chrono::seconds(15);
  // How long the leader keeps trying to renew before it gives leadership up.
  Duration renew_deadline = std::chrono::seconds(10);
  // How often candidates try to acquire and the leader renews.
  Duration retry_period = std::chrono::seconds(2);
  // When Run is stopped while leading, the lease is released, so a successor need not wait.
  bool release_on_stop = true;
};

// The config of the Lease `lease_name` in `lease_namespace`, with client-go's timings (the
// identity is the candidate's to set).
LeaderElectionConfig ElectionFor(std::string lease_namespace, std::string lease_name);

// The RBAC rules on a candidate's Lease, for a Role in its namespace: create (which RBAC cannot
// narrow by name), and get and update of that one Lease.
std::vector<nlohmann::json> LeaderElectionRules(const std::string& lease_name);

// A candidate's identity for LeaderElectionConfig: this host's name and a random suffix
// ("gpu-box-3_1f2e3d4c"), unique to the process.
std::string CandidateIdentity();

// Invoked on Run's thread; each must return promptly (start the leader's work elsewhere).
struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;  // the holder changed
};

// Leader election over a coordination.k8s.io/v1 Lease, as client-go's LeaderElector: the
// holder renews spec.renewTime every retry_period; a candidate takes the lease over once it
// has seen no change to it for lease_duration, measured on its own clock (never by comparing
// its clock with the holder's), and increments spec.leaseTransitions. Every write is an update
// with the resourceVersion that was read, so of two candidates racing, one wins and the other
// gets Conflict. Like client-go's, this is no fencing: a paused leader may act for up to
// lease_duration after a successor took over.
//
// The clock is injected: tests drive TryAcquireOrRenew with a FakeClock against a real API
// server. Owned by the candidate; TryAcquireOrRenew, Release and Run are called from one thread
// at a time; Stop, IsLeader and leader from any. The client must outlive it.
class LeaderElector {
 public:
  LeaderElector(Client* client, LeaderElectionConfig config, const Clock* clock);

  // One round: reads the lease (creating it, held by this candidate, when it does not exist),
  // then renews it if this candidate holds it, or takes it if it is free or has not changed for
  // lease_duration. Returns whether this candidate holds the lease afterwards; false as well
  // when another candidate's write won the race (Conflict, AlreadyExists). Other API failures
  // are returned as errors (the lease is then not held as far as this round knows).
  Result<bool> TryAcquireOrRenew();

  // Gives the lease up if this candidate holds it: holder cleared, leaseDurationSeconds 1, so
  // that the next candidate takes it at its next try.
  Status Release();

  // Campaigns until stopped: tries to acquire every retry_period (with jitter); once leading,
  // calls on_started_leading and renews every retry_period. Returns OK after Stop (releasing the
  // lease if release_on_stop, then on_stopped_leading when it was leading), or Unavailable once
  // leadership is lost: another holder was seen, or no renewal succeeded for renew_deadline
  // (after on_stopped_leading).
  Status Run(const LeaderCallbacks& callbacks);

  // Makes Run return at its next wait. Thread-safe.
  void Stop();

  // Whether the last lease this candidate saw names it as holder.
  bool IsLeader() const;
  // The holder the last lease seen names ("" when free or before the first read).
  std::string leader() const;

 private:
  // Waits `duration` of real time unless stopped; false when stopped.
  bool Wait(Duration duration);
  bool Stopped() const;
  void Observe(const nlohmann::json& spec, TimePoint now);
  nlohmann::json LeaseObject(const nlohmann::json& spec) const;

  Client* const client_;
  const LeaderElectionConfig config_;
  const Clock* const clock_;
  std::mt19937 random_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;                                     // guarded by mutex_
  nlohmann::json observed_spec_ = nlohmann::json::object();  // guarded by mutex_
  TimePoint observed_time_{};                                // guarded by mutex_
};

}  // namespace strata::kube
