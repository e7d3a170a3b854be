#include "kube/reflector.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace strata::kube {

using SteadyClock = std::chrono::steady_clock;

namespace {

// Failures that the same request will meet again: handed to the consumer, not hidden.
bool IsPermanent(const Status& status) {
  switch (status.code()) {
    case StatusCode::kPermissionDenied:
    case StatusCode::kUnauthenticated:
    case StatusCode::kNotFound:
    case StatusCode::kInvalidArgument:
      return true;
    default:
      return false;
  }
}

// Watch failures after which watching again from the same version is right; after any other
// the reflector lists again (client-go's isWatchErrorRetriable).
bool WatchAgain(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded ||
         status.code() == StatusCode::kResourceExhausted;
}

// How long past its own timeout a silent watch is trusted before it is dropped: the server
// ends a watch at its timeout; one that says nothing for longer is a dead connection.
constexpr Duration kWatchGrace = std::chrono::seconds(30);

}  // namespace

std::string_view DeltaTypeName(DeltaType type) {
  switch (type) {
    case DeltaType::kReplace:
      return "Replace";
    case DeltaType::kAdded:
      return "Added";
    case DeltaType::kModified:
      return "Modified";
    case DeltaType::kDeleted:
      return "Deleted";
    case DeltaType::kBookmark:
      return "Bookmark";
  }
  return "Unknown";
}

Reflector::Reflector(Client* client, GroupVersionResource resource, ReflectorOptions options)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      random_(std::random_device{}()),
      need_list_(options_.resume_resource_version.empty()),
      resource_version_(options_.resume_resource_version) {}

Reflector::~Reflector() = default;

void Reflector::Stop() {
  std::lock_guard lock(mutex_);
  stopped_ = true;
  if (stream_) stream_->Cancel();
  wake_.notify_all();
}

bool Reflector::Stopped() const {
  std::lock_guard lock(mutex_);
  return stopped_;
}

std::string Reflector::resource_version() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

Reflector::Stats Reflector::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

bool Reflector::WaitUntil(SteadyClock::time_point until) {
  std::unique_lock lock(mutex_);
  wake_.wait_until(lock, until, [this] { return stopped_; });
  return !stopped_;
}

void Reflector::BackOff() {
  backoff_ = backoff_ == Duration::zero() ? options_.initial_backoff
                                          : std::min(backoff_ * 2, options_.max_backoff);
  // Up to 100% jitter on top, as client-go's, so that watchers of one server spread out.
  std::uniform_real_distribution<double> jitter(1.0, 2.0);
  auto wait = std::chrono::duration_cast<Duration>(backoff_ * jitter(random_));
  retry_at_ = SteadyClock::now() + std::min<Duration>(wait, options_.max_backoff);
  std::lock_guard lock(mutex_);
  ++stats_.failures;
}

Result<Delta> Reflector::Next(Duration timeout) {
  auto deadline = SteadyClock::now() + timeout;
  auto cancelled = [this] {
    return Err(CancelledError("reflector of " + resource_.ToString() + " was stopped"));
  };
  while (true) {
    if (Stopped()) return cancelled();
    auto now = SteadyClock::now();
    if (now < retry_at_) {
      if (!WaitUntil(std::min(retry_at_, deadline))) return cancelled();
      if (SteadyClock::now() >= deadline && SteadyClock::now() < retry_at_) {
        return Err(DeadlineExceededError(resource_.ToString() + ": backing off after a failure"));
      }
      continue;
    }

    if (need_list_) {
      ListOptions list_options;
      list_options.label_selector = options_.label_selector;
      list_options.field_selector = options_.field_selector;
      Result<ObjectList> list =
          client_->ListAll(resource_, options_.namespace_name, list_options, options_.page_size);
      if (!list) {
        BackOff();
        if (IsPermanent(list.error())) return Err(list.error());
        spdlog::warn("reflector: list of {} failed (retrying): {}", resource_.ToString(),
                     list.error().ToString());
        continue;
      }
      need_list_ = false;
      backoff_ = Duration::zero();
      std::lock_guard lock(mutex_);
      resource_version_ = list->resource_version;
      ++stats_.lists;
      Delta replace{DeltaType::kReplace, std::move(list->items), nullptr, list->resource_version};
      return replace;
    }

    if (!stream_) {
      std::uniform_int_distribution<int64_t> spread(0, options_.min_watch_timeout.count());
      Duration watch_timeout = options_.min_watch_timeout + Duration(spread(random_));
      WatchOptions watch_options{.resource_version = resource_version(),
                                 .label_selector = options_.label_selector,
                                 .field_selector = options_.field_selector,
                                 .allow_bookmarks = true,
                                 .timeout = watch_timeout};
      Result<std::unique_ptr<WatchStream>> opened =
          client_->Watch(resource_, options_.namespace_name, watch_options);
      if (!opened) {
        if (opened.error().code() == StatusCode::kExpired) {
          need_list_ = true;
          std::lock_guard lock(mutex_);
          ++stats_.expired;
          continue;
        }
        BackOff();
        if (IsPermanent(opened.error())) return Err(opened.error());
        spdlog::warn("reflector: watch of {} failed (retrying): {}", resource_.ToString(),
                     opened.error().ToString());
        continue;
      }
      std::lock_guard lock(mutex_);
      if (stopped_) return cancelled();
      stream_ = std::move(*opened);
      stream_deadline_ = SteadyClock::now() + watch_timeout + kWatchGrace;
      ++stats_.watches;
    }

    now = SteadyClock::now();
    Duration left =
        now < deadline ? std::chrono::duration_cast<Duration>(deadline - now) : Duration::zero();
    Result<std::optional<WatchEvent>> event = stream_->Next(left);
    if (!event && event.error().code() == StatusCode::kDeadlineExceeded) {
      if (SteadyClock::now() >= stream_deadline_) {
        spdlog::warn("reflector: watch of {} went silent; reconnecting", resource_.ToString());
        std::lock_guard lock(mutex_);
        stream_.reset();
        continue;
      }
      return Err(event.error());
    }
    if (!event || !event->has_value()) {
      {
        std::lock_guard lock(mutex_);
        stream_.reset();
      }
      if (!event) {
        const Status& error = event.error();
        if (error.code() == StatusCode::kCancelled && Stopped()) return cancelled();
        if (error.code() == StatusCode::kExpired) {
          need_list_ = true;
          std::lock_guard lock(mutex_);
          ++stats_.expired;
          continue;
        }
        BackOff();
        if (!WatchAgain(error)) need_list_ = true;
        spdlog::warn("reflector: watch of {} failed ({}): {}", resource_.ToString(),
                     need_list_ ? "listing again" : "watching again", error.ToString());
      }
      continue;  // the server ended the watch: watch again from the last version
    }
    WatchEvent& watched = **event;
    backoff_ = Duration::zero();
    std::string version = watched.ResourceVersion();
    {
      std::lock_guard lock(mutex_);
      if (!version.empty()) resource_version_ = version;
      version = resource_version_;
    }
    DeltaType type = watched.type == WatchEventType::kAdded      ? DeltaType::kAdded
                     : watched.type == WatchEventType::kModified ? DeltaType::kModified
                     : watched.type == WatchEventType::kDeleted  ? DeltaType::kDeleted
                                                                 : DeltaType::kBookmark;
    return Delta{type, {}, std::move(watched.object), std::move(version)};
  }
}

}  // namespace strata::kube
