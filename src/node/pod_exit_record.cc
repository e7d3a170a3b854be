#include "node/pod_exit_record.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace strata::node {
namespace {

using nlohmann::json;

Status WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return InternalError(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

std::string ExitRecordDir(const std::string& pod_dir) { return pod_dir + "/exits"; }

Status WriteExitRecord(const std::string& dir, const std::string& name, const ExitRecord& record) {
  json document = {{"end_time_ns", record.end_time_ns}};
  if (record.exit_code) document["exit_code"] = *record.exit_code;
  if (record.signal) document["signal"] = *record.signal;
  if (record.fenced) document["fenced"] = true;
  const std::string path = dir + "/" + name;
  const std::string temporary = path + ".tmp";
  int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return InternalError(fmt::format("create {}: {}", temporary, std::strerror(errno)));
  Status written = WriteAll(fd, document.dump() + "\n");
  bool synced = written.ok() && fsync(fd) == 0;
  close(fd);
  if (!synced || rename(temporary.c_str(), path.c_str()) != 0) {
    return InternalError(fmt::format("write {}: {}", path, std::strerror(errno)));
  }
  // The rename itself is durable only once the directory is.
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0 || fsync(dir_fd) != 0) {
    if (dir_fd >= 0) close(dir_fd);
    return InternalError(fmt::format("fsync {}: {}", dir, std::strerror(errno)));
  }
  close(dir_fd);
  return Status::Ok();
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
