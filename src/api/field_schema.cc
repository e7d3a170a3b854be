#include "api/field_schema.h"

#include <cmath>
#include <limits>
#include <regex>

#include "api/duration.h"
#include "common/field_decoder.h"
#include "common/quantity.h"

namespace strata::api {
namespace {

bool IsInt64(const nlohmann::json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return true;
  return v.is_number_unsigned() &&
         v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

bool IsTimestamp(const std::string& s) {
  static const std::regex kRfc3339(
      "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{"
      "2})");
  return s.size() <= 40 && std::regex_match(s, kRfc3339);
}

std::string EnumList(const std::vector<std::string_view>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += values[i];
  }
  return out;
}

void Expected(FieldErrors& errors, std::string_view path, std::string_view what,
              const nlohmann::json& got) {
  errors.Add(std::string(path), "expected " + std::string(what) + ", got " + DescribeValue(got));
}

// Checks a quantity written as a string or a number; numbers are read as Kubernetes does.
void CheckQuantity(const nlohmann::json& v, std::string_view path, FieldErrors& errors) {
  if (!v.is_string() && !IsInt64(v) && !(v.is_number_float() && std::isfinite(v.get<double>()))) {
    Expected(errors, path, "a quantity such as \"8\", \"500m\" or \"24Gi\"", v);
    return;
  }
  Result<Quantity> q = QuantityFromJson(v);
  if (!q) {
    errors.Add(std::string(path), q.error().message());
  } else if (q->milli() < 0) {
    errors.Add(std::string(path), "must not be negative, got " +
                                      Quoted(v.is_string() ? v.get<std::string>() : v.dump()));
  }
}

void CheckValue(const nlohmann::json& v, const FieldSpec& field, std::string_view path,
                FieldErrors& errors);

void CheckObject(const nlohmann::json& v, const TypeSchema& schema, std::string_view path,
                 FieldErrors& errors) {
  if (!v.is_object()) {
    Expected(errors, path, "an object", v);
    return;
  }
  std::vector<std::string_view> known;
  for (const FieldSpec& f : schema.fields) {
    if (f.type != FieldType::kUnsupported && f.type != FieldType::kIgnored) {
      known.push_back(f.name);
    }
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    std::string child = JoinPath(path, it.key());
    const FieldSpec* field = schema.Find(it.key());
    if (field == nullptr) {
      std::string suggestion = SuggestClosest(it.key(), known);
      errors.Add(child, suggestion.empty()
                            ? "unknown field"
                            : "unknown field; did you mean " + Quoted(suggestion) + "?");
      continue;
    }
    if (it.value().is_null()) continue;
    CheckValue(it.value(), *field, child, errors);
  }
  for (const FieldSpec& f : schema.fields) {
    if (!f.required) continue;
    auto it = v.find(std::string(f.name));
    if (it == v.end() || it->is_null())
      errors.Add(JoinPath(path, f.name), "required field is missing");
  }
}

void CheckValue(const nlohmann::json& v, const FieldSpec& field, std::string_view path,
                FieldErrors& errors) {
  switch (field.type) {
    case FieldType::kString:
      if (!v.is_string()) Expected(errors, path, "a string", v);
      return;
    case FieldType::kBool:
      if (!v.is_boolean()) Expected(errors, path, "true or false", v);
      return;
    case FieldType::kInteger:
      if (!IsInt64(v)) Expected(errors, path, "an integer", v);
      return;
    case FieldType::kNonNegativeInteger:
      if (!IsInt64(v) || v.get<int64_t>() < 0) {
        Expected(errors, path, "a non-negative integer", v);
      } else if (field.maximum > 0 && v.get<int64_t>() > field.maximum) {
        errors.Add(std::string(path), std::to_string(v.get<int64_t>()) + " exceeds the limit of " +
                                          std::to_string(field.maximum));
      }
      return;
    case FieldType::kNumber:
      if (!v.is_number() || !std::isfinite(v.get<double>())) Expected(errors, path, "a number", v);
      return;
    case FieldType::kQuantity:
      CheckQuantity(v, path, errors);
      return;
    case FieldType::kDuration: {
      if (!v.is_string()) {
        Expected(errors, path, "a duration such as \"30s\", \"5m\" or \"1h30m\"", v);
        return;
      }
      Result<Duration> d = ParseDuration(v.get<std::string>());
      if (!d) errors.Add(std::string(path), d.error().message());
      return;
    }
    case FieldType::kTimestamp:
      if (!v.is_string() || !IsTimestamp(v.get<std::string>())) {
        Expected(errors, path, "an RFC 3339 timestamp such as \"2026-01-01T00:00:00Z\"", v);
      }
      return;
    case FieldType::kEnum: {
      bool ok = false;
      if (v.is_string()) {
        for (std::string_view allowed : field.values) ok = ok || v.get<std::string>() == allowed;
      }
      if (!ok) Expected(errors, path, "one of " + EnumList(field.values), v);
      return;
    }
    case FieldType::kIntOrString:
      if (!v.is_string() && !IsInt64(v)) Expected(errors, path, "an integer or a string", v);
      return;
    case FieldType::kStringList:
      if (!v.is_array()) {
        Expected(errors, path, "a list of strings", v);
        return;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string()) Expected(errors, IndexPath(path, i), "a string", v[i]);
      }
      return;
    case FieldType::kStringMap:
      if (!v.is_object()) {
        Expected(errors, path, "a map of strings", v);
        return;
      }
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it.value().is_string())
          Expected(errors, JoinPath(path, it.key()), "a string", it.value());
      }
      return;
    case FieldType::kQuantityMap:
      if (!v.is_object()) {
        Expected(errors, path, "a map of resource names to quantities", v);
        return;
      }
      for (auto it = v.begin(); it != v.end(); ++it) {
        CheckQuantity(it.value(), JoinPath(path, it.key()), errors);
      }
      return;
    case FieldType::kObject:
      CheckObject(v, *field.nested(), path, errors);
      return;
    case FieldType::kObjectList:
      if (!v.is_array()) {
        Expected(errors, path, "a list", v);
        return;
      }
      for (size_t i = 0; i < v.size(); ++i)
        CheckObject(v[i], *field.nested(), IndexPath(path, i), errors);
      return;
    case FieldType::kObjectMap:
      if (!v.is_object()) {
        Expected(errors, path, "an object", v);
        return;
      }
      for (auto it = v.begin(); it != v.end(); ++it) {
        CheckObject(it.value(), *field.nested(), JoinPath(path, it.key()), errors);
      }
      return;
    case FieldType::kFreeForm:
      if (!v.is_object()) Expected(errors, path, "an object", v);
      return;
    case FieldType::kUnsupported:
      errors.Add(std::string(path), "not supported by strata: " + std::string(field.doc));
      return;
    case FieldType::kIgnored:
      errors.Warn(std::string(path), "ignored: " + std::string(field.doc));
      return;
  }
}

}  // namespace

