#include "gateway/config.h"

#include <fmt/format.h>

#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include "common/yaml_json.h"

namespace strata::gateway {
namespace {

using nlohmann::json;

Status FieldError(const std::string& path, std::string_view message) {
  return InvalidArgumentError(fmt::format("{}: {}", path, message));
}

// Rejects keys of `object` not in `known`, so a misspelt field is an error, never ignored.
Status CheckKnownFields(const json& object, const std::string& path,
                        std::initializer_list<std::string_view> known) {
  if (!object.is_object()) return FieldError(path, "must be a mapping");
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (!found) {
      return FieldError(path.empty() ? key : path + "." + key, "unknown field");
    }
  }
  return Status::Ok();
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

Result<std::string> RequiredString(const json& object, const std::string& path,
                                   std::string_view key) {
  auto it = object.find(key);
  if (it == object.end()) return Err(FieldError(Join(path, key), "required"));
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    return Err(FieldError(Join(path, key), "must be a non-empty string"));
  }
  return it->get<std::string>();
}

// Sets *out from object[key] when present. REQUIRES the value to be an integer in [minimum, ∞).
Status OptionalInt(const json& object, const std::string& path, std::string_view key,
                   int64_t minimum, int64_t* out) {
  auto it = object.find(key);
  if (it == object.end()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < minimum) {
    return FieldError(Join(path, key), minimum == 0
                                           ? "must be a non-negative integer"
                                           : fmt::format("must be an integer >= {}", minimum));
  }
  *out = it->get<int64_t>();
  return Status::Ok();
}

Status OptionalMillis(const json& object, const std::string& path, std::string_view key,
                      Duration* out) {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(*out).count();
  if (Status s = OptionalInt(object, path, key, 1, &ms); !s.ok()) return s;
  *out = std::chrono::milliseconds(ms);
  return Status::Ok();
}

Status OptionalSize(const json& object, const std::string& path, std::string_view key,
                    size_t* out) {
  int64_t value = static_cast<int64_t>(*out);
  if (Status s = OptionalInt(object, path, key, 1, &value); !s.ok()) return s;
  *out = static_cast<size_t>(value);
  return Status::Ok();
}

Result<std::vector<std::string>> StringList(const json& object, const std::string& path,
                                            std::string_view key, bool required) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end()) {
    if (required) return Err(FieldError(Join(path, key), "required"));
    return out;
  }
  if (!it->is_array()) return Err(FieldError(Join(path, key), "must be a list of strings"));
  for (size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
      return Err(
          FieldError(fmt::format("{}[{}]", Join(path, key), i), "must be a non-empty string"));
    }
    out.push_back(item.get<std::string>());
  }
  if (required && out.empty()) return Err(FieldError(Join(path, key), "must not be empty"));
  return out;
}

Status ValidateEndpoint(const std::string& endpoint, const std::string& path) {
  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == endpoint.size()) {
    return FieldError(path, fmt::format("\"{}\" is not host:port", endpoint));
  }
  int port = 0;
  for (size_t i = colon + 1; i < endpoint.size(); ++i) {
    if (endpoint[i] < '0' || endpoint[i] > '9' || port > 65535) {
      return FieldError(path, fmt::format("\"{}\" has a bad port", endpoint));
    }
    port = port * 10 + (endpoint[i] - '0');
  }
  if (port == 0 || port > 65535) {
    return FieldError(path, fmt::format("\"{}\" has a bad port", endpoint));
  }
  return Status::Ok();
}

