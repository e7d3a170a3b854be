// The load of bench/kubernetes/jobs_quota_run.sh: batch/v1 Jobs as Kueue's users write them.
//
//   job_load --kubeconfig F --namespace N --jobs J --queues "cq-0:W0,cq-1:W1,..."
//       [--scheduler S] [--min-pods A] [--max-pods B] [--gpus-per-pod G]
//       [--runtime-min R1] [--runtime-max R2] [--seed N] [--workers W]
//
// Makes J Jobs, each suspended and labelled kueue.x-k8s.io/queue-name with a LocalQueue drawn
// by weight from --queues (seeded), of A..B pods (parallelism = completions) of G GPUs for
// scheduler S, each pod running R1..R2 seconds once started (kwok's Job pods succeed after their
// pod-complete.stage.kwok.x-k8s.io/delay annotation); the pods carry the label
// bench.strata.dev/queue with the queue's name, for pod_load bound-log. Prints one JSON object:
// {"jobs": J, "pods": {QUEUE: pods}, "gpu_s": {QUEUE: GPU-seconds of work}, "seconds": ...}.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_pods.h"

namespace {

using namespace strata;
using nlohmann::json;

const kube::GroupVersionResource kJobs{"batch", "v1", "jobs"};

struct Queue {
  std::string name;
  double weight = 1;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("job_load: Kueue-style Jobs for bench/kubernetes/jobs_quota_run.sh");
  std::string kubeconfig, ns = "default", scheduler = "strata", queue_list;
  int jobs = 2000, min_pods = 1, max_pods = 4, gpus = 1, workers = 32;
  double runtime_min = 5, runtime_max = 15;
  uint64_t seed = 1;
  app.add_option("--kubeconfig", kubeconfig)->required();
  app.add_option("--namespace", ns);
  app.add_option("--scheduler", scheduler);
  app.add_option("--jobs", jobs)->check(CLI::PositiveNumber);
  app.add_option("--queues", queue_list, "NAME:WEIGHT,...")->required();
  app.add_option("--min-pods", min_pods)->check(CLI::PositiveNumber);
  app.add_option("--max-pods", max_pods)->check(CLI::PositiveNumber);
  app.add_option("--gpus-per-pod", gpus)->check(CLI::PositiveNumber);
  app.add_option("--runtime-min", runtime_min)->check(CLI::PositiveNumber);
  app.add_option("--runtime-max", runtime_max)->check(CLI::PositiveNumber);
  app.add_option("--seed", seed);
  app.add_option("--workers", workers)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  std::vector<Queue> queues;
  std::vector<double> weights;
  for (size_t start = 0; start < queue_list.size();) {
    size_t comma = queue_list.find(',', start);
    std::string item = queue_list.substr(start, comma - start);
    size_t colon = item.find(':');
    Queue queue{item.substr(0, colon), 1};
    if (colon != std::string::npos) {
      try {
        queue.weight = std::stod(item.substr(colon + 1));
      } catch (const std::exception&) {
        std::cerr << "--queues: bad weight in \"" << item << "\"\n";
        return 2;
      }
    }
    queues.push_back(queue);
    weights.push_back(queue.weight);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (queues.empty() || max_pods < min_pods || runtime_max < runtime_min) {
    std::cerr << "job_load: --queues must name a queue; maxima must not be below minima\n";
    return 2;
  }

  // Every Job decided first, so that the seed alone fixes the work.
  std::mt19937_64 random(seed);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::uniform_int_distribution<int> size(min_pods, max_pods);
  std::uniform_real_distribution<double> runtime(runtime_min, runtime_max);
  std::vector<json> objects;
  json pods = json::object(), gpu_s = json::object();
  for (int j = 0; j < jobs; ++j) {
    const Queue& queue = queues[pick(random)];
    int count = size(random);
    int seconds = static_cast<int>(runtime(random));
    json pod = bench::BenchPod("", scheduler, gpus, {{"bench.strata.dev/queue", queue.name}});
    std::string delay = std::to_string(seconds) + "s";
    json template_metadata = {{"labels", pod["metadata"]["labels"]},
                              {"annotations",
                               {{"pod-complete.stage.kwok.x-k8s.io/delay", delay},
                                {"pod-complete.stage.kwok.x-k8s.io/jitter-delay", delay}}}};
    json spec = pod["spec"];
    spec["restartPolicy"] = "Never";
    objects.push_back({{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"metadata",
                        {{"name", "job-" + std::to_string(j)},
                         {"labels", {{"kueue.x-k8s.io/queue-name", queue.name}}}}},
                       {"spec",
                        {{"parallelism", count},
                         {"completions", count},
                         {"suspend", true},
                         {"backoffLimit", 0},
                         {"template", {{"metadata", template_metadata}, {"spec", spec}}}}}});
    pods[queue.name] = pods.value(queue.name, 0) + count;
    gpu_s[queue.name] = gpu_s.value(queue.name, 0.0) + count * gpus * seconds;
  }

  std::unique_ptr<kube::Client> client = bench::ConnectUnthrottled(kubeconfig);
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < objects.size(); i = next++) {
        Result<json> created = client->Create(kJobs, ns, objects[i]);
        if (!created && created.error().code() != StatusCode::kAlreadyExists && failed++ < 5)
          std::cerr << created.error().ToString() << "\n";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << json{{"jobs", jobs - failed}, {"pods", pods}, {"gpu_s", gpu_s}, {"seconds", seconds}}
                   .dump()
            << std::endl;
  return failed ? 1 : 0;
}
