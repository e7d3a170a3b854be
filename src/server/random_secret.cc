#include "server/random_secret.h"

#include <sys/random.h>

#include <cerrno>

namespace strata::server {

Result<std::string> NewSecret() {
  unsigned char bytes[kSecretBytes];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    ssize_t got = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Err(InternalError("cannot read random bytes for a secret"));
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char byte : bytes) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

}  // namespace strata::server
