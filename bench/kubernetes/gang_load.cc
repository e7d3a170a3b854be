// The load of bench/kubernetes/gang_run.sh: gangs (all-or-nothing pod groups) on a real control
// plane, each run for a while once all of its pods are bound, then deleted.
//
//   gang_load --kubeconfig F --namespace N --scheduler S --gangs G --min-pods A --max-pods B
//       [--gpus-per-pod K] [--runtime-min R1] [--runtime-max R2] [--seed N]
//       [--group podgroup|kueue|none] [--interleave] [--workers W] [--timeout T]
//
// Makes G gangs of A..B pods (uniform, seeded), each with a runtime of R1..R2 seconds. With
// --group podgroup each gang is a Kubernetes PodGroup (scheduling.k8s.io/v1beta1, gang policy,
// minCount = its size) its pods name in spec.schedulingGroup; kueue: Kueue's pod-group label and
// total-count annotation; none: plain pods (the scheduler sees no gang). Pods are created gang
// by gang (W requests in flight), or round-robin across gangs with --interleave (as controllers
// creating several jobs' pods at once do). One watch of the namespace's pods follows the binds:
// a gang is placed when all its pods are bound; it is deleted (grace period 0) its runtime
// later. Ends when every gang was placed, or at the timeout; prints one JSON object:
//   placed, gangs, all_placed_s (from the first create to the last gang placed),
//   wait_p50_s / wait_p90_s (a gang's first create to its placement),
//   incomplete_gpu_s (GPU-seconds held by bound pods of gangs not yet placed),
//   max_incomplete_gpus, longest_partial_s (the longest a gang stayed partly bound: the window
//   of its binds for a gang scheduler), bound_gpu_s (GPU-seconds of all bound pods).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_pods.h"
#include "common/json_member.h"
#include "kube/reflector.h"

namespace {

using namespace strata;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

const kube::GroupVersionResource kPodGroups{"scheduling.k8s.io", "v1beta1", "podgroups"};
constexpr const char* kGangLabel = "bench.strata.dev/gang";

struct Gang {
  std::string name;
  int size = 0;
  double runtime_s = 0;
  // Filled as the run goes.
  Clock::time_point first_created{};
  Clock::time_point placed{};
  bool is_placed = false;
  bool deleted = false;
  Clock::time_point partial_since{};  // when its first pod was bound, while it is not whole
  std::set<std::string> bound;        // its pods seen bound and not deleted
};

struct Options {
  std::string kubeconfig, ns = "default", scheduler = "strata", group = "podgroup";
  int gangs = 500, min_pods = 8, max_pods = 32, gpus_per_pod = 1, workers = 32;
  double runtime_min = 10, runtime_max = 30, timeout = 1800;
  uint64_t seed = 1;
  bool interleave = false;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

// Runs `count` calls of `work(i)` with `workers` threads.
template <typename Work>
void InParallel(size_t count, int workers, Work work) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) work(i);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

class GangRun {
 public:
  GangRun(kube::Client& client, Options options) : client_(client), options_(std::move(options)) {
    std::mt19937_64 random(options_.seed);
    std::uniform_int_distribution<int> size(options_.min_pods, options_.max_pods);
    std::uniform_real_distribution<double> runtime(options_.runtime_min, options_.runtime_max);
    for (int g = 0; g < options_.gangs; ++g) {
      Gang gang;
      gang.name = "gang-" + std::to_string(g);
      gang.size = size(random);
      gang.runtime_s = runtime(random);
      gangs_.push_back(std::move(gang));
    }
  }

  int Run() {
    kube::ReflectorOptions watch;
    watch.namespace_name = options_.ns;
    kube::Reflector reflector(&client_, kube::resources::kPods, watch);
    start_ = Clock::now();
    last_event_ = start_;
    std::thread creator([this] { CreateAll(); });
    std::thread deleter([this] { DeleteWhenDone(); });
    while (placed_ < gangs_.size() && Seconds(Clock::now() - start_) < options_.timeout) {
      Result<kube::Delta> delta = reflector.Next(std::chrono::seconds(1));
      if (!delta) continue;
      std::lock_guard lock(mutex_);
      Account(Clock::now());
      switch (delta->type) {
        case kube::DeltaType::kReplace:
          for (const json& item : delta->items) See(item, false);
          break;
        case kube::DeltaType::kAdded:
        case kube::DeltaType::kModified:
          See(delta->object, false);
          break;
        case kube::DeltaType::kDeleted:
          See(delta->object, true);
          break;
        case kube::DeltaType::kBookmark:
          break;
      }
    }
    Clock::time_point end = Clock::now();
    {
      std::lock_guard lock(mutex_);
      Account(end);
      stopping_ = true;
    }
    wake_.notify_all();
    creator.join();
    deleter.join();
    std::vector<double> waits;
    Clock::time_point last_placed = start_;
    for (const Gang& gang : gangs_) {
      if (!gang.is_placed) continue;
      waits.push_back(Seconds(gang.placed - gang.first_created));
      last_placed = std::max(last_placed, gang.placed);
    }
    json out = {{"gangs", gangs_.size()},
                {"placed", placed_},
                {"pods", total_pods_},
                {"all_placed_s", placed_ == gangs_.size() ? Seconds(last_placed - start_) : -1.0},
                {"run_s", Seconds(end - start_)},
                {"wait_p50_s", Percentile(waits, 0.5)},
                {"wait_p90_s", Percentile(waits, 0.9)},
                {"incomplete_gpu_s", incomplete_gpu_s_},
                {"max_incomplete_gpus", max_incomplete_gpus_},
                {"longest_partial_s", LongestPartial(end)},
                {"bound_gpu_s", bound_gpu_s_}};
    std::cout << out.dump() << std::endl;
    return placed_ == gangs_.size() ? 0 : 1;
  }

