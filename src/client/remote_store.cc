#include "client/remote_store.h"

#include <condition_variable>
#include <ctime>
#include <deque>
#include <thread>

#include "api/node_lease.h"
#include "api/resource_catalog.h"

namespace strata::client {
namespace {

using Json = nlohmann::json;

Result<const api::ResourceType*> ServedType(std::string_view kind) {
  const api::ResourceType* type = api::FindResourceTypeByKind(kind);
  if (type == nullptr) {
    return Err(InvalidArgumentError("kind \"" + std::string(kind) + "\" is not served by the API"));
  }
  return type;
}

std::string ObjectPath(const api::ResourceType& type, const store::ObjectKey& key) {
  return type.Path(type.namespaced ? key.namespace_name : "", key.name);
}

// A watch over a series of bounded watch requests on a thread of its own (see RemoteStore).
class RemoteWatcher final : public store::Watcher {
 public:
  RemoteWatcher(std::unique_ptr<ApiClient> client, std::string collection, std::string kind,
                store::LabelSelector labels, int64_t from_version, size_t buffer_limit,
                std::chrono::seconds request_timeout)
      : client_(std::move(client)),
        collection_(std::move(collection)),
        kind_(std::move(kind)),
        labels_(std::move(labels)),
        buffer_limit_(buffer_limit),
        request_timeout_(request_timeout),
        progress_(from_version),
        delivered_(from_version) {
    thread_ = std::thread([this] { Run(); });
  }

  ~RemoteWatcher() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  Result<store::WatchEvent> Next(Duration timeout) override {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, timeout, [this] { return !events_.empty() || !error_.ok(); });
    return Pop();
  }

  Result<std::optional<store::WatchEvent>> TryNext() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (events_.empty() && error_.ok()) return std::optional<store::WatchEvent>();
    ASSIGN_OR_RETURN(store::WatchEvent event, Pop());
    return std::optional<store::WatchEvent>(std::move(event));
  }

  void SetNotify(std::function<void()> notify) override {
    std::lock_guard<std::mutex> notify_lock(notify_mutex_);
    notify_ = std::move(notify);
    bool ready;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready = !events_.empty() || !error_.ok();
    }
    if (ready && notify_) notify_();
  }

  int64_t ProgressVersion() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return delivered_;
  }

 private:
  // REQUIRES: mutex_ held.
  Result<store::WatchEvent> Pop() {
    if (events_.empty()) {
      if (!error_.ok()) return Err(error_);
      return Err(DeadlineExceededError("no watch event arrived in time"));
    }
    store::WatchEvent event = std::move(events_.front());
    events_.pop_front();
    delivered_ = event.object.resource_version;
    return event;
  }

  void Notify() {
    std::lock_guard<std::mutex> lock(notify_mutex_);
    if (notify_) notify_();
  }

  // Records the end of the watch; events buffered before it are still delivered.
  void Finish(Status error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_.ok()) error_ = std::move(error);
    }
    changed_.notify_all();
    Notify();
  }

  // Handles one line of the stream; false when the watch is over.
  bool Handle(const Json& line) {
    std::string type = line.value("type", "");
    const Json& object = line.contains("object") ? line["object"] : Json();
    if (type == "ERROR") {
      Finish(object.is_object() && object.value("code", 0) == 410
                 ? ExpiredError("the watch's history is gone; list again")
                 : InternalError("watch error: " + object.dump()));
      return false;
    }
    std::string version =
        object.is_object()
            ? object.value(Json::json_pointer("/metadata/resourceVersion"), std::string())
            : "";
    if (type == "BOOKMARK") {
      Result<int64_t> parsed = store::ParseResourceVersion(version);
      std::lock_guard<std::mutex> lock(mutex_);
      if (parsed && events_.empty()) delivered_ = std::max(delivered_, *parsed);
      if (parsed) progress_ = std::max(progress_, *parsed);
      return true;
    }
    store::WatchEventType event_type;
    if (type == "ADDED") {
      event_type = store::WatchEventType::kAdded;
    } else if (type == "MODIFIED") {
      event_type = store::WatchEventType::kModified;
    } else if (type == "DELETED") {
      event_type = store::WatchEventType::kDeleted;
    } else {
      Finish(InternalError("watch event of unknown type \"" + type + "\""));
      return false;
    }
    Result<store::Object> parsed = store::ObjectFromBody(kind_, object);
    if (!parsed) {
      Finish(parsed.error());
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      progress_ = std::max(progress_, parsed->resource_version);
      if (!labels_.Matches(parsed->labels)) return true;
      if (events_.size() >= buffer_limit_) {
        events_.clear();
        error_ = ExpiredError("the watcher fell more than " + std::to_string(buffer_limit_) +
                              " events behind");
      } else {
        events_.push_back({event_type, std::move(*parsed)});
      }
    }
    changed_.notify_all();
    Notify();
    return true;
  }

  void Run() {
    while (true) {
      std::string target;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_ || !error_.ok()) return;
        target = collection_ + (collection_.find('?') == std::string::npos ? "?" : "&") +
                 "watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                 std::to_string(request_timeout_.count()) +
                 "&resourceVersion=" + std::to_string(progress_);
      }
      bool over = false;
      Status status = client_->Watch(target, [&](const Json& line) {
        if (!Handle(line)) over = true;
        std::lock_guard<std::mutex> lock(mutex_);
        return !over && !stopping_;
      });
      if (over) return;
      if (status.code() == StatusCode::kExpired || status.code() == StatusCode::kNotFound ||
          status.code() == StatusCode::kPermissionDenied ||
          status.code() == StatusCode::kUnauthenticated ||
          status.code() == StatusCode::kInvalidArgument) {
        Finish(status);
        return;
      }
      if (!status.ok()) {
        // The server is away: try again in a moment, unless stopped meanwhile.
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
      }
    }
  }

  const std::unique_ptr<ApiClient> client_;
  const std::string collection_;
  const std::string kind_;
  const store::LabelSelector labels_;
  const size_t buffer_limit_;
  const std::chrono::seconds request_timeout_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<store::WatchEvent> events_;
  Status error_;
  int64_t progress_;   // the version the next request resumes from
  int64_t delivered_;  // ProgressVersion
  bool stopping_ = false;

  std::mutex notify_mutex_;  // guards notify_; never held with mutex_ while calling out
  std::function<void()> notify_;
  std::thread thread_;
};

}  // namespace

