#include "node/pod_supervisor_protocol.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <nlohmann/json.hpp>

#include "common/atomic_file.h"

namespace strata::node {
namespace {

using nlohmann::json;

Status Malformed(std::string_view what, std::string_view field) {
  return InvalidArgumentError(fmt::format("{}: field {} is missing or malformed", what, field));
}

bool IsStringArray(const json& value) {
  if (!value.is_array()) return false;
  for (const json& item : value) {
    if (!item.is_string()) return false;
  }
  return true;
}

}  // namespace

std::string EncodeSupervisorSpec(const SupervisorSpec& spec) {
  json processes = json::array();
  for (const SupervisedProcess& process : spec.processes) {
    processes.push_back({{"name", process.name},
                         {"argv", process.argv},
                         {"env", process.env},
                         {"dir", process.working_dir},
                         {"log", process.log_path}});
  }
  json document = {{"processes", processes}, {"path", spec.path}};
  if (spec.uid) document["uid"] = *spec.uid;
  if (spec.gid) document["gid"] = *spec.gid;
  if (!spec.lease_file.empty()) document["lease_file"] = spec.lease_file;
  return document.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<SupervisorSpec> DecodeSupervisorSpec(const std::string& line) {
  constexpr std::string_view kWhat = "supervisor spec";
  json document = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return Err(Malformed(kWhat, "(document)"));
  SupervisorSpec spec;
  if (!document.contains("path") || !document["path"].is_string()) {
    return Err(Malformed(kWhat, "path"));
  }
  spec.path = document["path"].get<std::string>();
  for (const char* field : {"uid", "gid"}) {
    if (!document.contains(field)) continue;
    if (!document[field].is_number_unsigned()) return Err(Malformed(kWhat, field));
    (field[0] == 'u' ? spec.uid : spec.gid) = document[field].get<uint32_t>();
  }
  if (document.contains("lease_file")) {
    if (!document["lease_file"].is_string()) return Err(Malformed(kWhat, "lease_file"));
    spec.lease_file = document["lease_file"].get<std::string>();
  }
  if (!document.contains("processes") || !document["processes"].is_array() ||
      document["processes"].empty()) {
    return Err(Malformed(kWhat, "processes"));
  }
  for (size_t i = 0; i < document["processes"].size(); ++i) {
    const json& entry = document["processes"][i];
    const std::string field = fmt::format("processes[{}]", i);
    if (!entry.is_object()) return Err(Malformed(kWhat, field));
    SupervisedProcess process;
    for (const char* name : {"name", "dir", "log"}) {
      if (!entry.contains(name) || !entry[name].is_string()) {
        return Err(Malformed(kWhat, field + "." + name));
      }
    }
    for (const char* name : {"argv", "env"}) {
      if (!entry.contains(name) || !IsStringArray(entry[name])) {
        return Err(Malformed(kWhat, field + "." + name));
      }
    }
    process.name = entry["name"].get<std::string>();
    process.working_dir = entry["dir"].get<std::string>();
    process.log_path = entry["log"].get<std::string>();
    process.argv = entry["argv"].get<std::vector<std::string>>();
    process.env = entry["env"].get<std::vector<std::string>>();
    if (process.argv.empty()) return Err(Malformed(kWhat, field + ".argv"));
    spec.processes.push_back(std::move(process));
  }
  return spec;
}

Status WriteLeaseFile(const std::string& path, int64_t valid_until_ns) {
  // Renewed every few seconds, and worthless after a crash (it lapses then anyway): not synced.
  return ReplaceFileAtomically(path, std::to_string(valid_until_ns) + "\n", 0644, FileSync::kNone);
}

std::optional<int64_t> ReadLeaseFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buffer[32];
  ssize_t n = read(fd, buffer, sizeof buffer);
  close(fd);
  if (n <= 0) return std::nullopt;
  int64_t value = 0;
  auto [end, error] = std::from_chars(buffer, buffer + n, value);
  if (error != std::errc() || end == buffer) return std::nullopt;
  return value;
}

std::string EncodeSupervisorReport(const SupervisorReport& report) {
  json processes = json::array();
  for (const StartedProcess& process : report.processes) {
    processes.push_back({{"pid", process.pid}, {"start_time", process.start_time}});
  }
  json document = {{"processes", processes}};
  if (!report.error.empty()) document["error"] = report.error;
  return document.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<SupervisorReport> DecodeSupervisorReport(const std::string& line) {
  constexpr std::string_view kWhat = "supervisor report";
  json document = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) return Err(Malformed(kWhat, "(document)"));
  SupervisorReport report;
  if (document.contains("error")) {
    if (!document["error"].is_string()) return Err(Malformed(kWhat, "error"));
    report.error = document["error"].get<std::string>();
  }
  if (!document.contains("processes") || !document["processes"].is_array()) {
    return Err(Malformed(kWhat, "processes"));
  }
  for (size_t i = 0; i < document["processes"].size(); ++i) {
    const json& entry = document["processes"][i];
    const std::string field = fmt::format("processes[{}]", i);
    if (!entry.is_object() || !entry.contains("pid") || !entry["pid"].is_number_integer() ||
        !entry.contains("start_time") || !entry["start_time"].is_number_unsigned()) {
      return Err(Malformed(kWhat, field));
    }
    report.processes.push_back({entry["pid"].get<pid_t>(), entry["start_time"].get<uint64_t>()});
  }
  return report;
}

bool SendAll(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::optional<std::string> LineReader::Next(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  while (true) {
    size_t end = buffer_.find('\n');
    if (end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd poll_fd{fd_, POLLIN, 0};
      int ready = poll(&poll_fd, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return std::nullopt;
    }
    char chunk[4096];
    ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace strata::node
