#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::node {

// The IPv4 range a virtual kubelet gives its pods their own IPs from (the kubelet's --pod-cidr):
// a loopback range (127.0.101.0/24) serves every pod of one machine at an address of its own,
// so that two pods may listen on the same port, as they may in Kubernetes. Addresses are handed
// out in turn (host-local IPAM's way), so a released address is the last to be given again
// (a deleted pod's sockets may linger on it for a while).
//
// A value; Pick is not thread-safe (the node agent's pass owns it).
class PodCidr {
 public:
  // "A.B.C.D/N" with N from 8 to 30 (host bits may be set: "127.0.101.1/24" is 127.0.101.0/24).
  // InvalidArgument naming the text otherwise.
  static Result<PodCidr> Parse(std::string_view text);

  // The next address of the range after the last one picked (the network and broadcast
  // addresses are never given) that is not in `used`; ResourceExhausted when every one is.
  Result<std::string> Pick(const std::set<std::string>& used);

  // Whether `ip` is in the range.
  bool Contains(const std::string& ip) const;

  std::string ToString() const;

 private:
  PodCidr(uint32_t network, int prefix) : network_(network), prefix_(prefix) {}

  uint32_t network_;  // host order
  int prefix_;
  uint32_t last_ = 0;  // offset of the last address picked
};

}  // namespace strata::node
