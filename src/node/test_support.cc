#include "node/test_support.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/check.h"

namespace strata::node::testing {

TempDir::TempDir() {
  char pattern[] = "/tmp/strata-node-test-XXXXXX";
  STRATA_CHECK(mkdtemp(pattern) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void MakeFifo(const std::string& path) { STRATA_CHECK(mkfifo(path.c_str(), 0600) == 0); }

std::string ReadFifo(const std::string& path, Duration timeout) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  STRATA_CHECK(fd >= 0);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string text;
  bool writer_seen = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, n);
      writer_seen = true;
    } else if (n == 0 && writer_seen) {
      break;  // the writer closed
    } else if (n == 0) {
      // POLLHUP before any writer: only after a writer came and went without writing.
      break;
    }
  }
  close(fd);
  return text;
}

void WriteFifo(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

bool WaitForProcessEnd(int pid, Duration timeout) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return errno == ESRCH;
  pollfd p{pidfd, POLLIN, 0};
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  bool ended = poll(&p, 1, static_cast<int>(ms)) == 1;
  close(pidfd);
  return ended;
}

bool ProcessExists(int pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace strata::node::testing