// Reads one model's fields; ValidateModels checks what they say.
Result<ModelConfig> ParseModel(const json& node, const std::string& path) {
  RETURN_IF_ERROR(
      CheckKnownFields(node, path, {"name", "adapters", "versions", "ttftObjectiveMs"}));
  ModelConfig model;
  ASSIGN_OR_RETURN(model.name, RequiredString(node, path, "name"));
  ASSIGN_OR_RETURN(model.adapters, StringList(node, path, "adapters", false));
  RETURN_IF_ERROR(OptionalMillis(node, path, "ttftObjectiveMs", &model.ttft_objective));
  auto versions = node.find("versions");
  if (versions == node.end()) return Err(FieldError(path + ".versions", "required"));
  if (!versions->is_array()) return Err(FieldError(path + ".versions", "must be a non-empty list"));
  for (size_t i = 0; i < versions->size(); ++i) {
    const std::string vpath = fmt::format("{}.versions[{}]", path, i);
    const json& v = (*versions)[i];
    RETURN_IF_ERROR(CheckKnownFields(v, vpath, {"name", "weight", "endpoints"}));
    VersionConfig version;
    ASSIGN_OR_RETURN(version.name, RequiredString(v, vpath, "name"));
    RETURN_IF_ERROR(OptionalInt(v, vpath, "weight", 0, &version.weight));
    ASSIGN_OR_RETURN(version.endpoints, StringList(v, vpath, "endpoints", true));
    model.versions.push_back(std::move(version));
  }
  return model;
}

Status ValidateVersions(const ModelConfig& model, const std::string& path) {
  if (model.versions.empty()) return FieldError(path + ".versions", "must be a non-empty list");
  int64_t total_weight = 0;
  std::set<std::string> names;
  for (size_t i = 0; i < model.versions.size(); ++i) {
    const std::string vpath = fmt::format("{}.versions[{}]", path, i);
    const VersionConfig& version = model.versions[i];
    if (version.name.empty()) return FieldError(vpath + ".name", "must be a non-empty string");
    if (!names.insert(version.name).second) {
      return FieldError(vpath + ".name", fmt::format("duplicate version \"{}\"", version.name));
    }
    if (version.weight < 0) return FieldError(vpath + ".weight", "must be a non-negative integer");
    total_weight += version.weight;
    for (size_t e = 0; e < version.endpoints.size(); ++e) {
      Status endpoint =
          ValidateEndpoint(version.endpoints[e], fmt::format("{}.endpoints[{}]", vpath, e));
      if (!endpoint.ok()) return endpoint;
    }
  }
  if (total_weight == 0) return FieldError(path + ".versions", "weights must not all be zero");
  return Status::Ok();
}

Result<TenantConfig> ParseTenant(const json& node, const std::string& path) {
  RETURN_IF_ERROR(CheckKnownFields(node, path, {"name", "keys", "tokensPerMinute", "priority"}));
  TenantConfig tenant;
  ASSIGN_OR_RETURN(tenant.name, RequiredString(node, path, "name"));
  ASSIGN_OR_RETURN(tenant.keys, StringList(node, path, "keys", true));
  RETURN_IF_ERROR(OptionalInt(node, path, "tokensPerMinute", 0, &tenant.tokens_per_minute));
  auto priority = node.find("priority");
  if (priority != node.end()) {
    const std::string value = priority->is_string() ? priority->get<std::string>() : "";
    if (value == "critical") {
      tenant.priority = PriorityClass::kCritical;
    } else if (value == "standard") {
      tenant.priority = PriorityClass::kStandard;
    } else if (value == "sheddable") {
      tenant.priority = PriorityClass::kSheddable;
    } else {
      return Err(FieldError(path + ".priority", "must be critical, standard or sheddable"));
    }
  }
  return tenant;
}

