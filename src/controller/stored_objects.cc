#include "controller/stored_objects.h"

#include <cctype>
#include <charconv>
#include <ctime>

#include "api/encode.h"
#include "api/manifest.h"

namespace strata::controller {
namespace {

// Kinds whose stored status belongs to the controllers, not to the api model.
bool StatusOutsideApiModel(std::string_view kind) { return kind == "Job" || kind == "Service"; }

}  // namespace

Result<api::Object> DecodeStoredObject(const store::Object& object) {
  nlohmann::json body = object.body;
  if (StatusOutsideApiModel(object.key.kind) && body.is_object()) body.erase("status");
  Result<api::Object> decoded = api::DecodeObject(body);
  if (!decoded) return Err(decoded.error().WithPrefix(object.key.Describe()));
  return decoded;
}

store::Object EncodeForStore(const api::Object& value, const store::Object& previous) {
  store::Object out;
  out.key = store::ObjectKey{std::string(value.kind()), value.namespace_name(), value.name()};
  out.labels = store::Labels(value.metadata().labels.begin(), value.metadata().labels.end());
  out.body = api::EncodeObject(value);
  if (StatusOutsideApiModel(out.key.kind) && previous.body.is_object() &&
      previous.body.contains("status")) {
    out.body["status"] = previous.body["status"];
  }
  out.resource_version = previous.resource_version;
  out.uid = previous.uid;
  return out;
}

std::optional<TimePoint> ParseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z
  if (text.size() < 20 || text.back() != 'Z') return std::nullopt;
  auto number = [&](size_t at, size_t len, int& out) {
    const char* begin = text.data() + at;
    auto [end, ec] = std::from_chars(begin, begin + len, out);
    return ec == std::errc() && end == begin + len;
  };
  std::tm parts{};
  if (!number(0, 4, parts.tm_year) || text[4] != '-' || !number(5, 2, parts.tm_mon) ||
      text[7] != '-' || !number(8, 2, parts.tm_mday) || (text[10] != 'T' && text[10] != 't') ||
      !number(11, 2, parts.tm_hour) || text[13] != ':' || !number(14, 2, parts.tm_min) ||
      text[16] != ':' || !number(17, 2, parts.tm_sec)) {
    return std::nullopt;
  }
  if (parts.tm_mon < 1 || parts.tm_mon > 12 || parts.tm_mday < 1 || parts.tm_mday > 31 ||
      parts.tm_hour > 23 || parts.tm_min > 59 || parts.tm_sec > 60) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    int64_t scale = 100'000'000;
    for (char c : rest.substr(1)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      nanos += (c - '0') * scale;
      scale /= 10;
    }
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  std::time_t seconds = timegm(&parts);
  return TimePoint(std::chrono::seconds(seconds)) + Duration(nanos);
}

}  // namespace strata::controller
