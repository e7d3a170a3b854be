#include "gateway/config.h"

#include <fmt/format.h>

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/field_decoder.h"
#include "common/field_errors.h"
#include "common/yaml_json.h"

namespace strata::gateway {
namespace {

// A duration in whole milliseconds, at least 1.
Result<Duration> Millis(const FieldDecoder& object, std::string_view key, Duration fallback) {
  ASSIGN_OR_RETURN(
      int64_t ms,
      object.Integer(key, std::chrono::duration_cast<std::chrono::milliseconds>(fallback).count(),
                     1));
  return std::chrono::milliseconds(ms);
}

// A count of at least `minimum` that fits an int.
Result<int> SmallInt(const FieldDecoder& object, std::string_view key, int fallback, int minimum) {
  ASSIGN_OR_RETURN(int64_t value,
                   object.Integer(key, fallback, minimum, std::numeric_limits<int>::max()));
  return static_cast<int>(value);
}

// A size of at least 1.
Result<size_t> Size(const FieldDecoder& object, std::string_view key, size_t fallback) {
  ASSIGN_OR_RETURN(int64_t value, object.Integer(key, static_cast<int64_t>(fallback), 1));
  return static_cast<size_t>(value);
}

Status ValidateEndpoint(const std::string& endpoint, const std::string& path) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == endpoint.size()) {
    return InvalidField(path, fmt::format("\"{}\" is not host:port", endpoint));
  }
  int port = 0;
  for (size_t i = colon + 1; i < endpoint.size(); ++i) {
    if (endpoint[i] < '0' || endpoint[i] > '9' || port > 65535) {
      return InvalidField(path, fmt::format("\"{}\" has a bad port", endpoint));
    }
    port = port * 10 + (endpoint[i] - '0');
  }
  if (port == 0 || port > 65535) {
    return InvalidField(path, fmt::format("\"{}\" has a bad port", endpoint));
  }
  return Status::Ok();
}

// Reads one model's fields; ValidateModels checks what they say.
Result<ModelConfig> ParseModel(const FieldDecoder& node) {
  ModelConfig model;
  ASSIGN_OR_RETURN(model.name, node.RequiredString("name"));
  ASSIGN_OR_RETURN(model.adapters, node.StringList("adapters"));
  ASSIGN_OR_RETURN(model.ttft_objective, Millis(node, "ttftObjectiveMs", model.ttft_objective));
  ASSIGN_OR_RETURN(model.tenants, node.StringList("tenants"));
  ASSIGN_OR_RETURN(FieldDecoder objectives, node.Mapping("objectives"));
  for (const std::string& name : objectives.Keys()) {
    ASSIGN_OR_RETURN(std::string priority,
                     objectives.Choice(name, {"critical", "standard", "sheddable"}, "standard"));
    model.objectives[name] = *PriorityClassFromName(priority);  // one of the choices above
  }
  ASSIGN_OR_RETURN(
      std::vector<FieldDecoder> versions,
      node.ObjectList("versions", {"name", "weight", "endpoints"}, Presence::kRequired));
  for (const FieldDecoder& v : versions) {
    VersionConfig version;
    ASSIGN_OR_RETURN(version.name, v.RequiredString("name"));
    ASSIGN_OR_RETURN(version.weight, v.Integer("weight", version.weight, 0));
    ASSIGN_OR_RETURN(version.endpoints, v.StringList("endpoints", Presence::kRequired));
    model.versions.push_back(std::move(version));
  }
  return model;
}

Status ValidateVersions(const ModelConfig& model, const std::string& path) {
  if (model.versions.empty()) return InvalidField(path + ".versions", "must be a non-empty list");
  int64_t total_weight = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < model.versions.size(); ++i) {
    const std::string vpath = fmt::format("{}.versions[{}]", path, i);
    const VersionConfig& version = model.versions[i];
    if (version.name.empty()) return InvalidField(vpath + ".name", "must be a non-empty string");
    if (!names.insert(version.name).second) {
      return InvalidField(vpath + ".name", fmt::format("duplicate version \"{}\"", version.name));
    }
    if (version.weight < 0)
      return InvalidField(vpath + ".weight", "must be a non-negative integer");
    total_weight += version.weight;
    for (size_t e = 0; e < version.endpoints.size(); ++e) {
      Status endpoint =
          ValidateEndpoint(version.endpoints[e], fmt::format("{}.endpoints[{}]", vpath, e));
      if (!endpoint.ok()) return endpoint;
    }
  }
  if (total_weight == 0) return InvalidField(path + ".versions", "weights must not all be zero");
  return Status::Ok();
}

