#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace strata::cluster {

// What a StoreFollower keeps current: a table of the objects of some kinds, told of each object
// as it is listed or changed. Its methods are called with the follower's lock held, one at a
// time, from the thread of a StoreFollower::Read or from the follower's own thread.
class FollowedObjects {
 public:
  virtual ~FollowedObjects() = default;

  // A relist begins: forget every object. Puts of every listed object follow.
  virtual void Clear() = 0;
  // `object` is listed, or was created or updated (the state after the write).
  virtual void Put(store::Object object) = 0;
  // `object` (its last state) was deleted.
  virtual void Remove(const store::Object& object) = 0;
  // A relist completed: every object of the followed kinds was Put.
  virtual void Relisted() {}
};

// Keeps a FollowedObjects current from the store: the first Read lists every followed kind once
// and starts a watch of the whole store; from then on a thread applies each change of a followed
// kind as it comes, and a Read applies what is left, so a Read costs the changes since the last
// one, not the number of objects. When the watch falls behind (more than `watch_buffer` changes
// waiting) the store expires it, and the next drain clears the table and lists again.
//
// Owned by the owner of the table; `store` and `objects` must outlive it. Thread-safe: Read may
// be called from several threads (one drains at a time).
class StoreFollower {
 public:
  // `kinds`: the kinds listed and followed (the changes of other kinds are skipped).
  // `watch_buffer`: store::WatchOptions::buffer_limit of the watch.
  StoreFollower(store::Store& store, std::vector<std::string> kinds, size_t watch_buffer,
                FollowedObjects& objects);
  ~StoreFollower();

  StoreFollower(const StoreFollower&) = delete;
  StoreFollower& operator=(const StoreFollower&) = delete;

  // Brings the table up to date with each write that completed before the call, then runs
  // `read` while no change is applied to the table. On a failed list of the store, returns its
  // error without running `read` (the table may then hold part of a list); the next call lists
  // again.
  Status Read(const std::function<void()>& read);

 private:
  // Applies the waiting changes, relisting when the watch has expired, until none is waiting or
  // one of version `up_to` or later was applied. REQUIRES: mutex_ held.
  Status DrainLocked(int64_t up_to);
  // Lists every followed kind into a cleared table and watches from before the lists.
  // REQUIRES: mutex_ held.
  Status RelistLocked();
  void Follow();

  store::Store& store_;
  const std::vector<std::string> kinds_;
  const size_t watch_buffer_;

  std::mutex mutex_;  // guards objects_ and the members below up to wake_mutex_
  FollowedObjects& objects_;
  std::unique_ptr<store::Watcher> watcher_;
  // The version of each kind's list at the last relist: changes up to it are in the table.
  std::map<std::string, int64_t> listed_versions_;

  std::mutex wake_mutex_;  // guards changes_waiting_ and stopping_
  std::condition_variable wake_;
  bool changes_waiting_ = false;
  bool stopping_ = false;
  std::thread follower_;  // started by the first Read
};

}  // namespace strata::cluster
