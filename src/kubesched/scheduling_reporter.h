#pragma once

#include <map>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "kubesched/pod_spec.h"

namespace strata::kubesched {

// Says what the scheduler decided where Kubernetes users look, as kube-scheduler does: a bound
// pod gets a Normal `Scheduled` event ("Successfully assigned ns/pod to node"); a pod that
// cannot be placed gets the condition PodScheduled=False with reason Unschedulable and the
// message, and a Warning `FailedScheduling` event. `kubectl describe pod` shows both.
//
// Writes only what changed: the condition when its message differs from the stored one (or the
// one this reporter last wrote), and an event once per pod and message; the same message again
// after `repeat_interval` bumps the event's count and lastTimestamp instead of a new event.
//
// Thread-safe: the scheduler reports from its bind workers. The client and clock must outlive it.
class SchedulingReporter {
 public:
  // `component` is the events' source (the scheduler's name, as kube-scheduler's profile name).
  SchedulingReporter(kube::Client* client, const Clock& clock, std::string component,
                     Duration repeat_interval);

  Status Unschedulable(const PodSpec& pod, const std::string& message);
  Status Scheduled(const PodSpec& pod, const std::string& node);
  // A Normal `Started` event on a batch/v1 Job strata admitted through `cluster_queue` and
  // unsuspended, in Kueue's words ("Admitted by clusterQueue NAME").
  Status JobAdmitted(const std::string& namespace_name, const std::string& name,
                     const std::string& uid, const std::string& cluster_queue);
  // Drops what is remembered of a pod that is gone or bound.
  void Forget(const std::string& uid);

 private:
  // The object an event is about.
  struct Involved {
    std::string api_version, kind, namespace_name, name, uid;
  };
  static Involved PodObject(const PodSpec& pod) {
    return {"v1", "Pod", pod.namespace_name, pod.name, pod.uid};
  }
  Status WriteEvent(const Involved& object, const std::string& type, const std::string& reason,
                    const std::string& message);

  kube::Client* const client_;
  const Clock& clock_;
  const std::string component_;
  const Duration repeat_interval_;

  struct Reported {
    std::string condition_message;  // the PodScheduled message last written
    std::string event_message;
    std::string event_name;
    int64_t count = 0;
    TimePoint last_event{};
  };
  std::mutex mutex_;
  std::map<std::string, Reported> reported_;  // by pod uid; guarded by mutex_
};

}  // namespace strata::kubesched
