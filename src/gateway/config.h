#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gateway/picker.h"

namespace strata::gateway {

// One version of a served model: its share of the traffic and the replicas that serve it.
struct VersionConfig {
  std::string name;
  int64_t weight = 1;  // relative share of unpinned traffic, >= 0
  // "host:port" of each ready replica. Empty while the version is scaled to zero or its first
  // replica starts: requests then wait for one (see LimitsConfig::activation_timeout).
  std::vector<std::string> endpoints;

  bool operator==(const VersionConfig&) const = default;
};

// Priority classes of the over-quota queue, most important first.
enum class PriorityClass { kCritical = 0, kStandard = 1, kSheddable = 2 };
inline constexpr int kPriorityClassCount = 3;

// "critical", "standard", "sheddable".
std::string_view PriorityClassName(PriorityClass priority);
// The class PriorityClassName names `name`; nullopt for any other name.
std::optional<PriorityClass> PriorityClassFromName(std::string_view name);
// The class of a GAIE InferenceObjective's integer priority: negative sheddable (GAIE's
// "sheddable" requests), 0 standard, positive critical.
PriorityClass PriorityClassOfObjective(int64_t priority);

// A served model: the name clients put in `model`, its LoRA adapters (adapter names are
// accepted as `model` too and route to replicas that have them), and its versions.
struct ModelConfig {
  std::string name;
  std::vector<std::string> adapters;
  std::vector<VersionConfig> versions;
  // A request whose first token comes later than this, or never, counts as late in the
  // signals the autoscaler reads (GatewayServer::Signals).
  Duration ttft_objective = std::chrono::seconds(2);
  // The tenants (TenantConfig::name) that may call it; empty: every caller. A model that names
  // tenants refuses a caller that is none of them, and every caller of a gateway without tenants.
  std::vector<std::string> tenants;
  // Request classes by the name a client gives in the x-gateway-inference-objective header (a
  // GAIE InferenceObjective): such a request waits for quota in its objective's class instead of
  // its tenant's. A name not listed leaves the tenant's class, as GAIE's picker gives an unknown
  // objective the default priority.
  std::map<std::string, PriorityClass, std::less<>> objectives;

  bool operator==(const ModelConfig&) const = default;
};

// A tenant: who a bearer key belongs to and how many tokens a minute it may use.
struct TenantConfig {
  std::string name;
  std::vector<std::string> keys;
  int64_t tokens_per_minute = 0;  // 0: unlimited
  PriorityClass priority = PriorityClass::kStandard;

  bool operator==(const TenantConfig&) const = default;
};

// Protocol and resource limits of the gateway's listener.
struct LimitsConfig {
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 4 * 1024 * 1024;
  Duration read_timeout = std::chrono::seconds(30);  // to receive one whole request; then 408
  Duration idle_timeout = std::chrono::seconds(60);  // keep-alive connection with no request
  Duration upstream_timeout = std::chrono::seconds(600);
  int64_t max_in_flight = 4096;  // per gateway; beyond it: 503
  int64_t max_queued = 1024;     // over-quota waiters; beyond it: 429 at once
  Duration max_queue_wait = std::chrono::seconds(5);
  int retries = 2;  // extra attempts on other replicas before any byte is sent
  Duration ejection = std::chrono::seconds(5);  // how long a failed replica stays out
  // How long a request for a version with no replica waits for one (the activator) before a
  // 503. Waiting requests count toward max_in_flight, and with the quota waiters toward
  // max_queued; beyond either: 503 at once.
  Duration activation_timeout = std::chrono::seconds(120);
};

// The whole gateway configuration, as loaded from YAML. Plain data; thread-compatible.
struct GatewayConfig {
  std::vector<ModelConfig> models;
  std::vector<TenantConfig> tenants;  // empty: no authentication
  PickerOptions picker;
  LimitsConfig limits;
  Duration scrape_interval = std::chrono::milliseconds(100);
  int threads = 0;  // event loops; 0: one per core
};

// Where a gateway's served models come from.
enum class ModelSource {
  kFile,      // its configuration (`strata gateway`): at least one model
  kServices,  // the Services (`strata up`, through SetRoutes): the configuration lists none
};

// Parses and validates a gateway configuration (YAML or JSON):
//
//   policy: strata            # picker preset (PickerPresetNames)
//   scorers:                  # instead of the preset's scorers (scorer.h): name and weight
//   - {name: prefix, weight: 3}
//   - {name: queue, weight: 2}
//   tieBreak: rotate          # with scorers: "rotate" or "least-loaded"
//   scrapeIntervalMs: 100
//   threads: 2
//   limits: {maxHeaderBytes, maxBodyBytes, readTimeoutMs, idleTimeoutMs, upstreamTimeoutMs,
//            maxInFlight, maxQueued, maxQueueWaitMs, retries, ejectionMs, activationTimeoutMs}
//   models:
//   - name: llama-3-8b
//     adapters: [sql-lora]
//     ttftObjectiveMs: 2000
//     tenants: [team-a]       # who may call it (default: every caller)
//     objectives: {batch: sheddable}  # x-gateway-inference-objective names -> class
//     versions:
//     - {name: v1, weight: 90, endpoints: ["127.0.0.1:8001"]}
//   tenants:
//   - {name: team-a, keys: [sk-a], tokensPerMinute: 100000, priority: standard}
//
// On failure returns kInvalidArgument naming the field path, e.g.
// "models[0].versions[1].weight: must be a non-negative integer". Unknown fields are errors.
// A file's versions list at least one endpoint each (a file has no way to add one later). With
// ModelSource::kServices, `models` may be left out, and must be empty when given.
Result<GatewayConfig> ParseGatewayConfig(std::string_view text,
                                         ModelSource source = ModelSource::kFile);

// Checks a set of served models as ParseGatewayConfig does, except that a version may have no
// endpoint: non-empty names, unique version names within a model, non-negative weights not all
// zero, endpoints of the form host:port, a positive TTFT objective, and no name (model or
// adapter) served twice. Returns kInvalidArgument naming the field path, e.g.
// "models[1].versions[0].endpoints[2]: \"h:0\" has a bad port".
Status ValidateModels(const std::vector<ModelConfig>& models);

// Checks a set of tenants as ParseGatewayConfig does: non-empty names, each used once, quotas
// not negative, keys non-empty and each held by one tenant. Returns kInvalidArgument naming the
// field path, e.g. "tenants[1].keys[0]: key used twice".
Status ValidateTenants(const std::vector<TenantConfig>& tenants);

// Reads and parses the file at `path`; errors are prefixed with the path.
Result<GatewayConfig> LoadGatewayConfig(const std::string& path,
                                        ModelSource source = ModelSource::kFile);

}  // namespace strata::gateway
