#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata {

Status ReplaceFileAtomically(const std::string& path, std::string_view text, mode_t mode,
                             FileSync sync) {
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return UnavailableError("\"" + temporary + "\" cannot be created: " + std::strerror(errno));
  }
  bool written = ::fchmod(fd, mode) == 0;
  for (size_t done = 0; written && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    if (written) done += static_cast<size_t>(n);
  }
  written = written && (sync == FileSync::kNone || ::fsync(fd) == 0);
  const int error = errno;
  ::close(fd);
  if (!written) {
    ::unlink(temporary.c_str());
    return UnavailableError("\"" + temporary + "\" cannot be written: " + std::strerror(error));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(temporary.c_str());
    return UnavailableError("\"" + path + "\" cannot be replaced: " + std::strerror(rename_error));
  }
  if (sync == FileSync::kNone) return Status::Ok();
  // The rename itself is durable only once the directory is.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const bool synced = dir_fd >= 0 && ::fsync(dir_fd) == 0;
  const int sync_error = errno;
  if (dir_fd >= 0) ::close(dir_fd);
  if (!synced)
    return UnavailableError("\"" + dir + "\" cannot be synced: " + std::strerror(sync_error));
  return Status::Ok();
}

}  // namespace strata
