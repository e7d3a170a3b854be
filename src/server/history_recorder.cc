#include "server/history_recorder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "api/job.h"
#include "api/queue.h"
#include "api/service.h"
#include "cluster/indexes.h"
#include "controller/service_replicas.h"
#include "metrics/prometheus_text.h"

namespace strata::server {
namespace {

using history::Reading;

constexpr char kTtft[] = "strata_gateway_ttft_seconds";
constexpr char kTpot[] = "strata_gateway_tpot_seconds";
constexpr char kRequests[] = "strata_gateway_requests_total";
constexpr char kTokens[] = "strata_gateway_tokens_total";
constexpr char kGpuUtil[] = "DCGM_FI_DEV_GPU_UTIL";
constexpr char kCapacity[] = "strata_gpu_capacity_gpus";
constexpr char kAllocated[] = "strata_gpu_allocated_gpus";
constexpr char kBusy[] = "strata_gpu_busy_gpus";

std::string LabelOf(const metrics::Sample& sample, std::string_view name) {
  const std::string* value = sample.Label(name);
  return value ? *value : std::string();
}

double Gpus(const Quantity& quantity) { return static_cast<double>(quantity.milli()) / 1000.0; }

std::string Tenant(const std::string& label) {
  return label.empty() || label == "-" ? "no tenant" : label;
}

void QueueReadings(const api::Queue& queue, std::vector<Reading>& out) {
  const std::string scope = "queues/" + queue.metadata.name;
  std::map<std::string, std::pair<double, double>> by_resource;  // used, nominal
  for (const api::FlavorQuota& flavor : queue.spec.flavors) {
    for (const api::ResourceQuota& quota : flavor.resources) {
      by_resource[quota.resource].second += static_cast<double>(quota.nominal.milli());
      if (quota.resource != "gpu") continue;
      out.push_back({scope,
                     "nominal",
                     {{"flavor", flavor.flavor}, {"resource", "gpu"}},
                     Gpus(quota.nominal)});
    }
  }
  for (const api::FlavorUsage& flavor : queue.status.flavors_usage) {
    for (const api::ResourceUsage& usage : flavor.resources) {
      by_resource[usage.resource].first += static_cast<double>(usage.used.milli());
      if (usage.resource != "gpu") continue;
      history::Labels labels = {{"flavor", flavor.flavor}, {"resource", "gpu"}};
      out.push_back({scope, "used", labels, Gpus(usage.used)});
      out.push_back({scope, "borrowed", labels, Gpus(usage.borrowed)});
    }
  }
  double dominant = 0;
  for (const auto& [resource, figures] : by_resource) {
    if (figures.second > 0) dominant = std::max(dominant, figures.first / figures.second);
  }
  const double weight = static_cast<double>(queue.spec.weight.milli()) / 1000.0;
  out.push_back({scope, "share", {}, weight > 0 ? dominant / weight : dominant});
  out.push_back({scope, "pending", {}, static_cast<double>(queue.status.pending_workloads)});
  out.push_back({scope, "admitted", {}, static_cast<double>(queue.status.admitted_workloads)});
}

}  // namespace

double HistogramQuantile(const std::map<double, double>& cumulative, double q) {
  const double total = cumulative.empty() ? 0 : cumulative.rbegin()->second;
  if (!(total > 0)) return std::nan("");
  const double rank = q * total;
  double lower = 0;
  double below = 0;
  for (const auto& [le, count] : cumulative) {
    if (count >= rank) {
      if (std::isinf(le)) return lower;
      if (count == below) return le;
      return lower + (le - lower) * (rank - below) / (count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

HistoryRecorder::HistoryRecorder(cluster::Cache& cache, const metrics::Registry& registry,
                                 history::SeriesStore& store, const Clock& clock,
                                 GatewaySignalSource gateway)
    : cache_(cache), registry_(registry), store_(store), clock_(clock), gateway_(gateway) {}

double HistoryRecorder::Rate(const std::string& key, double value, double seconds) {
  seen_counters_[key] = value;
  if (!(seconds > 0)) return -1;
  // A series first seen since the previous sample started from zero in between.
  auto previous = counters_.find(key);
  const double before = previous == counters_.end() ? 0 : previous->second;
  const double increase = value >= before ? value - before : value;
  return increase / seconds;
}

Status HistoryRecorder::RecordOnce() {
  if (Status synced = cache_.Sync(); !synced.ok()) return synced;
  const TimePoint now = clock_.Now();
  const double seconds =
      last_ == TimePoint{} ? 0 : std::chrono::duration<double>(now - last_).count();
  const std::string page = registry_.RenderText(metrics::FamilySelection(
      {kTtft, kTpot, kRequests, kTokens, kGpuUtil, kCapacity, kAllocated, kBusy}));
  Result<std::vector<metrics::Sample>> parsed = metrics::ParsePrometheusText(page);
  if (!parsed) return parsed.error();
  const std::vector<metrics::Sample>& samples = *parsed;
  seen_counters_.clear();
  std::vector<Reading> out;

  // The gateway's series, per model.
  std::map<std::string, std::map<std::string, std::map<double, double>>> buckets;  // model, fam
  std::map<std::string, std::map<std::string, double>> by_model;  // model -> key -> value
  std::map<std::string, double> pod_util_sum;
  std::map<std::string, int> pod_util_count;
  std::map<std::string, std::string> pod_scope;
  for (const metrics::Sample& s : samples) {
    if (s.name == std::string(kTtft) + "_bucket" || s.name == std::string(kTpot) + "_bucket") {
      const std::string le = LabelOf(s, "le");
      const double bound = le == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(le);
      buckets[LabelOf(s, "model")][s.name][bound] += s.value;
    } else if (s.name == kRequests) {
      auto& model = by_model[LabelOf(s, "model")];
      model["requests_per_second\x1fversion\x1f" + LabelOf(s, "version")] += s.value;
      model["tenant_requests_per_second\x1ftenant\x1f" + Tenant(LabelOf(s, "tenant"))] += s.value;
      if (LabelOf(s, "code") == "429") {
        model["throttled_per_second\x1ftenant\x1f" + Tenant(LabelOf(s, "tenant"))] += s.value;
      }
    } else if (s.name == kTokens) {
      by_model[LabelOf(s, "model")]["tenant_tokens_per_second\x1ftenant\x1f" +
                                    Tenant(LabelOf(s, "tenant")) + "\x1fkind\x1f" +
                                    LabelOf(s, "kind")] += s.value;
    } else if (s.name == kGpuUtil) {
      const std::string job = LabelOf(s, "strata_job");
      const std::string pod = LabelOf(s, "pod");
      // A GPU shared by several holders is no one rank's.
      if (job.empty() || pod.empty() || job.find(',') != std::string::npos ||
          pod.find(',') != std::string::npos) {
        continue;
      }
      pod_scope[pod] = "jobs/" + LabelOf(s, "namespace") + "/" + job;
      pod_util_sum[pod] += s.value;
      ++pod_util_count[pod];
    } else if (s.name == kCapacity || s.name == kAllocated || s.name == kBusy) {
      const std::string scope = LabelOf(s, "scope");
      if (scope == "cluster") {
        const char* state = s.name == kCapacity    ? "capacity"
                            : s.name == kAllocated ? "allocated"
                                                   : "busy";
        out.push_back({"cluster", "gpus", {{"state", state}}, s.value});
      } else if (scope == "team" && s.name != kCapacity) {
        out.push_back({"cluster",
                       s.name == kAllocated ? "team_allocated_gpus" : "team_busy_gpus",
                       {{"team", LabelOf(s, "name")}},
                       s.value});
      }
    }
  }
  for (const auto& [pod, sum] : pod_util_sum) {
    out.push_back({pod_scope[pod], "gpu_utilisation", {{"pod", pod}}, sum / pod_util_count[pod]});
  }

  std::map<std::string, std::vector<const gateway::VersionSignals*>> signals_by_model;
  std::vector<gateway::VersionSignals> signals;
  if (gateway_) signals = gateway_();
  for (const gateway::VersionSignals& v : signals) signals_by_model[v.model].push_back(&v);

  for (const auto& service : cluster::StoredOf<api::Service>(cache_.List("Service"))) {
    const api::Service& s = service.value;
    const std::string scope = "services/" + s.metadata.namespace_name + "/" + s.metadata.name;
    for (const api::ServiceVersionStatus& v : s.status.versions) {
      history::Labels labels = {{"version", v.name}};
      out.push_back({scope, "desired", labels, static_cast<double>(v.desired_replicas)});
      out.push_back({scope, "ready", labels, static_cast<double>(v.ready_replicas)});
      out.push_back({scope, "replicas", labels, static_cast<double>(v.replicas)});
    }
    for (const api::ScaleDecisionRecord& d : s.status.decisions) {
      std::optional<TimePoint> at = ParseRfc3339(d.time);
      if (!at) continue;
      store_.AddEvent({*at,
                       scope,
                       "scale",
                       {{"version", d.version},
                        {"from", std::to_string(d.from)},
                        {"to", std::to_string(d.to)},
                        {"reason", d.reason}}});
    }
    const std::string& model = s.spec.model;
    for (const std::string family : {kTtft, kTpot}) {
      auto model_buckets = buckets.find(model);
      if (model_buckets == buckets.end()) continue;
      auto now_buckets = model_buckets->second.find(family + "_bucket");
      if (now_buckets == model_buckets->second.end()) continue;
      std::map<double, double> window = now_buckets->second;
      auto& previous = histograms_[model + "\x1f" + family];
      const bool restarted = !previous.empty() && !window.empty() &&
                             window.rbegin()->second < previous.rbegin()->second;
      if (!restarted && !previous.empty()) {
        for (auto& [le, count] : window) count -= previous[le];
      }
      previous = now_buckets->second;
      if (last_ == TimePoint{}) continue;  // the first sample covers everything so far
      const std::string name = family == kTtft ? "ttft_seconds" : "tpot_seconds";
      for (double q : {0.5, 0.99}) {
        const double value = HistogramQuantile(window, q);
        if (!std::isnan(value)) {
          out.push_back({scope, name, {{"quantile", q == 0.5 ? "0.5" : "0.99"}}, value});
        }
      }
    }
    for (const auto& [key, value] : by_model[model]) {
      const double rate = Rate(model + "\x1f" + key, value, seconds);
      if (rate < 0) continue;
      // key: name, then label name and value pairs, joined with \x1f.
      std::vector<std::string> parts;
      size_t from = 0;
      for (size_t at; (at = key.find('\x1f', from)) != std::string::npos; from = at + 1) {
        parts.push_back(key.substr(from, at - from));
      }
      parts.push_back(key.substr(from));
      history::Labels labels;
      for (size_t i = 1; i + 1 < parts.size(); i += 2) labels.emplace_back(parts[i], parts[i + 1]);
      out.push_back({scope, parts[0], std::move(labels), rate});
    }
    std::map<std::string, std::string> replica_of;  // endpoint -> the replica's leader pod
    for (const controller::Replica& replica :
         controller::GroupReplicas(cluster::StoredOf<api::Pod>(cache_.Indexed(
             cluster::kPodsByOwner,
             cluster::OwnerIndexValue("Service", s.metadata.namespace_name, s.metadata.name))))) {
      if (!replica.pods.empty())
        replica_of[replica.Endpoint()] = replica.pods[0].value.metadata.name;
    }
    for (const gateway::VersionSignals* v : signals_by_model[model]) {
      const std::string key = model + "\x1f" + v->version;
      const double good = static_cast<double>(v->answered_total - v->late_total);
      if (double rate = Rate(key + "\x1fgood", good, seconds); rate >= 0) {
        out.push_back({scope, "goodput_per_second", {{"version", v->version}}, rate});
      }
      if (double rate = Rate(key + "\x1ftokens", static_cast<double>(v->tokens_total), seconds);
          rate >= 0) {
        out.push_back({scope, "tokens_per_second", {{"version", v->version}}, rate});
      }
      for (const gateway::EndpointSignals& e : v->endpoints) {
        auto name = replica_of.find(e.id);
        const std::string replica = name == replica_of.end() ? e.id : name->second;
        const std::string endpoint_key = key + "\x1f" + e.id;
        const double queries = Rate(endpoint_key + "\x1fqueries", e.prefix_cache_queries, seconds);
        const double hits = Rate(endpoint_key + "\x1fhits", e.prefix_cache_hits, seconds);
        if (hits >= 0)
          out.push_back({scope, "prefix_hits_per_second", {{"replica", replica}}, hits});
        if (queries > 0) {
          out.push_back({scope, "prefix_hit_ratio", {{"replica", replica}}, hits / queries});
        }
      }
    }
  }

  for (const auto& queue : cluster::StoredOf<api::Queue>(cache_.List("Queue"))) {
    QueueReadings(queue.value, out);
  }
  double pending_jobs = 0;
  for (const cluster::ObjectRef& ref : cache_.List("Job")) {
    const api::Job* job = ref->As<api::Job>();
    if (job == nullptr) continue;
    if (job->status.phase == api::JobPhase::kPending) ++pending_jobs;
    // Each checkpoint the job's status names once: its newest checkpoint is all it keeps.
    if (std::optional<TimePoint> at = ParseRfc3339(job->status.last_checkpoint_time)) {
      store_.AddEvent({*at,
                       "jobs/" + job->metadata.namespace_name + "/" + job->metadata.name,
                       "checkpoint",
                       {}});
    }
  }
  out.push_back({"cluster", "pending_jobs", {}, pending_jobs});

  store_.Record(now, out);
  counters_ = std::move(seen_counters_);
  last_ = now;
  return Status::Ok();
}

}  // namespace strata::server
