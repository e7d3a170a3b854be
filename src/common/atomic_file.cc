#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace strata {

Status ReplaceFileAtomically(const std::string& path, std::string_view text, mode_t mode) {
  const std::string temporary = path + ".tmp";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return UnavailableError("\"" + temporary + "\" cannot be created: " + std::strerror(errno));
  }
  bool written = ::fchmod(fd, mode) == 0 &&
                 ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                 ::fsync(fd) == 0;
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
  return Status::Ok();
}

}  // namespace strata