Result<LimitsConfig> ParseLimits(const json& node) {
  const std::string path = "limits";
  LimitsConfig result;
  LimitsConfig* limits = &result;
  RETURN_IF_ERROR(
      CheckKnownFields(node, path,
                       {"maxHeaderBytes", "maxBodyBytes", "readTimeoutMs", "idleTimeoutMs",
                        "upstreamTimeoutMs", "maxInFlight", "maxQueued", "maxQueueWaitMs",
                        "retries", "ejectionMs", "activationTimeoutMs"}));
  RETURN_IF_ERROR(OptionalSize(node, path, "maxHeaderBytes", &limits->max_header_bytes));
  RETURN_IF_ERROR(OptionalSize(node, path, "maxBodyBytes", &limits->max_body_bytes));
  RETURN_IF_ERROR(OptionalMillis(node, path, "readTimeoutMs", &limits->read_timeout));
  RETURN_IF_ERROR(OptionalMillis(node, path, "idleTimeoutMs", &limits->idle_timeout));
  RETURN_IF_ERROR(OptionalMillis(node, path, "upstreamTimeoutMs", &limits->upstream_timeout));
  RETURN_IF_ERROR(OptionalInt(node, path, "maxInFlight", 1, &limits->max_in_flight));
  RETURN_IF_ERROR(OptionalInt(node, path, "maxQueued", 0, &limits->max_queued));
  RETURN_IF_ERROR(OptionalMillis(node, path, "maxQueueWaitMs", &limits->max_queue_wait));
  int64_t retries = limits->retries;
  RETURN_IF_ERROR(OptionalInt(node, path, "retries", 0, &retries));
  limits->retries = static_cast<int>(retries);
  RETURN_IF_ERROR(OptionalMillis(node, path, "ejectionMs", &limits->ejection));
  RETURN_IF_ERROR(OptionalMillis(node, path, "activationTimeoutMs", &limits->activation_timeout));
  return result;
}

}  // namespace

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

Status ValidateModels(const std::vector<ModelConfig>& models) {
  std::set<std::string> served_names;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string path = fmt::format("models[{}]", i);
    const ModelConfig& model = models[i];
    if (model.name.empty()) return FieldError(path + ".name", "must be a non-empty string");
    if (!served_names.insert(model.name).second) {
      return FieldError(path + ".name", fmt::format("\"{}\" is served twice", model.name));
    }
    for (size_t a = 0; a < model.adapters.size(); ++a) {
      const std::string& adapter = model.adapters[a];
      const std::string apath = fmt::format("{}.adapters[{}]", path, a);
      if (adapter.empty()) return FieldError(apath, "must be a non-empty string");
      if (!served_names.insert(adapter).second) {
        return FieldError(apath, fmt::format("\"{}\" is served twice", adapter));
      }
    }
    if (model.ttft_objective <= Duration::zero()) {
      return FieldError(path + ".ttftObjectiveMs", "must be an integer >= 1");
    }
    if (Status versions = ValidateVersions(model, path); !versions.ok()) return versions;
  }
  return Status::Ok();
}

namespace {

// The picker's profile: `policy` names a preset; `scorers` (each {name, weight}) replaces its
// scorers; `tieBreak` says where equal totals go.
Status ParsePicker(const json& root, PickerOptions* picker) {
  if (auto policy = root.find("policy"); policy != root.end()) {
    if (!policy->is_string()) return FieldError("policy", "must be a string");
    picker->policy = policy->get<std::string>();
  }
  if (auto scorers = root.find("scorers"); scorers != root.end()) {
    if (!scorers->is_array() || scorers->empty()) {
      return FieldError("scorers", "must be a non-empty list");
    }
    for (size_t i = 0; i < scorers->size(); ++i) {
      const json& entry = (*scorers)[i];
      const std::string path = fmt::format("scorers[{}]", i);
      if (Status known = CheckKnownFields(entry, path, {"name", "weight"}); !known.ok()) {
        return known;
      }
      Result<std::string> name = RequiredString(entry, path, "name");
      if (!name) return name.error();
      WeightedScorer scorer{*name, 1.0};
      if (auto weight = entry.find("weight"); weight != entry.end()) {
        if (!weight->is_number() || weight->get<double>() < 0) {
          return FieldError(path + ".weight", "must be a number >= 0");
        }
        scorer.weight = weight->get<double>();
      }
      picker->scorers.push_back(std::move(scorer));
    }
  }
  if (auto tie = root.find("tieBreak"); tie != root.end()) {
    if (!tie->is_string() || (*tie != "rotate" && *tie != "least-loaded")) {
      return FieldError("tieBreak", "must be \"rotate\" or \"least-loaded\"");
    }
    if (picker->scorers.empty()) return FieldError("tieBreak", "only with scorers");
    picker->ties_to_least_loaded = *tie == "least-loaded";
  }
  // The preset first, so that an unknown one is reported at `policy`; then the scorers, whose
  // errors name their own fields.
  PickerOptions preset = *picker;
  preset.scorers.clear();
  if (Result<PickerProfile> known = ResolvePickerProfile(preset); !known) {
    return known.error().WithPrefix("policy");
  }
  if (Result<PickerProfile> profile = ResolvePickerProfile(*picker); !profile) {
    return profile.error();
  }
  return Status::Ok();
}

}  // namespace

