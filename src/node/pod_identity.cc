#include "node/pod_identity.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace strata::node {

Result<std::optional<PodSpec::RunAs>> PodIdentity(const api::SecurityContext& asked,
                                                  uid_t agent_uid, bool allow_root_pods) {
  if (agent_uid != 0) return std::optional<PodSpec::RunAs>();
  const bool wants_root =
      asked.run_as_user == 0 || (!asked.run_as_user && asked.run_as_non_root == false);
  if (wants_root && !allow_root_pods) {
    return Err(FailedPreconditionError(fmt::format(
        "the pod asks to run as root (securityContext.{}) but this node does not allow root "
        "pods; an admin starts its agent with --allow-root-pods to allow them",
        asked.run_as_user ? "runAsUser: 0" : "runAsNonRoot: false")));
  }
  PodSpec::RunAs identity;
  identity.uid = wants_root ? 0 : static_cast<uid_t>(asked.run_as_user.value_or(kUnprivilegedUid));
  identity.gid = asked.run_as_group ? static_cast<gid_t>(*asked.run_as_group)
                 : wants_root       ? 0
                                    : kUnprivilegedGid;
  return std::optional<PodSpec::RunAs>(identity);
}

Status OpenDataDirToPods(const std::string& data_dir) {
  namespace fs = std::filesystem;
  auto change = [](const fs::path& path, mode_t add, mode_t remove) -> Status {
    struct stat info {};
    if (lstat(path.c_str(), &info) != 0 || S_ISLNK(info.st_mode)) return Status::Ok();
    mode_t mode = (info.st_mode & 07777 & ~remove) | add;
    if (mode != (info.st_mode & 07777) && chmod(path.c_str(), mode) != 0) {
      return InternalError(fmt::format("chmod {}: {}", path.string(), std::strerror(errno)));
    }
    return Status::Ok();
  };
  if (Status opened = change(data_dir, S_IXOTH, S_IROTH | S_IWOTH); !opened.ok()) return opened;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(data_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name == "pods" || name == "checkpoints") continue;
    if (Status closed = change(entry.path(), 0, S_IRWXO); !closed.ok()) return closed;
  }
  if (error) return InternalError(fmt::format("list {}: {}", data_dir, error.message()));
  // Above the data dir nothing is changed: a directory there that others cannot search keeps
  // every pod from its own directory, which is said now rather than by each pod's failure.
  for (fs::path dir = fs::absolute(data_dir, error).parent_path(); !error && !dir.empty();
       dir = dir.parent_path()) {
    struct stat info {};
    if (stat(dir.c_str(), &info) == 0 && (info.st_mode & S_IXOTH) == 0) {
      return FailedPreconditionError(fmt::format(
          "pods run as other users cannot reach their directories under {}: {} is not searchable "
          "by others (chmod o+x it, or put the data dir elsewhere)",
          data_dir, dir.string()));
    }
    if (dir == dir.root_path()) break;
  }
  return Status::Ok();
}

}  // namespace strata::node
