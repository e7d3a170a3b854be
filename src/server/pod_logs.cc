#include "server/pod_logs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <vector>

#include "api/pod.h"
#include "node/node_runtime.h"

namespace strata::server {
namespace {

namespace fs = std::filesystem;

// The most a follow sends per read, so that a fast writer cannot make one response chunk huge.
constexpr size_t kMaxChunkBytes = 1 << 20;

bool PodEnded(const store::Store& store, const store::ObjectKey& key) {
  Result<store::Object> pod = store.Get(key);
  if (!pod) return true;
  std::string phase =
      pod->body.value(nlohmann::json::json_pointer("/status/phase"), std::string("Pending"));
  return phase == "Succeeded" || phase == "Failed";
}

// Bytes of `path` from `offset` on, at most `limit`.
std::string ReadFrom(const std::string& path, uint64_t offset, size_t limit) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return "";
  file.seekg(static_cast<std::streamoff>(offset));
  std::string out(limit, '\0');
  file.read(out.data(), static_cast<std::streamsize>(limit));
  out.resize(static_cast<size_t>(file.gcount()));
  return out;
}

uint64_t FileSize(const std::string& path) {
  std::error_code error;
  uint64_t size = fs::file_size(path, error);
  return error ? 0 : size;
}

// The offset from which the last `lines` lines of `path` start.
uint64_t TailOffset(const std::string& path, int64_t lines) {
  std::string text = ReadFrom(path, 0, FileSize(path));
  if (lines == 0) return text.size();
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  for (int64_t seen = 0; end > 0; --end) {
    if (text[end - 1] == '\n' && ++seen == lines) return end;
  }
  return 0;
}

// Streams what is appended to one log file until the pod has ended and the file is drained.
class LogFollowStream final : public ResponseStream {
 public:
  LogFollowStream(const store::Store& store, store::ObjectKey pod, std::string path,
                  uint64_t offset)
      : store_(store), pod_(std::move(pod)), path_(std::move(path)), offset_(offset) {}

  // Appends are noticed by the listener's idle read, about once a second.
  void SetWake(std::function<void()>) override {}

  std::string Read(bool* finished) override {
    *finished = false;
    // Read the phase first: what was written before the pod ended is read below.
    bool ended = PodEnded(store_, pod_);
    uint64_t size = FileSize(path_);
    if (size < offset_) offset_ = 0;  // rotated: the file starts again
    std::string out = ReadFrom(path_, offset_, std::min<uint64_t>(size - offset_, kMaxChunkBytes));
    offset_ += out.size();
    if (ended && offset_ >= size) *finished = true;
    return out;
  }

 private:
  const store::Store& store_;
  const store::ObjectKey pod_;
  const std::string path_;
  uint64_t offset_;
};

// The uid of the newest other pod named `name` ("<namespace>/<name>") whose directory is under
// `pods_dir` (node::kPodNameSuffix), or empty: the instance `kubectl logs --previous` reads.
std::string PreviousInstance(const std::string& pods_dir, const std::string& current_uid,
                             const std::string& name) {
  const std::string suffix = node::kPodNameSuffix;
  std::string found;
  fs::file_time_type newest{};
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(pods_dir, error)) {
    const std::string file = entry.path().filename().string();
    if (file.size() <= suffix.size() || !file.ends_with(suffix)) continue;
    const std::string uid = file.substr(0, file.size() - suffix.size());
    if (uid == current_uid) continue;
    std::string text = ReadFrom(entry.path().string(), 0, name.size() + 2);
    if (text != name + "\n") continue;
    fs::file_time_type written = entry.last_write_time(error);
    if (!error && (found.empty() || written > newest)) {
      found = uid;
      newest = written;
    }
  }
  return found;
}

}  // namespace

PodLogs::PodLogs(const store::Store& store, std::string pods_dir)
    : store_(store), pods_dir_(std::move(pods_dir)) {}

