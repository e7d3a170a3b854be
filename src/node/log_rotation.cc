#include "node/log_rotation.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/check.h"

namespace strata::node {
namespace {

Status ErrnoError(std::string_view what, const std::string& path) {
  return InternalError(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

// Copies `from` to a fresh `to` (replacing it).
Status CopyFile(const std::string& from, const std::string& to) {
  int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return ErrnoError("open", from);
  int out = open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    Status status = ErrnoError("create", to);
    close(in);
    return status;
  }
  Status status;
  char buffer[64 * 1024];
  ssize_t n;
  while ((n = read(in, buffer, sizeof buffer)) > 0) {
    for (ssize_t written = 0; written < n;) {
      ssize_t w = write(out, buffer + written, n - written);
      if (w < 0) {
        status = ErrnoError("write", to);
        break;
      }
      written += w;
    }
    if (!status.ok()) break;
  }
  if (n < 0) status = ErrnoError("read", from);
  close(in);
  close(out);
  return status;
}

}  // namespace

Result<bool> RotateLogIfLarger(const std::string& path, int64_t max_bytes, int keep) {
  STRATA_CHECK(keep >= 1 && max_bytes > 0);
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return false;
    return Err(ErrnoError("stat", path));
  }
  if (info.st_size <= max_bytes) return false;
  for (int i = keep - 1; i >= 1; --i) {
    std::string older = fmt::format("{}.{}", path, i);
    std::string newer = fmt::format("{}.{}", path, i + 1);
    if (rename(older.c_str(), newer.c_str()) != 0 && errno != ENOENT) {
      return Err(ErrnoError("rename", older));
    }
  }
  RETURN_IF_ERROR(CopyFile(path, path + ".1"));
  if (truncate(path.c_str(), 0) != 0) return Err(ErrnoError("truncate", path));
  return true;
}

}  // namespace strata::node
