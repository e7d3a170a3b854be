#include "kube/watch.h"

#include "kube/api_errors.h"
#include "kube/https_transport.h"

namespace strata::kube {

using nlohmann::json;

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
  }
  return "UNKNOWN";
}

std::string WatchEvent::ResourceVersion() const {
  if (!object.is_object() || !object.contains("metadata")) return "";
  const json& metadata = object["metadata"];
  if (!metadata.is_object() || !metadata.contains("resourceVersion") ||
      !metadata["resourceVersion"].is_string()) {
    return "";
  }
  return metadata["resourceVersion"].get<std::string>();
}

Result<WatchEvent> DecodeWatchEvent(std::string_view line, std::string_view what) {
  json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  auto malformed = [&](std::string_view why) {
    std::string shown(line.substr(0, 120));
    return Err(InternalError(std::string(what) + ": malformed watch event (" + std::string(why) +
                             "): " + shown + (line.size() > 120 ? "..." : "")));
  };
  if (event.is_discarded()) return malformed("not JSON");
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) {
    return malformed("no type");
  }
  if (!event.contains("object") || !event["object"].is_object()) return malformed("no object");
  std::string type = event["type"].get<std::string>();
  WatchEvent out;
  if (type == "ADDED") {
    out.type = WatchEventType::kAdded;
  } else if (type == "MODIFIED") {
    out.type = WatchEventType::kModified;
  } else if (type == "DELETED") {
    out.type = WatchEventType::kDeleted;
  } else if (type == "BOOKMARK") {
    out.type = WatchEventType::kBookmark;
  } else if (type == "ERROR") {
    return Err(StatusFromWatchError(event["object"], what));
  } else {
    return malformed("unknown type " + type);
  }
  out.object = std::move(event["object"]);
  return out;
}

WatchStream::WatchStream(std::unique_ptr<ResponseStream> response, std::string what)
    : response_(std::move(response)), what_(std::move(what)) {}

WatchStream::~WatchStream() = default;

void WatchStream::Cancel() { response_->Cancel(); }

Result<std::optional<WatchEvent>> WatchStream::Next(Duration timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Result<WatchEvent> event = DecodeWatchEvent(line, what_);
      if (!event) {
        finished_ = event.error();
        return Err(event.error());
      }
      std::string version = event->ResourceVersion();
      if (!version.empty()) last_resource_version_ = version;
      return std::optional<WatchEvent>(std::move(*event));
    }
    if (finished_) {
      if (finished_->ok()) return std::optional<WatchEvent>();
      return Err(*finished_);
    }
    auto now = std::chrono::steady_clock::now();
    Duration left =
        now < deadline ? std::chrono::duration_cast<Duration>(deadline - now) : Duration::zero();
    Result<std::string> piece = response_->Read(left);
    if (!piece) {
      if (piece.error().code() == StatusCode::kDeadlineExceeded) {
        return Err(DeadlineExceededError(what_ + ": no event in time"));
      }
      finished_ = Status(piece.error().code(), what_ + ": " + piece.error().message());
      continue;
    }
    if (piece->empty()) {
      // The server ended the stream. A last line without its newline is still an event.
      if (!pending_.empty()) pending_.push_back('\n');
      finished_ = Status::Ok();
      continue;
    }
    pending_ += *piece;
  }
}

}  // namespace strata::kube
