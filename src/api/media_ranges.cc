#include "api/media_ranges.h"

namespace strata::api {
namespace {

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

MediaRange ParseMediaRange(std::string_view text) {
  MediaRange range;
  size_t semicolon = text.find(';');
  range.type = std::string(Trimmed(text.substr(0, semicolon)));
  while (semicolon != std::string_view::npos) {
    text.remove_prefix(semicolon + 1);
    semicolon = text.find(';');
    std::string_view parameter = Trimmed(text.substr(0, semicolon));
    const size_t equals = parameter.find('=');
    if (equals == std::string_view::npos) continue;
    range.parameters[std::string(Trimmed(parameter.substr(0, equals)))] =
        std::string(Trimmed(parameter.substr(equals + 1)));
  }
  return range;
}

}  // namespace

std::vector<MediaRange> ParseAcceptHeader(std::string_view accept) {
  std::vector<MediaRange> ranges;
  while (!accept.empty()) {
    const size_t comma = accept.find(',');
    ranges.push_back(ParseMediaRange(accept.substr(0, comma)));
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
  }
  return ranges;
}

}  // namespace strata::api