 private:
  // The pods of gang g, by name.
  std::string PodName(size_t g, int i) const { return gangs_[g].name + "-" + std::to_string(i); }

  json PodOf(size_t g, int i) const {
    const Gang& gang = gangs_[g];
    json labels = {{kGangLabel, gang.name}};
    if (options_.group == "kueue") labels["kueue.x-k8s.io/pod-group-name"] = gang.name;
    json pod = bench::BenchPod(PodName(g, i), options_.scheduler, options_.gpus_per_pod, labels);
    if (options_.group == "kueue") {
      pod["metadata"]["annotations"] = {
          {"kueue.x-k8s.io/pod-group-total-count", std::to_string(gang.size)}};
    } else if (options_.group == "podgroup") {
      pod["spec"]["schedulingGroup"] = {{"podGroupName", gang.name}};
    }
    return pod;
  }

  void CreateAll() {
    if (options_.group == "podgroup") {
      InParallel(gangs_.size(), options_.workers, [&](size_t g) {
        json group = {{"apiVersion", kPodGroups.ApiVersion()},
                      {"kind", "PodGroup"},
                      {"metadata", {{"name", gangs_[g].name}}},
                      {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", gangs_[g].size}}}}}}}};
        Result<json> created = client_.Create(kPodGroups, options_.ns, group);
        if (!created)
          std::cerr << "PodGroup " << gangs_[g].name << ": " << created.error().ToString() << "\n";
      });
    }
    std::vector<std::pair<size_t, int>> order;  // (gang, pod)
    if (options_.interleave) {
      for (int i = 0; i < options_.max_pods; ++i)
        for (size_t g = 0; g < gangs_.size(); ++g)
          if (i < gangs_[g].size) order.emplace_back(g, i);
    } else {
      for (size_t g = 0; g < gangs_.size(); ++g)
        for (int i = 0; i < gangs_[g].size; ++i) order.emplace_back(g, i);
    }
    total_pods_ = order.size();
    InParallel(order.size(), options_.workers, [&](size_t k) {
      auto [g, i] = order[k];
      {
        std::lock_guard lock(mutex_);
        if (gangs_[g].first_created == Clock::time_point{}) gangs_[g].first_created = Clock::now();
      }
      Result<json> created = client_.Create(kube::resources::kPods, options_.ns, PodOf(g, i));
      if (!created && created.error().code() != StatusCode::kAlreadyExists)
        std::cerr << PodName(g, i) << ": " << created.error().ToString() << "\n";
    });
  }

  // Deletes each placed gang's pods (and PodGroup) once its runtime is over.
  void DeleteWhenDone() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      Clock::time_point now = Clock::now(), next = now + std::chrono::seconds(1);
      std::vector<size_t> due;
      for (size_t g = 0; g < gangs_.size(); ++g) {
        Gang& gang = gangs_[g];
        if (!gang.is_placed || gang.deleted) continue;
        Clock::time_point at = gang.placed + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(gang.runtime_s));
        if (at <= now) {
          gang.deleted = true;
          due.push_back(g);
        } else {
          next = std::min(next, at);
        }
      }
      if (!due.empty()) {
        lock.unlock();
        std::vector<std::pair<size_t, int>> pods;
        for (size_t g : due)
          for (int i = 0; i < gangs_[g].size; ++i) pods.emplace_back(g, i);
        InParallel(pods.size(), options_.workers, [&](size_t k) {
          kube::DeleteOptions options;
          options.grace_period_seconds = 0;
          (void)client_.Delete(kube::resources::kPods, options_.ns,
                               PodName(pods[k].first, pods[k].second), options);
        });
        if (options_.group == "podgroup") {
          for (size_t g : due) (void)client_.Delete(kPodGroups, options_.ns, gangs_[g].name);
        }
        lock.lock();
        continue;
      }
      wake_.wait_until(lock, next);
    }
  }

