#include "bench_pods.h"

#include <iostream>

#include "common/json_member.h"
#include "kube/kubeconfig.h"

namespace strata::bench {

using nlohmann::json;

std::unique_ptr<kube::Client> ConnectUnthrottled(const std::string& kubeconfig) {
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

json BenchPod(const std::string& name, const std::string& scheduler, int gpus, const json& labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
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
}

int64_t GpusOf(const json& pod) {
  int64_t gpus = 0;
  const json& containers = MemberOrNull(MemberOrNull(pod, "spec"), "containers");
  for (size_t c = 0; containers.is_array() && c < containers.size(); ++c) {
    const json& value = MemberOrNull(
        MemberOrNull(MemberOrNull(containers[c], "resources"), "limits"), "nvidia.com/gpu");
    if (value.is_null()) continue;
    try {
      gpus += value.is_string() ? std::stoll(value.get<std::string>()) : value.get<int64_t>();
    } catch (const std::exception&) {
    }
  }
  return gpus;
}

}  // namespace strata::bench