Result<TenantConfig> ParseTenant(const FieldDecoder& node) {
  TenantConfig tenant;
  ASSIGN_OR_RETURN(tenant.name, node.RequiredString("name"));
  ASSIGN_OR_RETURN(tenant.keys, node.StringList("keys", Presence::kRequired));
  ASSIGN_OR_RETURN(tenant.tokens_per_minute,
                   node.Integer("tokensPerMinute", tenant.tokens_per_minute, 0));
  ASSIGN_OR_RETURN(std::string priority,
                   node.Choice("priority", {"critical", "standard", "sheddable"}, "standard"));
  tenant.priority = *PriorityClassFromName(priority);  // one of the choices above
  return tenant;
}

Result<LimitsConfig> ParseLimits(const FieldDecoder& root) {
  ASSIGN_OR_RETURN(
      FieldDecoder node,
      root.Object("limits", {"maxHeaderBytes", "maxBodyBytes", "readTimeoutMs", "idleTimeoutMs",
                             "upstreamTimeoutMs", "maxInFlight", "maxQueued", "maxQueueWaitMs",
                             "retries", "ejectionMs", "activationTimeoutMs"}));
  LimitsConfig limits;
  ASSIGN_OR_RETURN(limits.max_header_bytes, Size(node, "maxHeaderBytes", limits.max_header_bytes));
  ASSIGN_OR_RETURN(limits.max_body_bytes, Size(node, "maxBodyBytes", limits.max_body_bytes));
  ASSIGN_OR_RETURN(limits.read_timeout, Millis(node, "readTimeoutMs", limits.read_timeout));
  ASSIGN_OR_RETURN(limits.idle_timeout, Millis(node, "idleTimeoutMs", limits.idle_timeout));
  ASSIGN_OR_RETURN(limits.upstream_timeout,
                   Millis(node, "upstreamTimeoutMs", limits.upstream_timeout));
  ASSIGN_OR_RETURN(limits.max_in_flight, node.Integer("maxInFlight", limits.max_in_flight, 1));
  ASSIGN_OR_RETURN(limits.max_queued, node.Integer("maxQueued", limits.max_queued, 0));
  ASSIGN_OR_RETURN(limits.max_queue_wait, Millis(node, "maxQueueWaitMs", limits.max_queue_wait));
  ASSIGN_OR_RETURN(limits.retries, SmallInt(node, "retries", limits.retries, 0));
  ASSIGN_OR_RETURN(limits.ejection, Millis(node, "ejectionMs", limits.ejection));
  ASSIGN_OR_RETURN(limits.activation_timeout,
                   Millis(node, "activationTimeoutMs", limits.activation_timeout));
  return limits;
}

}  // namespace

PriorityClass PriorityClassOfObjective(int64_t priority) {
  if (priority < 0) return PriorityClass::kSheddable;
  return priority == 0 ? PriorityClass::kStandard : PriorityClass::kCritical;
}

std::string_view PriorityClassName(PriorityClass priority) {
  switch (priority) {
    case PriorityClass::kCritical:
      return "critical";
    case PriorityClass::kStandard:
      return "standard";
    case PriorityClass::kSheddable:
      return "sheddable";
  }
  return "unknown";
}

std::optional<PriorityClass> PriorityClassFromName(std::string_view name) {
  for (PriorityClass priority :
       {PriorityClass::kCritical, PriorityClass::kStandard, PriorityClass::kSheddable}) {
    if (PriorityClassName(priority) == name) return priority;
  }
  return std::nullopt;
}

Status ValidateModels(const std::vector<ModelConfig>& models) {
  std::set<std::string> served_names;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string path = fmt::format("models[{}]", i);
    const ModelConfig& model = models[i];
    if (model.name.empty()) return InvalidField(path + ".name", "must be a non-empty string");
    if (!served_names.insert(model.name).second) {
      return InvalidField(path + ".name", fmt::format("\"{}\" is served twice", model.name));
    }
    for (size_t a = 0; a < model.adapters.size(); ++a) {
      const std::string& adapter = model.adapters[a];
      const std::string apath = fmt::format("{}.adapters[{}]", path, a);
      if (adapter.empty()) return InvalidField(apath, "must be a non-empty string");
      if (!served_names.insert(adapter).second) {
        return InvalidField(apath, fmt::format("\"{}\" is served twice", adapter));
      }
    }
    if (model.ttft_objective <= Duration::zero()) {
      return InvalidField(path + ".ttftObjectiveMs", "must be an integer >= 1");
    }
    if (Status versions = ValidateVersions(model, path); !versions.ok()) return versions;
  }
  return Status::Ok();
}