  // Adds the time since the last event at the GPUs held then. REQUIRES: mutex_ held.
  void Account(Clock::time_point now) {
    double dt = Seconds(now - last_event_);
    incomplete_gpu_s_ += dt * static_cast<double>(incomplete_gpus_);
    bound_gpu_s_ += dt * static_cast<double>(bound_gpus_);
    last_event_ = now;
  }

  // The longest a gang was partly bound, counting those still partly bound at `end`.
  double LongestPartial(Clock::time_point end) const {
    double longest = longest_partial_s_;
    for (const Gang& gang : gangs_)
      if (!gang.is_placed && !gang.bound.empty())
        longest = std::max(longest, Seconds(end - gang.partial_since));
    return longest;
  }

  // REQUIRES: mutex_ held.
  void See(const json& pod, bool deleted) {
    const json& metadata = MemberOrNull(pod, "metadata");
    std::string gang_name = StringMemberOr(MemberOrNull(metadata, "labels"), kGangLabel);
    size_t dash = gang_name.rfind('-');
    if (dash == std::string::npos) return;
    size_t g = std::stoul(gang_name.substr(dash + 1));
    if (g >= gangs_.size()) return;
    Gang& gang = gangs_[g];
    std::string name = StringMemberOr(metadata, "name");
    bool bound = !deleted && !StringMemberOr(MemberOrNull(pod, "spec"), "nodeName").empty() &&
                 MemberOrNull(metadata, "deletionTimestamp").is_null();
    int64_t gpus = options_.gpus_per_pod;
    bool was = gang.bound.count(name) > 0;
    if (bound == was) return;
    if (bound) {
      if (gang.bound.empty() && !gang.is_placed) gang.partial_since = Clock::now();
      gang.bound.insert(name);
      bound_gpus_ += gpus;
      if (!gang.is_placed) incomplete_gpus_ += gpus;
    } else {
      gang.bound.erase(name);
      bound_gpus_ -= gpus;
      if (!gang.is_placed) incomplete_gpus_ -= gpus;
    }
    if (!gang.is_placed && static_cast<int>(gang.bound.size()) == gang.size) {
      gang.is_placed = true;
      gang.placed = Clock::now();
      longest_partial_s_ = std::max(longest_partial_s_, Seconds(gang.placed - gang.partial_since));
      incomplete_gpus_ -= gpus * gang.size;
      ++placed_;
      wake_.notify_all();
    }
    max_incomplete_gpus_ = std::max(max_incomplete_gpus_, incomplete_gpus_);
  }

  kube::Client& client_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Gang> gangs_;  // guarded by mutex_ (its names and sizes are fixed)
  Clock::time_point start_{}, last_event_{};
  size_t placed_ = 0, total_pods_ = 0;
  int64_t bound_gpus_ = 0, incomplete_gpus_ = 0, max_incomplete_gpus_ = 0;
  double incomplete_gpu_s_ = 0, bound_gpu_s_ = 0, longest_partial_s_ = 0;
  bool stopping_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("gang_load: the load of bench/kubernetes/gang_run.sh");
  Options options;
  app.add_option("--kubeconfig", options.kubeconfig)->required();
  app.add_option("--namespace", options.ns);
  app.add_option("--scheduler", options.scheduler);
  app.add_option("--gangs", options.gangs)->check(CLI::PositiveNumber);
  app.add_option("--min-pods", options.min_pods)->check(CLI::PositiveNumber);
  app.add_option("--max-pods", options.max_pods)->check(CLI::PositiveNumber);
  app.add_option("--gpus-per-pod", options.gpus_per_pod)->check(CLI::PositiveNumber);
  app.add_option("--runtime-min", options.runtime_min)->check(CLI::NonNegativeNumber);
  app.add_option("--runtime-max", options.runtime_max)->check(CLI::NonNegativeNumber);
  app.add_option("--seed", options.seed);
  app.add_option("--group", options.group)->check(CLI::IsMember({"podgroup", "kueue", "none"}));
  app.add_flag("--interleave", options.interleave);
  app.add_option("--workers", options.workers)->check(CLI::PositiveNumber);
  app.add_option("--timeout", options.timeout)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  if (options.max_pods < options.min_pods || options.runtime_max < options.runtime_min) {
    std::cerr << "gang_load: --max-pods/--runtime-max must not be below their minimum\n";
    return 2;
  }
  std::unique_ptr<kube::Client> client = bench::ConnectUnthrottled(options.kubeconfig);
  return GangRun(*client, options).Run();
}