Result<std::unique_ptr<RemoteStore>> RemoteStore::Create(RemoteStoreOptions options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ApiClient> client,
                   ApiClient::Create(options.server, options.token));
  return std::unique_ptr<RemoteStore>(new RemoteStore(std::move(options), std::move(client)));
}

RemoteStore::RemoteStore(RemoteStoreOptions options, std::unique_ptr<ApiClient> client)
    : options_(std::move(options)), client_(std::move(client)) {}

RemoteStore::~RemoteStore() = default;

void RemoteStore::SawVersion(int64_t version) const {
  int64_t seen = version_.load();
  while (version > seen && !version_.compare_exchange_weak(seen, version)) {
  }
}

Result<store::Object> RemoteStore::FromJson(std::string_view kind, const Json& body) const {
  ASSIGN_OR_RETURN(store::Object object, store::ObjectFromBody(kind, body));
  SawVersion(object.resource_version);
  return object;
}

Result<store::Object> RemoteStore::Get(const store::ObjectKey& key) const {
  ASSIGN_OR_RETURN(const api::ResourceType* type, ServedType(key.kind));
  Result<Json> body;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body = client_->Get(ObjectPath(*type, key));
  }
  if (!body) return Err(body.error());
  return FromJson(key.kind, *body);
}

Status RemoteStore::RenewNodeLease(const std::string& node_name, TimePoint now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Result<Json> renewed = client_->Call("PUT", api::NodeLeasePath(node_name),
                                       api::NodeLeaseJson(node_name, now), "application/json");
  return renewed ? Status::Ok() : renewed.error();
}

Result<std::string> RemoteStore::CollectionTarget(const store::Selection& selection) const {
  ASSIGN_OR_RETURN(const api::ResourceType* type, ServedType(selection.kind));
  std::string path = type->Path(type->namespaced ? selection.namespace_name.value_or("") : "", "");
  if (options_.node_name.empty()) return path;
  if (type->kind == "Pod") return path + "?fieldSelector=spec.nodeName%3D" + options_.node_name;
  if (type->kind == "Node") return path + "?fieldSelector=metadata.name%3D" + options_.node_name;
  return path;
}

