#include "node/pod_cidr.h"

#include <arpa/inet.h>

#include <charconv>

namespace strata::node {
namespace {

std::string FormatIp(uint32_t address) {
  in_addr raw{htonl(address)};
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &raw, text, sizeof(text));
  return text;
}

}  // namespace

Result<PodCidr> PodCidr::Parse(std::string_view text) {
  auto bad = [&text](const std::string& why) {
    return Err(InvalidArgumentError("pod CIDR \"" + std::string(text) + "\": " + why));
  };
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad("expected A.B.C.D/N");
  const std::string address(text.substr(0, slash));
  in_addr parsed{};
  if (inet_pton(AF_INET, address.c_str(), &parsed) != 1) return bad("not an IPv4 address");
  int prefix = -1;
  const std::string_view bits = text.substr(slash + 1);
  auto [end, error] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
  if (error != std::errc() || end != bits.data() + bits.size() || prefix < 8 || prefix > 30) {
    return bad("the prefix length must be from 8 to 30");
  }
  const uint32_t mask = ~uint32_t{0} << (32 - prefix);
  return PodCidr(ntohl(parsed.s_addr) & mask, prefix);
}

Result<std::string> PodCidr::Pick(const std::set<std::string>& used) {
  const uint32_t hosts = (uint32_t{1} << (32 - prefix_)) - 2;  // less network and broadcast
  for (uint32_t step = 1; step <= hosts; ++step) {
    const uint32_t offset = (last_ + step - 1) % hosts + 1;
    std::string ip = FormatIp(network_ + offset);
    if (used.count(ip) > 0) continue;
    last_ = offset;
    return ip;
  }
  return Err(ResourceExhaustedError("pod CIDR " + ToString() + ": every address is in use"));
}

bool PodCidr::Contains(const std::string& ip) const {
  in_addr parsed{};
  if (inet_pton(AF_INET, ip.c_str(), &parsed) != 1) return false;
  const uint32_t mask = ~uint32_t{0} << (32 - prefix_);
  return (ntohl(parsed.s_addr) & mask) == network_;
}

std::string PodCidr::ToString() const { return FormatIp(network_) + "/" + std::to_string(prefix_); }

}  // namespace strata::node
