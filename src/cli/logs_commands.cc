// `strata logs pod NAME` and `strata logs job NAME --rank N`: what a pod's processes wrote, from
// the REST API's pod log endpoint (GET /api/v1/namespaces/{ns}/pods/{name}/log), once or
// followed (-f) until the pod ends. Exit codes: 0 success, 1 an error from the server (or none
// reachable), 2 usage.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "api/job_roles.h"
#include "api/manifest.h"
#include "api/object_table.h"
#include "api/resource_catalog.h"
#include "cli/client_flags.h"
#include "cli/command_registry.h"
#include "client/api_client.h"

namespace strata::cli {
namespace {

using Json = nlohmann::json;

struct LogsOptions {
  ClientFlags flags;
  std::string name;
  std::string process;  // pods: the process ("main", "rank-3")
  int64_t rank = 0;     // jobs: the worker's global rank
  int64_t tail = -1;
  bool follow = false;
};

// A client whose connection waits as long as a quiet followed log may stay silent.
std::unique_ptr<client::ApiClient> ConnectForLogs(const ClientFlags& flags) {
  if (!flags.kubeconfig.empty()) {
    // The logs are on the pods' nodes, which the API server reaches: kubectl logs reads them.
    Fail(InvalidArgumentError("--kubeconfig: on a cluster, read a pod's log with kubectl logs "
                              "(the API server reaches it on its node's kubelet endpoint)"),
         2);
    return nullptr;
  }
  net::HttpClientOptions http;
  http.idle_timeout = std::chrono::hours(24 * 365);
  auto client = client::ApiClient::Create(flags.server, TokenFor(flags), http);
  if (!client) {
    Fail(client.error(), 2);
    return nullptr;
  }
  return std::move(*client);
}

// Prints the log of `process` in pod `pod`, or follows it.
void PrintLog(client::ApiClient& client, const LogsOptions& options, const std::string& pod,
              const std::string& process) {
  std::string path =
      api::FindResourceTypeByKind("Pod")->Path(options.flags.namespace_name, pod) + "/log";
  std::string query = process.empty() ? "" : "container=" + process;
  if (options.tail >= 0) {
    query += std::string(query.empty() ? "" : "&") + "tailLines=" + std::to_string(options.tail);
  }
  auto with = [&](const std::string& extra) {
    std::string all = query + (query.empty() || extra.empty() ? "" : "&") + extra;
    return all.empty() ? path : path + "?" + all;
  };
  if (!options.follow) {
    Result<std::string> text = client.GetText(with(""));
    if (!text) return Fail(text.error());
    std::cout << *text << std::flush;
    return;
  }
  // Errors (no such pod or process, logs elsewhere) come back whole from a plain read; a
  // follow's response would hand them over as log text.
  Result<std::string> check =
      client.GetText(path + "?tailLines=0" + (process.empty() ? "" : "&container=" + process));
  if (!check) return Fail(check.error());
  Status followed = client.Stream(with("follow=true"), [](std::string_view data) {
    std::cout << data << std::flush;
    return true;
  });
  if (!followed.ok()) Fail(followed);
}

void RunPodLogs(const LogsOptions& options) {
  auto client = ConnectForLogs(options.flags);
  if (client == nullptr) return;
  PrintLog(*client, options, options.name, options.process);
}

// The pod of `job` that runs global rank `rank` (of its main torchrun world: api/job_roles.h),
// the newest when restarts made several.
Result<std::string> PodOfRank(client::ApiClient& client, const Json& job, int64_t rank) {
  std::string name = job["metadata"].value("name", "");
  Result<api::Object> decoded = api::DecodeObject(job);
  const api::Job* decoded_job = decoded ? decoded->As<api::Job>() : nullptr;
  if (decoded_job == nullptr) {
    return Err(FailedPreconditionError("job \"" + name + "\" does not decode"));
  }
  const std::vector<api::JobRole> roles = api::JobRoles(decoded_job->spec);
  std::optional<int64_t> pod_rank;
  int64_t ranks = 0;
  for (size_t r = 0; r < roles.size(); ++r) {
    if (api::IsInitializerRole(roles, r)) continue;
    for (int64_t index = 0; index < roles[r].replicas; ++index) {
      const api::TorchWorld world = api::TorchWorldOf(roles, {r, index});
      ranks = world.world_size;
      if (rank >= world.first_worker_rank &&
          rank < world.first_worker_rank + roles[r].proc_per_node) {
        pod_rank = api::FirstRank(roles, r) + index;
      }
    }
  }
  if (!pod_rank) {
    return Err(InvalidArgumentError("--rank " + std::to_string(rank) + ": job \"" + name +
                                    "\" has ranks 0 to " + std::to_string(ranks - 1)));
  }
  std::string namespace_name = job["metadata"].value("namespace", "");
  ASSIGN_OR_RETURN(Json pods,
                   client.Get(api::FindResourceTypeByKind("Pod")->Path(namespace_name, "")));
  std::string newest;
  std::string newest_created;
  for (const Json& pod : pods.value("items", Json::array())) {
    if (!api::PodOwnedBy(pod, job, "Job")) continue;
    if (pod["spec"]["owner"].value("rank", int64_t{0}) != *pod_rank) continue;
    std::string created = pod["metadata"].value("creationTimestamp", "");
    if (newest.empty() || created >= newest_created) {
      newest = pod["metadata"].value("name", "");
      newest_created = created;
    }
  }
  if (newest.empty()) {
    return Err(FailedPreconditionError("job \"" + name + "\" has no pod for rank " +
                                       std::to_string(rank) + " (it is not running)"));
  }
  return newest;
}

void RunJobLogs(const LogsOptions& options) {
  auto client = ConnectForLogs(options.flags);
  if (client == nullptr) return;
  Result<Json> job = client->Get(
      api::FindResourceTypeByKind("Job")->Path(options.flags.namespace_name, options.name));
  if (!job) return Fail(job.error());
  Result<std::string> pod = PodOfRank(*client, *job, options.rank);
  if (!pod) return Fail(pod.error(), pod.error().code() == StatusCode::kInvalidArgument ? 2 : 1);
  PrintLog(*client, options, *pod, "rank-" + std::to_string(options.rank));
}

}  // namespace

STRATA_REGISTER_COMMANDS("logs", [](CLI::App& app) {
  CLI::App* logs = app.add_subcommand("logs", "Print what a pod's or a job's processes wrote");
  logs->require_subcommand(1);

  auto pod = std::make_shared<LogsOptions>();
  CLI::App* pod_command = logs->add_subcommand("pod", "One pod's process");
  pod_command->add_option("name", pod->name, "The pod's name")->required();
  pod_command->add_option("-c,--container", pod->process,
                          "The process (\"main\", \"rank-N\"); needed when the pod has several");
  pod_command->add_option("--tail", pod->tail, "Only the last N lines");
  pod_command->add_flag("-f,--follow", pod->follow, "Keep printing until the pod ends");
  AddClientFlags(pod_command, pod->flags, true);
  pod_command->callback([pod] { RunPodLogs(*pod); });

  auto job = std::make_shared<LogsOptions>();
  CLI::App* job_command = logs->add_subcommand("job", "One worker of a training job");
  job_command->add_option("name", job->name, "The job's name")->required();
  job_command->add_option("--rank", job->rank, "The worker's global rank (RANK)")
      ->capture_default_str();
  job_command->add_option("--tail", job->tail, "Only the last N lines");
  job_command->add_flag("-f,--follow", job->follow, "Keep printing until the pod ends");
  AddClientFlags(job_command, job->flags, true);
  job_command->callback([job] { RunJobLogs(*job); });
});

}  // namespace strata::cli
