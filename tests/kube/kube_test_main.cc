// Brings a real Kubernetes control plane up with tools/kube/cluster.sh, runs the kube client's
// tests against it in a child process (so that the cluster is stopped even if a test crashes),
// and stops it. Exits 77 (skipped) only when the Kubernetes binaries are not built. With
// STRATA_KUBECONFIG set, runs against that cluster instead and starts nothing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "kube_test_cluster.h"

namespace strata::kube::testing {
namespace {

std::string kubeconfig_path;
std::string cluster_dir;

// Runs `command` through the shell; returns its exit status and stdout.
int Run(const std::string& command, std::string* output) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    output->append(buffer.data(), n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

const std::string& KubeconfigPath() { return kubeconfig_path; }
const std::string& ClusterDir() { return cluster_dir; }

KubeConfig AdminConfig() {
  KubeConfigOptions options;
  options.explicit_path = kubeconfig_path;
  Result<KubeConfig> config = LoadKubeConfig(options);
  EXPECT_TRUE(config) << config.error().ToString();
  return config ? *config : KubeConfig{};
}

std::unique_ptr<Client> NewClient(const KubeConfig& config, ClientOptions options) {
  Result<std::unique_ptr<Client>> client = Client::Create(config, options);
  EXPECT_TRUE(client) << client.error().ToString();
  return client ? std::move(*client) : nullptr;
}

std::unique_ptr<Client> AdminClient() {
  ClientOptions options;
  options.qps = 0;  // the tests' own requests are not what is measured
  return NewClient(AdminConfig(), options);
}

std::string NewNamespace(Client& client, const std::string& prefix) {
  // The pid keeps names apart across runs against one cluster (STRATA_KUBECONFIG).
  static int counter = 0;
  std::string name = prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  Result<nlohmann::json> created =
      client.Create(resources::kNamespaces, "",
                    {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  EXPECT_TRUE(created) << created.error().ToString();
  bool ready = WaitFor(
      30, [&] { return client.Get(resources::kServiceAccounts, name, "default").has_value(); });
  EXPECT_TRUE(ready) << "no default service account in " << name;
  return name;
}

nlohmann::json StrataPod(const std::string& name, int gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", "kube-client-test"}}}}},
          {"spec",
           {{"schedulerName", "strata"},
            {"tolerations",
             {{{"key", "kwok.x-k8s.io/node"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
            {"containers",
             {{{"name", "main"},
               {"image", "registry.example/train:1"},
               {"resources", {{"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}}};
}

bool WaitFor(double seconds, const std::function<bool()>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace strata::kube::testing

int main(int argc, char** argv) {
  using namespace strata::kube::testing;
  ::testing::InitGoogleTest(&argc, argv);
  if (const char* existing = std::getenv("STRATA_KUBECONFIG"); existing && *existing) {
    kubeconfig_path = existing;
    cluster_dir = std::filesystem::path(existing).parent_path().string();
    return RUN_ALL_TESTS();
  }
  const char* source = std::getenv("STRATA_SOURCE_DIR");
  std::string repo = source ? source : STRATA_DEFAULT_SOURCE_DIR;
  std::string bin_dir;
  Run("bash -c " + Quoted("source " + repo + "/tools/kube/cache_paths.sh && echo -n $KUBE_BIN_DIR"),
      &bin_dir);
  for (const char* binary : {"etcd", "kube-apiserver", "kube-controller-manager", "kwok"}) {
    if (bin_dir.empty() || !std::filesystem::exists(bin_dir + "/" + binary)) {
      std::cout << "SKIP: " << bin_dir << "/" << binary
                << " is not built; run make deps (or tools/kube/build.sh)\n";
      return 77;
    }
  }
  char pattern[] = "/tmp/kube_client_test.XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  cluster_dir = pattern;
  std::string cluster = repo + "/tools/kube/cluster.sh";
  std::string output;
  auto started = std::chrono::steady_clock::now();
  int up =
      Run(Quoted(cluster) + " up " + Quoted(cluster_dir) + " --nodes 3 --gpus-per-node 8", &output);
  double up_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string down = Quoted(cluster) + " down " + Quoted(cluster_dir) + " >/dev/null 2>&1";
  if (up != 0) {
    std::cerr << "cluster.sh up failed (exit " << up << "):\n" << output;
    std::system(down.c_str());
    return 1;
  }
  while (!output.empty() && output.back() == '\n') output.pop_back();
  kubeconfig_path =
      output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  std::cout << "cluster up in " << up_seconds << " s: " << kubeconfig_path << std::endl;

  pid_t child = ::fork();
  if (child == 0) {
    int failed = RUN_ALL_TESTS();
    std::fflush(nullptr);
    ::_exit(failed);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  std::system(down.c_str());
  std::filesystem::remove_all(cluster_dir);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "the tests died of signal " << WTERMSIG(status) << "\n";
  return 1;
}