Result<GatewayConfig> ParseGatewayConfig(std::string_view text) {
  ASSIGN_OR_RETURN(std::vector<YamlDocument> documents, ParseYamlDocuments(text));
  if (documents.size() != 1) {
    return Err(InvalidArgumentError(
        fmt::format("expected one YAML document, found {}", documents.size())));
  }
  const json& root = documents[0].value;
  RETURN_IF_ERROR(CheckKnownFields(root, "",
                                   {"policy", "scorers", "tieBreak", "scrapeIntervalMs", "threads",
                                    "limits", "models", "tenants"}));
  GatewayConfig config;
  RETURN_IF_ERROR(ParsePicker(root, &config.picker));
  RETURN_IF_ERROR(OptionalMillis(root, "", "scrapeIntervalMs", &config.scrape_interval));
  int64_t threads = 0;
  RETURN_IF_ERROR(OptionalInt(root, "", "threads", 0, &threads));
  config.threads = static_cast<int>(threads);
  if (auto limits = root.find("limits"); limits != root.end()) {
    ASSIGN_OR_RETURN(config.limits, ParseLimits(*limits));
  }

  auto models = root.find("models");
  if (models == root.end()) return Err(FieldError("models", "required"));
  if (!models->is_array() || models->empty()) {
    return Err(FieldError("models", "must be a non-empty list"));
  }
  for (size_t i = 0; i < models->size(); ++i) {
    ASSIGN_OR_RETURN(ModelConfig model, ParseModel((*models)[i], fmt::format("models[{}]", i)));
    config.models.push_back(std::move(model));
  }
  RETURN_IF_ERROR(ValidateModels(config.models));

  if (auto tenants = root.find("tenants"); tenants != root.end()) {
    if (!tenants->is_array()) return Err(FieldError("tenants", "must be a list"));
    std::set<std::string> keys;
    std::set<std::string> names;
    for (size_t i = 0; i < tenants->size(); ++i) {
      const std::string path = fmt::format("tenants[{}]", i);
      ASSIGN_OR_RETURN(TenantConfig tenant, ParseTenant((*tenants)[i], path));
      if (!names.insert(tenant.name).second) {
        return Err(FieldError(path + ".name", fmt::format("duplicate tenant \"{}\"", tenant.name)));
      }
      for (size_t k = 0; k < tenant.keys.size(); ++k) {
        if (!keys.insert(tenant.keys[k]).second) {
          return Err(FieldError(fmt::format("{}.keys[{}]", path, k), "key used twice"));
        }
      }
      config.tenants.push_back(std::move(tenant));
    }
  }
  return config;
}

Result<GatewayConfig> LoadGatewayConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(NotFoundError(fmt::format("{}: cannot open", path)));
  std::stringstream text;
  text << in.rdbuf();
  auto config = ParseGatewayConfig(text.str());
  if (!config) return Err(config.error().WithPrefix(path));
  return config;
}

}  // namespace strata::gateway
