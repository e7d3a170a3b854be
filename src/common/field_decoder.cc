#include "common/field_decoder.h"

#include <fmt/format.h>

#include <cmath>

#include "common/field_errors.h"
#include "common/json_member.h"

namespace strata {
namespace {

using nlohmann::json;

// `"A", "B" or "C"`.
std::string ChoiceList(std::initializer_list<std::string_view> choices) {
  std::string out;
  size_t i = 0;
  for (std::string_view choice : choices) {
    if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
    out += Quoted(choice);
    ++i;
  }
  return out;
}

std::string RangeText(int64_t minimum, int64_t maximum) {
  constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
  constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();
  if (minimum == kLowest && maximum == kHighest) return "must be an integer";
  if (maximum == kHighest && minimum == 0) return "must be a non-negative integer";
  if (maximum == kHighest) return fmt::format("must be an integer >= {}", minimum);
  if (minimum == kLowest) return fmt::format("must be an integer <= {}", maximum);
  return fmt::format("must be an integer from {} to {}", minimum, maximum);
}

}  // namespace

Status InvalidField(std::string_view path, std::string_view what) {
  return InvalidArgumentError(path.empty() ? std::string(what) : fmt::format("{}: {}", path, what));
}

Result<Quantity> QuantityFromJson(const json& value) {
  if (value.is_string()) return Quantity::Parse(value.get_ref<const std::string&>());
  if (value.is_number() && std::isfinite(value.get<double>())) return Quantity::Parse(value.dump());
  return Err(InvalidArgumentError("must be a quantity such as 4, \"500m\" or \"80Gi\""));
}

Result<FieldDecoder> FieldDecoder::OfAnyFields(const json& value, std::string path) {
  // A null value is read through the static null, so that a decoder of an absent (or
  // temporary null) value never points at something that goes away.
  FieldDecoder decoder(value.is_null() ? JsonNull() : value, std::move(path));
  if (!value.is_null() && !value.is_object()) return Err(decoder.ObjectError("must be a mapping"));
  return decoder;
}

Result<FieldDecoder> FieldDecoder::Of(const json& value, std::string path,
                                      std::initializer_list<std::string_view> known) {
  ASSIGN_OR_RETURN(FieldDecoder decoder, OfAnyFields(value, std::move(path)));
  if (!value.is_object()) return decoder;
  for (const auto& [key, member] : value.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (found) continue;
    std::string suggestion = SuggestClosest(key, std::vector<std::string_view>(known));
    return Err(decoder.Error(
        key, suggestion.empty()
                 ? "unknown field"
                 : fmt::format("unknown field; did you mean {}?", Quoted(suggestion))));
  }
  return decoder;
}

std::string FieldDecoder::PathOf(std::string_view name) const { return JoinPath(path_, name); }

Status FieldDecoder::Error(std::string_view name, std::string_view what) const {
  return InvalidField(PathOf(name), what);
}

Status FieldDecoder::ObjectError(std::string_view what) const { return InvalidField(path_, what); }

const json& FieldDecoder::Raw(std::string_view name) const { return MemberOrNull(*value_, name); }

bool FieldDecoder::Has(std::string_view name) const { return !Raw(name).is_null(); }

std::vector<std::string> FieldDecoder::Keys() const {
  std::vector<std::string> keys;
  if (!value_->is_object()) return keys;
  for (auto it = value_->begin(); it != value_->end(); ++it) keys.push_back(it.key());
  return keys;
}

Result<std::string> FieldDecoder::String(std::string_view name, std::string_view fallback) const {
  const json& v = Raw(name);
  if (v.is_null()) return std::string(fallback);
  if (!v.is_string()) return Err(Error(name, "must be a string"));
  return v.get<std::string>();
}

Result<std::string> FieldDecoder::RequiredString(std::string_view name) const {
  const json& v = Raw(name);
  if (v.is_null()) return Err(Error(name, "required"));
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
    return Err(Error(name, "must be a non-empty string"));
  }
  return v.get<std::string>();
}

Result<std::string> FieldDecoder::Choice(std::string_view name,
                                         std::initializer_list<std::string_view> choices,
                                         std::string_view fallback) const {
  const json& v = Raw(name);
  if (v.is_null()) return std::string(fallback);
  if (v.is_string()) {
    for (std::string_view choice : choices) {
      if (v.get_ref<const std::string&>() == choice) return std::string(choice);
    }
  }
  return Err(Error(name, "must be " + ChoiceList(choices)));
}

