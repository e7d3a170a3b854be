#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "client/api_client.h"
#include "common/clock.h"
#include "store/store.h"

namespace strata::client {

struct RemoteStoreOptions {
  // http://HOST:PORT of the control plane.
  std::string server;
  // The bearer token: a node credential (NodeAccess) for `strata agent`.
  std::string token;
  // When set, lists and watches are scoped as a node credential requires: pods with
  // fieldSelector spec.nodeName=NODE, nodes with metadata.name=NODE.
  std::string node_name;
  // A watch is one request of at most this long, then the next one resumes from the last
  // version seen; it is also how long a watcher's destruction may wait for its request to end.
  std::chrono::seconds watch_request_timeout{1};
};

// A store::Store that is the REST API of a remote control plane, so that a NodeAgent runs the
// same code on another machine as inside `strata up`. Objects travel as the API serves them
// (JSON bodies with metadata). Mapping:
//   Get         GET the object's path
//   List        GET the collection (scoped by node_name, see the options); label selectors are
//               applied here, on what the server sent
//   Apply       one write per call: kCreate POSTs, kUpdate PUTs (a Pod's or Node's status
//               subresource, with a pod's annotations; the whole object for other kinds),
//               kUpsert is a Get then either, kDelete DELETEs; a non-zero resource_version is
//               the precondition (409 Conflict otherwise); uid preconditions are not checked.
//               A batch of several writes is InvalidArgument: the API has no multi-object
//               transaction for single objects.
//   Watch       a series of watch requests, each resuming from the last version seen
//   CurrentVersion  the newest resourceVersion any answer carried (0 before the first)
// Errors are the server's Status; Unavailable when it cannot be reached.
//
// Owned by its user (the agent command). Thread-safe: each call uses a connection of its own
// thread's (calls are serialised on one client under a lock; watchers have their own).
class RemoteStore final : public store::Store {
 public:
  // InvalidArgument naming the URL when `options.server` is malformed.
  static Result<std::unique_ptr<RemoteStore>> Create(RemoteStoreOptions options);
  ~RemoteStore() override;

  Result<std::vector<store::Object>> Apply(std::vector<store::Write> writes) override;
  Result<store::Object> Get(const store::ObjectKey& key) const override;
  Result<store::ListResult> List(const store::Selection& selection) const override;
  Result<std::unique_ptr<store::Watcher>> Watch(const store::WatchOptions& options) override;
  int64_t CurrentVersion() const override { return version_.load(); }

  // Renews node `node_name`'s Lease (api/node_lease.h), as its agent's heartbeat; the server
  // records its own clock's time. Errors as the server's (NotFound when the node is gone).
  Status RenewNodeLease(const std::string& node_name, TimePoint now);

 private:
  RemoteStore(RemoteStoreOptions options, std::unique_ptr<ApiClient> client);
  Result<store::Object> ApplyOne(store::Write write);
  // The collection path and query of a list or watch of `selection`.
  Result<std::string> CollectionTarget(const store::Selection& selection) const;
  // Reads an object the API sent, and remembers its version.
  Result<store::Object> FromJson(std::string_view kind, const nlohmann::json& body) const;
  void SawVersion(int64_t version) const;

  const RemoteStoreOptions options_;
  mutable std::mutex mutex_;  // guards client_
  std::unique_ptr<ApiClient> client_;
  mutable std::atomic<int64_t> version_{0};
};

}  // namespace strata::client
