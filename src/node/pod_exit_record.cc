#include "node/pod_exit_record.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"

namespace strata::node {

using nlohmann::json;

std::string ExitRecordDir(const std::string& pod_dir) { return pod_dir + "/exits"; }

std::string AbandonedStartMarker(const std::string& pod_dir) {
  return pod_dir + "/start-abandoned";
}

Status WriteExitRecord(const std::string& dir, const std::string& name, const ExitRecord& record) {
  json document = {{"end_time_ns", record.end_time_ns}};
  if (record.exit_code) document["exit_code"] = *record.exit_code;
  if (record.signal) document["signal"] = *record.signal;
  if (record.fenced) document["fenced"] = true;
  return ReplaceFileAtomically(dir + "/" + name, document.dump() + "\n", 0644);
}

Result<ExitRecord> ReadExitRecord(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::ifstream in(path);
  if (!in) return Err(NotFoundError(fmt::format("{}: no exit record", path)));
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto bad = [&](std::string_view field) {
    return Err(
        InvalidArgumentError(fmt::format("{}: field {} is missing or malformed", path, field)));
  };
  if (!document.is_object()) return bad("(document)");
  ExitRecord record;
  if (!document.contains("end_time_ns") || !document["end_time_ns"].is_number_integer()) {
    return bad("end_time_ns");
  }
  record.end_time_ns = document["end_time_ns"].get<int64_t>();
  if (document.contains("exit_code")) {
    if (!document["exit_code"].is_number_integer()) return bad("exit_code");
    record.exit_code = document["exit_code"].get<int>();
  }
  if (document.contains("signal")) {
    if (!document["signal"].is_number_integer()) return bad("signal");
    record.signal = document["signal"].get<int>();
  }
  if (document.contains("fenced")) {
    if (!document["fenced"].is_boolean()) return bad("fenced");
    record.fenced = document["fenced"].get<bool>();
  }
  if (record.exit_code.has_value() == record.signal.has_value()) {
    return bad("exit_code/signal (exactly one is set)");
  }
  return record;
}

}  // namespace strata::node