Result<store::ListResult> RemoteStore::List(const store::Selection& selection) const {
  if (selection.kind.empty()) return Err(InvalidArgumentError("kind: must not be empty"));
  ASSIGN_OR_RETURN(std::string target, CollectionTarget(selection));
  Result<Json> listed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    listed = client_->Get(target);
  }
  if (!listed) return Err(listed.error());
  store::ListResult result;
  ASSIGN_OR_RETURN(result.resource_version,
                   store::ParseResourceVersion(listed->value(
                       Json::json_pointer("/metadata/resourceVersion"), std::string("0"))));
  SawVersion(result.resource_version);
  for (const Json& item : listed->value("items", Json::array())) {
    ASSIGN_OR_RETURN(store::Object object, FromJson(selection.kind, item));
    if (selection.labels.Matches(object.labels)) result.items.push_back(std::move(object));
  }
  return result;
}

Result<std::vector<store::Object>> RemoteStore::Apply(std::vector<store::Write> writes) {
  if (writes.size() != 1) {
    return Err(InvalidArgumentError("a remote store applies exactly one write at a time (got " +
                                    std::to_string(writes.size()) +
                                    "); the REST API has no transaction over single objects"));
  }
  ASSIGN_OR_RETURN(store::Object written, ApplyOne(std::move(writes[0])));
  return std::vector<store::Object>{std::move(written)};
}

Result<store::Object> RemoteStore::ApplyOne(store::Write write) {
  store::Object& object = write.object;
  RETURN_IF_ERROR(store::ValidateObject(object));
  ASSIGN_OR_RETURN(const api::ResourceType* type, ServedType(object.key.kind));
  if (write.op == store::WriteOp::kUpsert) {
    Result<store::Object> current = Get(object.key);
    if (!current && current.error().code() != StatusCode::kNotFound) return Err(current.error());
    if (!current && object.resource_version != 0) {
      return Err(ConflictError(object.key.Describe() + " does not exist"));
    }
    write.op = current ? store::WriteOp::kUpdate : store::WriteOp::kCreate;
  }
  std::string path = ObjectPath(*type, object.key);
  Result<Json> answer;
  if (write.op == store::WriteOp::kDelete) {
    std::string target =
        path + (object.resource_version == 0
                    ? ""
                    : "?resourceVersion=" + std::to_string(object.resource_version));
    std::lock_guard<std::mutex> lock(mutex_);
    answer = client_->Call("DELETE", target);
  } else {
    store::Object stamped = object;
    store::StampMetadata(&stamped);
    Json& metadata = stamped.body["metadata"];
    if (object.resource_version == 0) metadata.erase("resourceVersion");
    metadata.erase("uid");
    metadata.erase("creationTimestamp");
    if (write.op == store::WriteOp::kCreate) {
      std::lock_guard<std::mutex> lock(mutex_);
      answer =
          client_->Call("POST", type->Path(type->namespaced ? object.key.namespace_name : "", ""),
                        stamped.body.dump(), "application/json");
    } else {
      bool status_only = type->kind == "Pod" || type->kind == "Node";
      std::lock_guard<std::mutex> lock(mutex_);
      answer = client_->Call("PUT", status_only ? path + "/status" : path, stamped.body.dump(),
                             "application/json");
    }
  }
  if (!answer) return Err(answer.error());
  return FromJson(object.key.kind, *answer);
}

Result<std::unique_ptr<store::Watcher>> RemoteStore::Watch(const store::WatchOptions& options) {
  if (options.selection.kind.empty()) {
    return Err(InvalidArgumentError("kind: a remote watch covers one kind"));
  }
  ASSIGN_OR_RETURN(std::string target, CollectionTarget(options.selection));
  int64_t from = 0;
  if (options.from_version) {
    if (*options.from_version < 0) {
      return Err(InvalidArgumentError("from_version: must not be negative"));
    }
    from = *options.from_version;
  } else {
    // "From now on": the version of a list of the same selection.
    ASSIGN_OR_RETURN(store::ListResult listed, List(options.selection));
    from = listed.resource_version;
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ApiClient> client,
                   ApiClient::Create(options_.server, options_.token));
  return std::unique_ptr<store::Watcher>(new RemoteWatcher(
      std::move(client), std::move(target), options.selection.kind, options.selection.labels, from,
      options.buffer_limit, options_.watch_request_timeout));
}

}  // namespace strata::client
