// The load of bench/kubernetes/run.sh, through the kube client (no rate limit):
//   pod_load create --kubeconfig F --namespace N --count P --scheduler S [--gpus G] [--workers W]
//       creates P pods of G nvidia.com/gpu each (pod-0 .. pod-P-1) for scheduler S;
//   pod_load wait --kubeconfig F --namespace N --count P [--timeout SECONDS]
//       watches the namespace's pods and prints, as JSON, the seconds from its start until the
//       first and the last of P pods were bound, and the bind rate between them.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/reflector.h"

namespace {

using namespace strata;
using nlohmann::json;

std::unique_ptr<kube::Client> Connect(const std::string& kubeconfig) {
  kube::KubeConfigOptions config_options;
  config_options.explicit_path = kubeconfig;
  Result<kube::KubeConfig> config = kube::LoadKubeConfig(config_options);
  if (!config) {
    std::cerr << config.error().ToString() << "\n";
    std::exit(1);
  }
  kube::ClientOptions options;
  options.qps = 0;
  Result<std::unique_ptr<kube::Client>> client = kube::Client::Create(*config, options);
  if (!client) {
    std::cerr << client.error().ToString() << "\n";
    std::exit(1);
  }
  return std::move(*client);
}

int Create(kube::Client& client, const std::string& ns, int count, const std::string& scheduler,
           int gpus, int workers) {
  std::atomic<int> next{0}, failed{0};
  auto work = [&] {
    for (int i = next++; i < count; i = next++) {
      json pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "pod-" + std::to_string(i)}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"tolerations",
             {{{"key", "kwok.x-k8s.io/node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
            {"containers",
             {{{"name", "main"},
               {"image", "registry.example/bench:1"},
               {"resources",
                {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}},
                 {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}}};
      Result<json> created = client.Create(kube::resources::kPods, ns, pod);
      if (!created && created.error().code() != StatusCode::kAlreadyExists) {
        if (failed++ < 5) std::cerr << created.error().ToString() << "\n";
      }
    }
  };
  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  for (std::thread& thread : threads) thread.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << json{{"created", count - failed}, {"seconds", seconds}}.dump() << std::endl;
  return failed ? 1 : 0;
}

int Wait(kube::Client& client, const std::string& ns, int count, double timeout) {
  kube::ReflectorOptions options;
  options.namespace_name = ns;
  kube::Reflector reflector(&client, kube::resources::kPods, options);
  auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::set<std::string> bound;
  double first = -1;
  auto see = [&](const json& pod) {
    if (pod["spec"].value("nodeName", "").empty()) return;
    if (bound.insert(pod["metadata"].value("name", "")).second && first < 0) first = elapsed();
  };
  while (static_cast<int>(bound.size()) < count && elapsed() < timeout) {
    Result<kube::Delta> delta = reflector.Next(std::chrono::seconds(1));
    if (!delta) continue;
    if (delta->type == kube::DeltaType::kReplace) {
      for (const json& item : delta->items) see(item);
    } else if (delta->type == kube::DeltaType::kAdded ||
               delta->type == kube::DeltaType::kModified) {
      see(delta->object);
    }
  }
  double last = elapsed();
  json out = {{"bound", bound.size()}, {"first_bound_s", first}, {"all_bound_s", last}};
  if (last > first && first >= 0) out["pods_per_s"] = (bound.size() - 1) / (last - first);
  std::cout << out.dump() << std::endl;
  return static_cast<int>(bound.size()) == count ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("pod_load: the load of bench/kubernetes/run.sh");
  app.require_subcommand(1);
  std::string kubeconfig, ns = "default", scheduler = "strata";
  int count = 1000, gpus = 1, workers = 32;
  double timeout = 1800;
  CLI::App* create = app.add_subcommand("create", "Create the pods");
  CLI::App* wait = app.add_subcommand("wait", "Wait until the pods are bound");
  for (CLI::App* command : {create, wait}) {
    command->add_option("--kubeconfig", kubeconfig)->required();
    command->add_option("--namespace", ns);
    command->add_option("--count", count);
  }
  create->add_option("--scheduler", scheduler);
  create->add_option("--gpus", gpus);
  create->add_option("--workers", workers);
  wait->add_option("--timeout", timeout);
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<kube::Client> client = Connect(kubeconfig);
  if (create->parsed()) return Create(*client, ns, count, scheduler, gpus, workers);
  return Wait(*client, ns, count, timeout);
}
