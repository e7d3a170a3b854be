#include "kubesched/scheduling_reporter.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace strata::kubesched {

using nlohmann::json;

SchedulingReporter::SchedulingReporter(kube::Client* client, const Clock& clock,
                                       std::string component, Duration repeat_interval,
                                       int event_writers)
    : client_(client),
      clock_(clock),
      component_(std::move(component)),
      repeat_interval_(repeat_interval) {
  for (int i = 0; i < event_writers; ++i) writers_.emplace_back([this] { WriteQueued(); });
}

SchedulingReporter::~SchedulingReporter() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_wake_.notify_all();
  for (std::thread& writer : writers_) writer.join();
}

void SchedulingReporter::Enqueue(QueuedEvent event) {
  {
    std::lock_guard lock(queue_mutex_);
    if (queue_.size() >= kMaxQueuedEvents) {
      ++events_dropped_;
      return;
    }
    queue_.push_back(std::move(event));
  }
  queue_wake_.notify_one();
}

void SchedulingReporter::WriteQueued() {
  while (true) {
    QueuedEvent event;
    {
      std::unique_lock lock(queue_mutex_);
      queue_wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      event = std::move(queue_.front());
      queue_.pop_front();
    }
    Status written = WriteEvent(event.object, event.type, event.reason, event.message);
    if (!written.ok()) {
      spdlog::warn("strata scheduler: {} event of {} {}/{}: {}", event.reason, event.object.kind,
                   event.object.namespace_name, event.object.name, written.ToString());
    }
  }
}

Status SchedulingReporter::Unschedulable(const PodSpec& pod, const std::string& message,
                                         Duration refresh) {
  bool write_condition;
  TimePoint now = clock_.Now();
  {
    std::lock_guard lock(mutex_);
    Reported& reported = reported_[pod.uid];
    bool stored = pod.scheduled_status == "False" && pod.scheduled_message == message;
    write_condition = !stored && reported.condition_message != message;
    // Told already, and recently: the news waits for a later cycle.
    bool told = refresh > Duration::zero() &&
                (pod.scheduled_status == "False" || !reported.condition_message.empty());
    if (write_condition && told && reported.condition_written != TimePoint{} &&
        now - reported.condition_written < refresh) {
      return Status::Ok();
    }
    if (told && reported.condition_written == TimePoint{} && write_condition &&
        pod.scheduled_status == "False") {
      // Told by an earlier run of the scheduler: count from now.
      reported.condition_written = now;
      return Status::Ok();
    }
    if (write_condition) {
      reported.condition_message = message;
      reported.condition_written = now;
    }
  }
  if (write_condition) {
    json condition = {{"type", "PodScheduled"},    {"status", "False"},
                      {"reason", "Unschedulable"}, {"message", message},
                      {"lastProbeTime", nullptr},  {"lastTransitionTime", FormatRfc3339(now)}};
    kube::PatchOptions status;
    status.subresource = "status";
    Result<json> patched = client_->Patch(
        kube::resources::kPods, pod.namespace_name, pod.name, kube::PatchType::kStrategicMerge,
        {{"status", {{"conditions", json::array({condition})}}}}, status);
    if (!patched) {
      std::lock_guard lock(mutex_);
      reported_[pod.uid].condition_message.clear();
      if (patched.error().code() != StatusCode::kNotFound) return patched.error();
    }
  }
  return WriteEvent(PodObject(pod), "Warning", "FailedScheduling", message);
}

void SchedulingReporter::Scheduled(const PodSpec& pod, const std::string& node) {
  Forget(pod.uid);
  Enqueue({PodObject(pod), "Normal", "Scheduled",
           fmt::format("Successfully assigned {}/{} to {}", pod.namespace_name, pod.name, node)});
}

void SchedulingReporter::JobAdmitted(const std::string& namespace_name, const std::string& name,
                                     const std::string& uid, const std::string& cluster_queue) {
  Enqueue({{"batch/v1", "Job", namespace_name, name, uid},
           "Normal",
           "Started",
           "Admitted by clusterQueue " + cluster_queue});
}

void SchedulingReporter::Forget(const std::string& uid) {
  std::lock_guard lock(mutex_);
  reported_.erase(uid);
}

Status SchedulingReporter::WriteEvent(const Involved& object, const std::string& type,
                                      const std::string& reason, const std::string& message) {
  TimePoint now = clock_.Now();
  std::string existing;
  int64_t count = 1;
  {
    std::lock_guard lock(mutex_);
    Reported& reported = reported_[object.uid];
    if (reason == "FailedScheduling") {
      if (reported.event_message == message && !reported.event_name.empty()) {
        if (now - reported.last_event < repeat_interval_) return Status::Ok();
        existing = reported.event_name;
        count = ++reported.count;
      } else {
        reported.event_message = message;
        reported.count = 1;
      }
      reported.last_event = now;
    }
  }
  std::string stamp = FormatRfc3339(now);
  if (!existing.empty()) {
    Result<json> patched = client_->Patch(
        kube::resources::kEvents, object.namespace_name, existing, kube::PatchType::kMerge,
        {{"count", count}, {"lastTimestamp", stamp}, {"message", message}});
    if (patched || patched.error().code() != StatusCode::kNotFound) {
      return patched ? Status::Ok() : patched.error();
    }
  }
  // client-go's naming: the object's name and the time in hex nanoseconds.
  std::string name = fmt::format(
      "{}.{:x}", object.name,
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}, {"namespace", object.namespace_name}}},
                {"involvedObject",
                 {{"apiVersion", object.api_version},
                  {"kind", object.kind},
                  {"namespace", object.namespace_name},
                  {"name", object.name},
                  {"uid", object.uid}}},
                {"reason", reason},
                {"message", message},
                {"type", type},
                {"source", {{"component", component_}}},
                {"reportingComponent", component_},
                {"firstTimestamp", stamp},
                {"lastTimestamp", stamp},
                {"count", count}};
  Result<json> created = client_->Create(kube::resources::kEvents, object.namespace_name, event);
  if (!created) return created.error();
  if (reason == "FailedScheduling") {
    std::lock_guard lock(mutex_);
    reported_[object.uid].event_name = name;
  }
  return Status::Ok();
}

}  // namespace strata::kubesched
