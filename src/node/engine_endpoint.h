#pragma once

#include <set>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

// Where a replica's engine listens on this machine, and whether it is ready: the node agent
// picks the port before the engine starts and probes the engine's /health each pass. Free
// functions; thread-safe.
namespace strata::node {

// A TCP port that no socket on this machine holds now and that is not in `taken` (ports already
// handed to engines that may not listen yet). The engine binds it later, so another process may
// take it in between; engines that fail to bind fail their pod. Internal when no port can be
// found.
Result<int> PickFreePort(const std::set<int>& taken);

// Sends GET /health to 127.0.0.1 on each port, all at once, each given at most `timeout` to
// connect and answer (a refused connection fails at once). Returns the ports that answered 200.
// The engine runs on this machine, so loopback reaches it whatever address it advertises.
std::set<int> ProbeHealth(const std::vector<int>& ports, Duration timeout);

}  // namespace strata::node
