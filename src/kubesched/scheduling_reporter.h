#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
// after `repeat_interval` bumps the event's count and lastTimestamp instead of a new event. A
// pod already told why it waits is told again (a new message: other counts of nodes, another
// queue use) at most once per the `refresh` its caller gives, as kube-scheduler's backoff paces
// its retries: where thousands of pods wait, their explanations do not crowd out the binds at
// the API server.
//
// `Scheduled` and `Started` events are written by threads of their own, after the bind (or the
// admission) that caused them, as client-go's event broadcaster writes kube-scheduler's: a bind
// never waits for its event, so that where the API server is the bottleneck the binds go
// first. At most kMaxQueuedEvents wait; more are dropped (best effort, as the broadcaster's).
//
// Thread-safe: the scheduler reports from its bind workers. The client and clock must outlive it.
class SchedulingReporter {
 public:
  static constexpr size_t kMaxQueuedEvents = 10000;

  // `component` is the events' source (the scheduler's name, as kube-scheduler's profile name);
  // `event_writers` threads write the queued events.
  SchedulingReporter(kube::Client* client, const Clock& clock, std::string component,
                     Duration repeat_interval, int event_writers = 4);
  // Stops the event writers; events still queued are dropped.
  ~SchedulingReporter();
  SchedulingReporter(const SchedulingReporter&) = delete;
  SchedulingReporter& operator=(const SchedulingReporter&) = delete;

  // `refresh`: zero tells a pod every new reason at once.
  Status Unschedulable(const PodSpec& pod, const std::string& message,
                       Duration refresh = Duration::zero());
  // Queues the Scheduled event.
  void Scheduled(const PodSpec& pod, const std::string& node);
  // Queues a Normal `Started` event on a batch/v1 Job strata admitted through `cluster_queue`
  // and unsuspended, in Kueue's words ("Admitted by clusterQueue NAME").
  void JobAdmitted(const std::string& namespace_name, const std::string& name,
                   const std::string& uid, const std::string& cluster_queue);
  // Events dropped because kMaxQueuedEvents were waiting.
  uint64_t events_dropped() const { return events_dropped_.load(); }
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
  struct QueuedEvent {
    Involved object;
    std::string type, reason, message;
  };
  void Enqueue(QueuedEvent event);
  void WriteQueued();  // an event writer's loop

  kube::Client* const client_;
  const Clock& clock_;
  const std::string component_;
  const Duration repeat_interval_;

  struct Reported {
    std::string condition_message;  // the PodScheduled message last written
    TimePoint condition_written{};  // when
    std::string event_message;
    std::string event_name;
    int64_t count = 0;
    TimePoint last_event{};
  };
  std::mutex mutex_;
  std::map<std::string, Reported> reported_;  // by pod uid; guarded by mutex_

  std::mutex queue_mutex_;
  std::condition_variable queue_wake_;
  std::deque<QueuedEvent> queue_;  // guarded by queue_mutex_
  bool stopping_ = false;          // guarded by queue_mutex_
  std::atomic<uint64_t> events_dropped_{0};
  std::vector<std::thread> writers_;
};

}  // namespace strata::kubesched