Result<ApiReply> PodLogs::Serve(const api::ResourcePath& path,
                                const std::map<std::string, std::string>& query) {
  store::ObjectKey key{"Pod", path.namespace_name.value_or("default"), path.name};
  ASSIGN_OR_RETURN(store::Object pod, store_.Get(key));
  std::string node = pod.body.value(nlohmann::json::json_pointer("/spec/nodeName"), std::string());
  fs::path logs = fs::path(pods_dir_) / pod.uid / "logs";
  std::error_code error;
  // kubectl logs --previous: the log of the pod's previous instance, the pod of the same name
  // that ran before it (a restarted job group's, a replaced replica's), as the kubelet serves
  // a restarted container's previous log.
  const bool previous = query.count("previous") != 0 && query.at("previous") != "false";
  if (previous) {
    const std::string uid =
        pods_dir_.empty()
            ? ""
            : PreviousInstance(pods_dir_, pod.uid, key.namespace_name + "/" + key.name);
    if (uid.empty()) {
      return Err(InvalidArgumentError("previous: pod \"" + path.name +
                                      "\" has no previous instance on this server (it has not "
                                      "been restarted here)"));
    }
    logs = fs::path(pods_dir_) / uid / "logs";
  }
  if (pods_dir_.empty() || !fs::is_directory(logs, error)) {
    if (node.empty()) {
      return Err(FailedPreconditionError("pod \"" + path.name +
                                         "\" has no logs yet: it is not bound to a node"));
    }
    return Err(FailedPreconditionError(
        "pod \"" + path.name + "\" has no logs on this server: it runs on node \"" + node +
        "\", and logs are served only by the machine a pod ran on (see its agent's data dir)"));
  }
  std::vector<std::string> processes;
  for (const fs::directory_entry& entry : fs::directory_iterator(logs, error)) {
    std::string file = entry.path().filename().string();
    if (file.size() > 4 && file.ends_with(".log"))
      processes.push_back(file.substr(0, file.size() - 4));
  }
  std::sort(processes.begin(), processes.end());
  std::string process;
  if (auto it = query.find("container"); it != query.end() && !it->second.empty()) {
    process = it->second;
    // The v1 Pod's one container on Kubernetes holds every process: its log is the first's
    // (a training pod's local rank 0, as torchrun's own output leads with it).
    if (process == api::kPodContainerName && !processes.empty() &&
        std::find(processes.begin(), processes.end(), process) == processes.end()) {
      process = processes.front();
    }
  } else if (processes.size() == 1) {
    process = processes.front();
  }
  if (process.empty() ||
      std::find(processes.begin(), processes.end(), process) == processes.end()) {
    std::string choices;
    for (const std::string& name : processes) choices += (choices.empty() ? "" : ", ") + name;
    return Err(InvalidArgumentError(
        "container: " +
        (process.empty() ? std::string("pod \"" + path.name + "\" has several processes")
                         : "pod \"" + path.name + "\" has no process \"" + process + "\"") +
        "; choose one of: " + choices));
  }
  std::string file = (logs / (process + ".log")).string();
  uint64_t offset = 0;
  if (auto it = query.find("tailLines"); it != query.end()) {
    int64_t lines = -1;
    auto [end, parsed] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), lines);
    if (parsed != std::errc() || end != it->second.data() + it->second.size() || lines < 0) {
      return Err(InvalidArgumentError("tailLines: expected a non-negative integer, got \"" +
                                      it->second + "\""));
    }
    offset = TailOffset(file, lines);
  }
  // A previous instance has ended: there is nothing to follow (the kubelet answers the same).
  bool follow = !previous && query.count("follow") != 0 && query.at("follow") != "false" &&
                query.at("follow") != "0";
  ApiReply reply;
  if (!follow) {
    uint64_t size = FileSize(file);
    reply.response = net::HttpResponse::Text(200, "text/plain; charset=utf-8",
                                             ReadFrom(file, offset, size - std::min(size, offset)));
    return reply;
  }
  reply.response.status = 200;
  reply.response.headers = {{"Content-Type", "text/plain; charset=utf-8"}};
  reply.stream = std::make_unique<LogFollowStream>(store_, key, file, offset);
  return reply;
}

}  // namespace strata::server
