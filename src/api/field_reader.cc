#include "api/field_reader.h"

#include "api/duration.h"
#include "common/check.h"
#include "common/field_decoder.h"
#include "common/field_errors.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

// Reads a value that passed a kQuantity check. REQUIRES: it did.
Quantity ValidQuantity(const nlohmann::json& value) {
  Result<Quantity> q = QuantityFromJson(value);
  STRATA_CHECK(q.has_value());
  return *q;
}

}  // namespace

FieldView::FieldView(const nlohmann::json& value, std::string path)
    : value_(&value), path_(std::move(path)) {}

std::string FieldView::PathOf(std::string_view name) const { return JoinPath(path_, name); }

const nlohmann::json& FieldView::Raw(std::string_view name) const {
  return MemberOrNull(*value_, name);
}

bool FieldView::Has(std::string_view name) const { return !Raw(name).is_null(); }

std::string FieldView::String(std::string_view name, std::string_view fallback) const {
  const nlohmann::json& v = Raw(name);
  return v.is_string() ? v.get<std::string>() : std::string(fallback);
}

bool FieldView::Bool(std::string_view name, bool fallback) const {
  const nlohmann::json& v = Raw(name);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

int64_t FieldView::Integer(std::string_view name, int64_t fallback) const {
  const nlohmann::json& v = Raw(name);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

double FieldView::Number(std::string_view name, double fallback) const {
  const nlohmann::json& v = Raw(name);
  return v.is_number() ? v.get<double>() : fallback;
}

Quantity FieldView::GetQuantity(std::string_view name, Quantity fallback) const {
  return OptionalQuantity(name).value_or(fallback);
}

std::optional<Quantity> FieldView::OptionalQuantity(std::string_view name) const {
  const nlohmann::json& v = Raw(name);
  if (v.is_null()) return std::nullopt;
  return ValidQuantity(v);
}

Duration FieldView::GetDuration(std::string_view name, Duration fallback) const {
  const nlohmann::json& v = Raw(name);
  if (!v.is_string()) return fallback;
  Result<Duration> d = ParseDuration(v.get<std::string>());
  STRATA_CHECK(d.has_value());
  return *d;
}

std::vector<std::string> FieldView::StringList(std::string_view name) const {
  std::vector<std::string> out;
  for (const nlohmann::json& item : Raw(name)) out.push_back(item.get<std::string>());
  return out;
}

std::map<std::string, std::string> FieldView::StringMap(std::string_view name) const {
  std::map<std::string, std::string> out;
  const nlohmann::json& v = Raw(name);
  if (!v.is_object()) return out;
  for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = it.value().get<std::string>();
  return out;
}

std::map<std::string, Quantity> FieldView::QuantityMap(std::string_view name) const {
  std::map<std::string, Quantity> out;
  const nlohmann::json& v = Raw(name);
  if (!v.is_object()) return out;
  for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = ValidQuantity(it.value());
  return out;
}

FieldView FieldView::Object(std::string_view name) const {
  return FieldView(Raw(name), PathOf(name));
}

std::vector<FieldView> FieldView::ObjectList(std::string_view name) const {
  std::vector<FieldView> out;
  const nlohmann::json& v = Raw(name);
  if (!v.is_array()) return out;
  std::string list_path = PathOf(name);
  for (size_t i = 0; i < v.size(); ++i) out.emplace_back(v[i], IndexPath(list_path, i));
  return out;
}

}  // namespace strata::api
