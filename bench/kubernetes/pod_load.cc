// The load of bench/kubernetes/run.sh and quota_run.sh, through the kube client (no rate limit):
//   pod_load create --kubeconfig F --namespace N --count P --scheduler S [--gpus G] [--workers W]
//       [--prefix NAME] [--label KEY=VALUE]...
//       creates P pods of G nvidia.com/gpu each (NAME-0 .. NAME-P-1, NAME "pod" by default),
//       with the labels given, for scheduler S;
//   pod_load wait --kubeconfig F --namespace N --count P [--timeout SECONDS]
//       watches the namespace's pods and prints, as JSON, the seconds from its start until the
//       first and the last of P pods were bound, and the bind rate between them;
//   pod_load bound-log --kubeconfig F --namespace N --group-label KEY
//       watches the namespace's pods until killed and prints, at every change, one JSON line:
//       {"t": Unix seconds, "bound": {VALUE: GPUs}, "held": {VALUE: GPUs}, "ever": {VALUE: pods}}
//       per value of label KEY: GPUs of bound pods neither finished nor being deleted, GPUs of
//       bound pods not finished (a pod being deleted holds its GPUs until it is gone), and how
//       many pods were ever seen bound.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_pods.h"
#include "common/json_member.h"
#include "kube/client.h"
#include "kube/reflector.h"

namespace {

using namespace strata;
using nlohmann::json;

int Create(kube::Client& client, const std::string& ns, int count, const std::string& scheduler,
           int gpus, int workers, const std::string& prefix, const json& labels) {
  std::atomic<int> next{0}, failed{0};
  auto work = [&] {
    for (int i = next++; i < count; i = next++) {
      json pod = bench::BenchPod(prefix + "-" + std::to_string(i), scheduler, gpus, labels);
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

int BoundLog(kube::Client& client, const std::string& ns, const std::string& group_label) {
  kube::ReflectorOptions options;
  options.namespace_name = ns;
  kube::Reflector reflector(&client, kube::resources::kPods, options);
  struct Held {
    std::string group;
    int64_t gpus = 0;
    bool deleting = false;
  };
  std::map<std::string, Held> held;  // bound, unfinished pods by name
  std::set<std::string> ever_bound;
  json ever = json::object();
  auto see = [&](const json& pod) {
    const json& metadata = MemberOrNull(pod, "metadata");
    std::string name = StringMemberOr(metadata, "name");
    std::string phase = StringMemberOr(MemberOrNull(pod, "status"), "phase");
    if (StringMemberOr(MemberOrNull(pod, "spec"), "nodeName").empty() || phase == "Succeeded" ||
        phase == "Failed") {
      held.erase(name);
      return;
    }
    std::string group = StringMemberOr(MemberOrNull(metadata, "labels"), group_label.c_str());
    if (ever_bound.insert(name).second) ever[group] = ever.value(group, int64_t{0}) + 1;
    held[name] = {group, bench::GpusOf(pod),
                  !MemberOrNull(metadata, "deletionTimestamp").is_null()};
  };
  json last;
  for (;;) {
    Result<kube::Delta> delta = reflector.Next(std::chrono::seconds(1));
    if (!delta) continue;
    switch (delta->type) {
      case kube::DeltaType::kReplace:
        held.clear();
        for (const json& item : delta->items) see(item);
        break;
      case kube::DeltaType::kAdded:
      case kube::DeltaType::kModified:
        see(delta->object);
        break;
      case kube::DeltaType::kDeleted:
        held.erase(StringMemberOr(MemberOrNull(delta->object, "metadata"), "name"));
        break;
      case kube::DeltaType::kBookmark:
        continue;
    }
    json bound = json::object(), holding = json::object();
    for (const auto& [name, h] : held) {
      holding[h.group] = holding.value(h.group, int64_t{0}) + h.gpus;
      if (!h.deleting) bound[h.group] = bound.value(h.group, int64_t{0}) + h.gpus;
    }
    json now = {{"bound", bound}, {"held", holding}, {"ever", ever}};
    if (now == last) continue;
    last = now;
    double t =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    json line = {{"t", t}, {"bound", bound}, {"held", holding}, {"ever", ever}};
    std::cout << line.dump() << std::endl;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("pod_load: the load of bench/kubernetes/run.sh");
  app.require_subcommand(1);
  std::string kubeconfig, ns = "default", scheduler = "strata";
  std::string prefix = "pod", group_label;
  std::vector<std::string> labels;
  int count = 1000, gpus = 1, workers = 32;
  double timeout = 1800;
  CLI::App* create = app.add_subcommand("create", "Create the pods");
  CLI::App* wait = app.add_subcommand("wait", "Wait until the pods are bound");
  CLI::App* bound_log =
      app.add_subcommand("bound-log", "Print the GPUs bound per label value at every change");
  for (CLI::App* command : {create, wait, bound_log}) {
    command->add_option("--kubeconfig", kubeconfig)->required();
    command->add_option("--namespace", ns);
  }
  for (CLI::App* command : {create, wait}) command->add_option("--count", count);
  create->add_option("--scheduler", scheduler);
  create->add_option("--gpus", gpus);
  create->add_option("--workers", workers);
  create->add_option("--prefix", prefix);
  create->add_option("--label", labels, "KEY=VALUE, repeated");
  wait->add_option("--timeout", timeout);
  bound_log->add_option("--group-label", group_label)->required();
  CLI11_PARSE(app, argc, argv);
  json label_object = json::object();
  for (const std::string& label : labels) {
    size_t equals = label.find('=');
    if (equals == std::string::npos) {
      std::cerr << "--label " << label << ": expected KEY=VALUE\n";
      return 2;
    }
    label_object[label.substr(0, equals)] = label.substr(equals + 1);
  }
  std::unique_ptr<kube::Client> client = bench::ConnectUnthrottled(kubeconfig);
  if (create->parsed()) {
    return Create(*client, ns, count, scheduler, gpus, workers, prefix, label_object);
  }
  if (bound_log->parsed()) return BoundLog(*client, ns, group_label);
  return Wait(*client, ns, count, timeout);
}