Result<bool> FieldDecoder::Bool(std::string_view name, bool fallback) const {
  const json& v = Raw(name);
  if (v.is_null()) return fallback;
  if (!v.is_boolean()) return Err(Error(name, "must be true or false"));
  return v.get<bool>();
}

Result<int64_t> FieldDecoder::Integer(std::string_view name, int64_t fallback, int64_t minimum,
                                      int64_t maximum) const {
  if (!Has(name)) return fallback;
  return RequiredInteger(name, minimum, maximum);
}

Result<int64_t> FieldDecoder::RequiredInteger(std::string_view name, int64_t minimum,
                                              int64_t maximum) const {
  const json& v = Raw(name);
  // An integer past int64_t's range is stored unsigned, and is past every maximum.
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) ||
      v.get<int64_t>() < minimum || v.get<int64_t>() > maximum) {
    return Err(Error(name, RangeText(minimum, maximum)));
  }
  return v.get<int64_t>();
}

Result<double> FieldDecoder::Number(std::string_view name, double fallback, double minimum) const {
  const json& v = Raw(name);
  if (v.is_null()) return fallback;
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < minimum) {
    return Err(Error(name, std::isinf(minimum) ? std::string("must be a number")
                                               : fmt::format("must be a number >= {}", minimum)));
  }
  return v.get<double>();
}

Result<std::optional<Quantity>> FieldDecoder::OptionalQuantity(std::string_view name) const {
  const json& v = Raw(name);
  if (v.is_null()) return std::optional<Quantity>();
  Result<Quantity> quantity = QuantityFromJson(v);
  if (!quantity) return Err(quantity.error().WithPrefix(PathOf(name)));
  if (quantity->milli() < 0) return Err(Error(name, "must not be negative"));
  return std::optional<Quantity>(*quantity);
}

Result<std::span<const json>> FieldDecoder::List(std::string_view name, Presence presence) const {
  const json& v = Raw(name);
  if (v.is_null()) {
    if (presence == Presence::kRequired) return Err(Error(name, "required"));
    return std::span<const json>();
  }
  if (!v.is_array()) return Err(Error(name, "must be a list"));
  if (presence == Presence::kRequired && v.empty()) return Err(Error(name, "must not be empty"));
  return std::span<const json>(v.get_ref<const json::array_t&>());
}

std::string FieldDecoder::ItemPath(std::string_view name, size_t index) const {
  return IndexPath(PathOf(name), index);
}

Result<std::vector<std::string>> FieldDecoder::StringList(std::string_view name,
                                                          Presence presence) const {
  ASSIGN_OR_RETURN(std::span<const json> items, List(name, presence));
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) return Err(InvalidField(ItemPath(name, i), "must be a string"));
    out.push_back(items[i].get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string, std::less<>>> FieldDecoder::StringMap(
    std::string_view name) const {
  ASSIGN_OR_RETURN(FieldDecoder map, Mapping(name));
  std::map<std::string, std::string, std::less<>> out;
  for (const std::string& key : map.Keys()) {
    const json& value = map.Raw(key);
    if (!value.is_string()) return Err(map.Error(key, "must be a string"));
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

Result<FieldDecoder> FieldDecoder::Object(std::string_view name,
                                          std::initializer_list<std::string_view> known) const {
  return Of(Raw(name), PathOf(name), known);
}

Result<FieldDecoder> FieldDecoder::Mapping(std::string_view name) const {
  return OfAnyFields(Raw(name), PathOf(name));
}

Result<std::vector<FieldDecoder>> FieldDecoder::ObjectList(
    std::string_view name, std::initializer_list<std::string_view> known, Presence presence) const {
  ASSIGN_OR_RETURN(std::span<const json> items, List(name, presence));
  std::vector<FieldDecoder> out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_object()) return Err(InvalidField(ItemPath(name, i), "must be a mapping"));
    ASSIGN_OR_RETURN(FieldDecoder decoder, Of(items[i], ItemPath(name, i), known));
    out.push_back(std::move(decoder));
  }
  return out;
}

}  // namespace strata
