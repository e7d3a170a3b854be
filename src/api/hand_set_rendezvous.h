#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/workload.h"
#include "common/field_errors.h"

namespace strata::api {

// What a Kubernetes manifest sets by hand for its processes to meet, where strata's own contract
// gives the same variables the same meaning. JobSet's tutorials set MASTER_ADDR to the DNS name
// of the set's first pod, MASTER_PORT to a port of their choosing, and RANK from the pod's
// completion index; strata gives every process MASTER_ADDR (rank 0's address), MASTER_PORT (a
// port it chose, free on that host) and RANK itself.
struct HandSetRendezvous {
  // The first pod's host name ("<jobset>-<replicated job>-0-0.<subdomain>"), as the manifest's
  // MASTER_ADDR may give it, optionally followed by the rest of its domain; empty: no
  // MASTER_ADDR is accepted.
  std::string first_pod_host;
  // Whether strata's RANK of each pod's process is the pod's completion index (one child Job,
  // one process per pod, strata starting it).
  bool rank_is_completion_index = false;
};

// Which of `env`'s variables mean what strata's own do (one flag per variable), each warned of
// under its path, so that strata's values stand in: MASTER_ADDR naming
// `rendezvous.first_pod_host`, a MASTER_PORT that is a port number, and RANK read from the
// completion index (the batch.kubernetes.io/job-completion-index annotation or label) where that
// is strata's RANK. Any other reserved variable is left for ValidateEnv to refuse. `launcher`:
// the container's command runs torchrun itself, which gives ranks to its workers (no RANK of
// strata's then).
std::vector<bool> HandSetStandIns(const std::vector<EnvVar>& env,
                                  const HandSetRendezvous& rendezvous, bool launcher,
                                  std::string_view env_path, FieldErrors& errors);

}  // namespace strata::api