const FieldSpec* TypeSchema::Find(std::string_view field_name) const {
  for (const FieldSpec& f : fields) {
    if (f.name == field_name) return &f;
  }
  return nullptr;
}

void ValidateAgainstSchema(const nlohmann::json& value, const TypeSchema& schema,
                           std::string_view path, FieldErrors& errors) {
  CheckObject(value, schema, path, errors);
}

std::string TypeName(const FieldSpec& field) {
  switch (field.type) {
    case FieldType::kString:
      return "<string>";
    case FieldType::kBool:
      return "<boolean>";
    case FieldType::kInteger:
    case FieldType::kNonNegativeInteger:
      return "<integer>";
    case FieldType::kNumber:
      return "<number>";
    case FieldType::kQuantity:
      return "<Quantity>";
    case FieldType::kDuration:
      return "<Duration>";
    case FieldType::kTimestamp:
      return "<Time>";
    case FieldType::kEnum:
      return "<string>";
    case FieldType::kIntOrString:
      return "<IntOrString>";
    case FieldType::kStringList:
      return "<[]string>";
    case FieldType::kStringMap:
      return "<map[string]string>";
    case FieldType::kQuantityMap:
      return "<map[string]Quantity>";
    case FieldType::kObject:
      return "<" + std::string(field.nested()->name) + ">";
    case FieldType::kObjectList:
      return "<[]" + std::string(field.nested()->name) + ">";
    case FieldType::kObjectMap:
      return "<map[string]" + std::string(field.nested()->name) + ">";
    case FieldType::kFreeForm:
      return "<Object>";
    case FieldType::kUnsupported:
      return "<unsupported>";
    case FieldType::kIgnored:
      return "<ignored>";
  }
  return "<unknown>";
}

std::string DescribeValue(const nlohmann::json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "a list";
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace strata::api
