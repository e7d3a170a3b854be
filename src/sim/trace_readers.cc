#include "sim/trace_readers.h"

#include <xxhash.h>

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "common/field_decoder.h"

namespace strata::sim {
namespace {

// Keys of prompts that share nothing: far from Mooncake's small hash ids.
constexpr uint64_t kUniqueKeyBase = 1ull << 62;

Status LineError(const std::string& path, size_t line, const std::string& what) {
  return InvalidArgumentError(path + ":" + std::to_string(line) + ": " + what);
}

Result<std::ifstream> Open(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(NotFoundError("cannot open trace " + path));
  return in;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// "2023-11-16 18:15:46.6805900" as nanoseconds since the epoch.
bool ParseTimestamp(std::string_view text, int64_t* nanos) {
  int year, month, day, hour, minute, second;
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    return false;
  }
  auto number = [&](size_t at, size_t length, int* out) {
    auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + at + length, *out);
    return ec == std::errc() && ptr == text.data() + at + length;
  };
  if (!number(0, 4, &year) || !number(5, 2, &month) || !number(8, 2, &day) ||
      !number(11, 2, &hour) || !number(14, 2, &minute) || !number(17, 2, &second) || month < 1 ||
      month > 12 || day < 1 || day > 31) {
    return false;
  }
  int64_t fraction = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() > 29) return false;
    std::string digits(text.substr(20));
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    digits.resize(9, '0');
    fraction = std::stoll(digits);
  }
  int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  *nanos = seconds * 1'000'000'000 + fraction;
  return true;
}

bool ParseInt(std::string_view text, int* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::vector<engine::TokenId> ExpandPrompt(const TraceRequest& request) {
  std::vector<engine::TokenId> tokens;
  tokens.reserve(request.input_tokens);
  for (size_t block = 0; tokens.size() < static_cast<size_t>(request.input_tokens); ++block) {
    // Tokens past the listed blocks (a trace may list fewer) get a key of their own.
    uint64_t key = block < request.block_keys.size()
                       ? request.block_keys[block]
                       : kUniqueKeyBase +
                             XXH3_64bits(request.block_keys.data(), request.block_keys.size() * 8) +
                             block;
    for (int j = 0;
         j < request.block_tokens && tokens.size() < static_cast<size_t>(request.input_tokens);
         ++j) {
      uint64_t h = XXH3_64bits_withSeed(&j, sizeof(j), key);
      tokens.push_back(static_cast<engine::TokenId>(h & 0x7fffffffu));
    }
  }
  return tokens;
}

std::vector<uint64_t> ChainedKeyHashes(const TraceRequest& request) {
  std::vector<uint64_t> hashes;
  hashes.reserve(request.block_keys.size());
  uint64_t previous = 0;
  for (uint64_t key : request.block_keys) {
    previous = XXH3_64bits_withSeed(&key, sizeof(key), previous);
    hashes.push_back(previous);
  }
  return hashes;
}

double IdealPrefixReuse(const std::vector<TraceRequest>& trace) {
  std::unordered_set<uint64_t> seen;
  size_t total = 0;
  size_t reused = 0;
  for (const TraceRequest& request : trace) {
    for (uint64_t hash : ChainedKeyHashes(request)) {
      ++total;
      if (!seen.insert(hash).second) ++reused;
    }
  }
  return total == 0 ? 0 : static_cast<double>(reused) / static_cast<double>(total);
}

Result<std::vector<TraceRequest>> ReadMooncakeTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::ifstream in, Open(path));
  std::vector<TraceRequest> trace;
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded() || !row.is_object()) {
      return Err(LineError(path, line_number, "not a JSON object"));
    }
    Result<TraceRequest> request = [&]() -> Result<TraceRequest> {
      ASSIGN_OR_RETURN(FieldDecoder fields, FieldDecoder::OfAnyFields(row, ""));
      ASSIGN_OR_RETURN(int64_t timestamp, fields.RequiredInteger("timestamp", 0));
      ASSIGN_OR_RETURN(int64_t input, fields.RequiredInteger("input_length", 1, INT32_MAX));
      ASSIGN_OR_RETURN(int64_t output, fields.RequiredInteger("output_length", 1, INT32_MAX));
      ASSIGN_OR_RETURN(std::span<const nlohmann::json> ids,
                       fields.List("hash_ids", Presence::kRequired));
      TraceRequest read;
      read.arrival = std::chrono::milliseconds(timestamp);
      read.input_tokens = static_cast<int>(input);
      read.output_tokens = static_cast<int>(output);
      read.block_tokens = 512;
      read.block_keys.reserve(ids.size());
      for (size_t i = 0; i < ids.size(); ++i) {
        if (!ids[i].is_number_unsigned()) {
          return Err(InvalidField(fields.ItemPath("hash_ids", i), "must be an integer >= 0"));
        }
        read.block_keys.push_back(ids[i].get<uint64_t>());
      }
      return read;
    }();
    if (!request) return Err(request.error().WithPrefix(path + ":" + std::to_string(line_number)));
    trace.push_back(std::move(*request));
  }
  return trace;
}

Result<std::vector<TraceRequest>> ReadAzureTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::ifstream in, Open(path));
  std::vector<TraceRequest> trace;
  std::string line;
  size_t line_number = 0;
  int64_t first = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_number == 1 && line.rfind("TIMESTAMP", 0) == 0) continue;
    if (line.empty()) continue;
    size_t comma1 = line.find(',');
    size_t comma2 = comma1 == std::string::npos ? comma1 : line.find(',', comma1 + 1);
    if (comma2 == std::string::npos) {
      return Err(LineError(path, line_number, "expected TIMESTAMP,ContextTokens,GeneratedTokens"));
    }
    std::string_view view(line);
    int64_t nanos;
    if (!ParseTimestamp(view.substr(0, comma1), &nanos)) {
      return Err(LineError(path, line_number, "TIMESTAMP: not \"YYYY-MM-DD HH:MM:SS.fffffff\""));
    }
    TraceRequest request;
    if (!ParseInt(view.substr(comma1 + 1, comma2 - comma1 - 1), &request.input_tokens) ||
        request.input_tokens < 1) {
      return Err(LineError(path, line_number, "ContextTokens: must be an integer >= 1"));
    }
    if (!ParseInt(view.substr(comma2 + 1), &request.output_tokens) || request.output_tokens < 1) {
      return Err(LineError(path, line_number, "GeneratedTokens: must be an integer >= 1"));
    }
    if (trace.empty()) first = nanos;
    request.arrival = Duration(std::max<int64_t>(0, nanos - first));
    request.block_tokens = 512;
    uint64_t key = kUniqueKeyBase + trace.size() * 4096;
    for (int covered = 0; covered < request.input_tokens; covered += request.block_tokens) {
      request.block_keys.push_back(key++);
    }
    trace.push_back(std::move(request));
  }
  return trace;
}

}  // namespace strata::sim
