#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace strata::kube {

class ResponseStream;

// What a watch event says happened. An ERROR event is not a type: it becomes the Status that
// WatchStream::Next returns (410 -> Expired).
enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark };

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK".
std::string_view WatchEventTypeName(WatchEventType type);

// One event of a watch. For kDeleted, `object` is the object's last state; for kBookmark,
// an object of the watched kind holding only metadata.resourceVersion (and, for the end of
// the initial events, the annotation k8s.io/initial-events-end).
struct WatchEvent {
  WatchEventType type;
  nlohmann::json object;

  // object.metadata.resourceVersion, or "" when absent.
  std::string ResourceVersion() const;
};

// Decodes one line of a watch stream: {"type": "...", "object": {...}}. An ERROR event
// returns its Status object mapped by code (StatusFromWatchError; 410 -> Expired); a line that
// is not a watch event returns Internal naming `what` and the problem.
Result<WatchEvent> DecodeWatchEvent(std::string_view line, std::string_view what);

// The events of one watch request, one JSON object per line, as the API server streams them.
// Created by Client::Watch; owned by the caller; Next is called from one thread at a time,
// Cancel from any. A stream ends when the server closes it (its timeoutSeconds, a restart):
// watch again from last_resource_version(). Reflector does all of that.
class WatchStream {
 public:
  // `what` names the watch in messages: "watch pods in default".
  WatchStream(std::unique_ptr<ResponseStream> response, std::string what);
  ~WatchStream();
  WatchStream(const WatchStream&) = delete;
  WatchStream& operator=(const WatchStream&) = delete;

  // Returns the next event, waiting up to `timeout` for it; nullopt when the server ended the
  // stream. Errors: DeadlineExceeded when none arrived in time (call again); Expired when the
  // version watched from is no longer available (list again); Cancelled after Cancel;
  // Unavailable when the connection broke; the mapped Status of any other ERROR event. After
  // an error other than DeadlineExceeded, or after nullopt, the stream is finished.
  Result<std::optional<WatchEvent>> Next(Duration timeout);

  // Makes a Next in progress, and every later one, return Cancelled. Thread-safe; must not race
  // with the stream's destruction.
  void Cancel();

  // The resourceVersion of the last event Next returned (bookmarks included); "" before any.
  const std::string& last_resource_version() const { return last_resource_version_; }

 private:
  std::unique_ptr<ResponseStream> response_;
  std::string what_;
  std::string pending_;  // bytes after the last complete line
  std::string last_resource_version_;
  std::optional<Status> finished_;  // set once the stream can return nothing more
};

}  // namespace strata::kube
