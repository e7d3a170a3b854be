#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "api/workload.h"
#include "common/status.h"
#include "node/node_runtime.h"

namespace strata::node {

// Who a pod's processes run as on a node, and the file permissions that lets them work. Free
// functions; thread-safe.

// nobody / nogroup: what a pod runs as on a root agent when it names no user.
inline constexpr uid_t kUnprivilegedUid = 65534;
inline constexpr gid_t kUnprivilegedGid = 65534;

// The identity for a pod that asks for `asked`, on a node agent running as `agent_uid`.
// A root agent runs pods as asked.run_as_user (default kUnprivilegedUid) and asked.run_as_group
// (default kUnprivilegedGid); as root only when the pod asks for it (runAsUser: 0, or
// runAsNonRoot: false with no runAsUser) and `allow_root_pods` (the admin's opt-in), else
// FailedPrecondition saying so. An agent that is not root cannot switch users: nullopt, the
// processes run as the agent does.
Result<std::optional<PodSpec::RunAs>> PodIdentity(const api::SecurityContext& asked,
                                                  uid_t agent_uid, bool allow_root_pods);

// Lets pods running as other users reach their own directories under `data_dir` ("pods/<uid>",
// "checkpoints/...") and nothing else of the control plane's: the data dir becomes traversable
// but not listable by others (o+x, o-rw), and every other entry directly in it (the store's
// database, keys) loses every permission for others. Internal naming the path on failure;
// FailedPrecondition naming it when a directory above the data dir is not searchable by others
// (which this does not change).
Status OpenDataDirToPods(const std::string& data_dir);

}  // namespace strata::node
