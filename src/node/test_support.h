#pragma once

#include <string>

#include "common/clock.h"

// Helpers shared by the node module's tests (src/node and tests/node); linked only into test
// binaries (strata_node_test_support).
namespace strata::node::testing {

// A fresh directory under /tmp, removed with everything in it on destruction. Not copyable.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The whole content of a file; empty when it cannot be read.
std::string ReadFileOrEmpty(const std::string& path);

// Creates a named pipe at `path` (a test's way to hear from a child process without sleeping).
void MakeFifo(const std::string& path);

// Reads what a child writes into the FIFO at `path` until the writer closes it, waiting at
// most `timeout` for it to do so. Returns what was read (empty on timeout).
std::string ReadFifo(const std::string& path, Duration timeout);

// Writes `text` into the FIFO at `path`, waiting for a reader to open it.
void WriteFifo(const std::string& path, const std::string& text);

// Waits until process `pid` ends (becomes a zombie or disappears), at most `timeout`. Returns
// whether it ended.
bool WaitForProcessEnd(int pid, Duration timeout);

// Whether a process with this pid exists (a zombie counts).
bool ProcessExists(int pid);

}  // namespace strata::node::testing
