#include "api/hand_set_rendezvous.h"

#include <charconv>

#include "api/env_source.h"

namespace strata::api {
namespace {

bool IsPortNumber(std::string_view value) {
  int port = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
  return ec == std::errc() && end == value.data() + value.size() && port >= 1 && port <= 65535;
}

bool NamesHost(std::string_view value, std::string_view host) {
  return !host.empty() && value.starts_with(host) &&
         (value.size() == host.size() || value[host.size()] == '.');
}

bool ReadsCompletionIndex(const EnvVar& env) {
  if (!env.value_from || env.value_from->kind != EnvSourceKind::kField) return false;
  const std::string& path = env.value_from->path;
  return path == "metadata.annotations['batch.kubernetes.io/job-completion-index']" ||
         path == "metadata.labels['batch.kubernetes.io/job-completion-index']";
}

}  // namespace

std::vector<bool> HandSetStandIns(const std::vector<EnvVar>& env,
                                  const HandSetRendezvous& rendezvous, bool launcher,
                                  std::string_view env_path, FieldErrors& errors) {
  std::vector<bool> stood_in(env.size(), false);
  for (size_t i = 0; i < env.size(); ++i) {
    const EnvVar& var = env[i];
    const std::string path = IndexPath(env_path, i);
    if (var.name == "MASTER_ADDR" && !var.value_from &&
        NamesHost(var.value, rendezvous.first_pod_host)) {
      errors.Warn(path,
                  "MASTER_ADDR names the first pod, as strata's own MASTER_ADDR does: "
                  "strata's value (that pod's address) stands in");
      stood_in[i] = true;
    } else if (var.name == "MASTER_PORT" && !var.value_from && IsPortNumber(var.value)) {
      errors.Warn(path,
                  "strata chooses MASTER_PORT (a port free on the first pod's host, which "
                  "pods of other jobs may share): the command's $MASTER_PORT gets it, not " +
                      var.value);
      stood_in[i] = true;
    } else if (var.name == "RANK" && rendezvous.rank_is_completion_index && !launcher &&
               ReadsCompletionIndex(var)) {
      errors.Warn(path,
                  "RANK read from the completion index is strata's own RANK here (one "
                  "process per pod): strata's value stands in");
      stood_in[i] = true;
    }
  }
  return stood_in;
}

}  // namespace strata::api