namespace {

// The picker's profile: `policy` names a preset; `scorers` (each {name, weight}) replaces its
// scorers; `tieBreak` says where equal totals go.
Result<PickerOptions> ParsePicker(const FieldDecoder& root) {
  PickerOptions picker;
  ASSIGN_OR_RETURN(picker.policy, root.String("policy", picker.policy));
  ASSIGN_OR_RETURN(std::vector<FieldDecoder> scorers,
                   root.ObjectList("scorers", {"name", "weight"}));
  if (root.Has("scorers") && scorers.empty())
    return Err(root.Error("scorers", "must not be empty"));
  for (const FieldDecoder& entry : scorers) {
    ASSIGN_OR_RETURN(std::string name, entry.RequiredString("name"));
    ASSIGN_OR_RETURN(double weight, entry.Number("weight", 1.0, 0));
    picker.scorers.push_back(WeightedScorer{std::move(name), weight});
  }
  if (root.Has("tieBreak")) {
    ASSIGN_OR_RETURN(std::string tie, root.Choice("tieBreak", {"rotate", "least-loaded"}, ""));
    if (picker.scorers.empty()) return Err(root.Error("tieBreak", "only with scorers"));
    picker.ties_to_least_loaded = tie == "least-loaded";
  }
  // The preset first, so that an unknown one is reported at `policy`; then the scorers, whose
  // errors name their own fields.
  PickerOptions preset = picker;
  preset.scorers.clear();
  if (Result<PickerProfile> known = ResolvePickerProfile(preset); !known) {
    return Err(known.error().WithPrefix("policy"));
  }
  if (Result<PickerProfile> profile = ResolvePickerProfile(picker); !profile) {
    return Err(profile.error());
  }
  return picker;
}

}  // namespace

Result<GatewayConfig> ParseGatewayConfig(std::string_view text, ModelSource source) {
  ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, ParseYamlDocuments(text));
  if (documents.size() != 1) {
    return Err(InvalidArgumentError(
        fmt::format("expected one YAML document, found {}", documents.size())));
  }
  ASSIGN_OR_RETURN(FieldDecoder root,
                   FieldDecoder::Of(documents[0].value, "",
                                    {"policy", "scorers", "tieBreak", "scrapeIntervalMs", "threads",
                                     "limits", "models", "tenants"}));
  GatewayConfig config;
  ASSIGN_OR_RETURN(config.picker, ParsePicker(root));
  ASSIGN_OR_RETURN(config.scrape_interval,
                   Millis(root, "scrapeIntervalMs", config.scrape_interval));
  ASSIGN_OR_RETURN(config.threads, SmallInt(root, "threads", config.threads, 0));
  ASSIGN_OR_RETURN(config.limits, ParseLimits(root));

  const bool from_file = source == ModelSource::kFile;
  ASSIGN_OR_RETURN(
      std::vector<FieldDecoder> models,
      root.ObjectList("models",
                      {"name", "adapters", "versions", "ttftObjectiveMs", "tenants", "objectives"},
                      from_file ? Presence::kRequired : Presence::kOptional));
  if (!from_file && !models.empty()) {
    return Err(root.Error(
        "models", "must be empty; under strata up the gateway serves the Services' models"));
  }
  for (const FieldDecoder& node : models) {
    ASSIGN_OR_RETURN(ModelConfig model, ParseModel(node));
    config.models.push_back(std::move(model));
  }
  RETURN_IF_ERROR(ValidateModels(config.models));

  ASSIGN_OR_RETURN(std::vector<FieldDecoder> tenants,
                   root.ObjectList("tenants", {"name", "keys", "tokensPerMinute", "priority"}));
  for (const FieldDecoder& node : tenants) {
    ASSIGN_OR_RETURN(TenantConfig tenant, ParseTenant(node));
    config.tenants.push_back(std::move(tenant));
  }
  RETURN_IF_ERROR(ValidateTenants(config.tenants));
  return config;
}

Status ValidateTenants(const std::vector<TenantConfig>& tenants) {
  std::set<std::string> keys;
  std::set<std::string> names;
  for (size_t t = 0; t < tenants.size(); ++t) {
    const TenantConfig& tenant = tenants[t];
    const std::string path = IndexPath("tenants", t);
    if (tenant.name.empty()) return InvalidField(path + ".name", "must be a non-empty string");
    if (!names.insert(tenant.name).second) {
      return InvalidField(path + ".name", fmt::format("duplicate tenant \"{}\"", tenant.name));
    }
    if (tenant.tokens_per_minute < 0) {
      return InvalidField(path + ".tokensPerMinute", "must be a non-negative integer");
    }
    for (size_t k = 0; k < tenant.keys.size(); ++k) {
      const std::string key_path = IndexPath(path + ".keys", k);
      if (tenant.keys[k].empty()) return InvalidField(key_path, "must be a non-empty string");
      if (!keys.insert(tenant.keys[k]).second) return InvalidField(key_path, "key used twice");
    }
  }
  return Status::Ok();
}

Result<GatewayConfig> LoadGatewayConfig(const std::string& path, ModelSource source) {
  std::ifstream in(path);
  if (!in) return Err(NotFoundError(fmt::format("{}: cannot open", path)));
  std::stringstream text;
  text << in.rdbuf();
  auto config = ParseGatewayConfig(text.str(), source);
  if (!config) return Err(config.error().WithPrefix(path));
  return config;
}

}  // namespace strata::gateway
