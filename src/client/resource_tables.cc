#include "client/resource_tables.h"

#include <algorithm>
#include <ctime>
#include <map>

#include "api/manifest.h"
#include "api/queue_usage.h"
#include "client/json_fields.h"

namespace strata::client {
namespace {

using Json = nlohmann::json;

std::string NodeReady(const Json& node) {
  for (const Json& condition : FieldAt(node, "/status/conditions")) {
    if (condition.value("type", "") == "Ready") {
      return condition.value("status", "") == "True" ? "Ready" : "NotReady";
    }
  }
  return "Unknown";
}

// "8x H100-80GB" (several models joined by ',').
std::string GpuSummary(const Json& node) {
  std::map<std::string, int> models;
  for (const Json& gpu : FieldAt(node, "/status/gpus")) ++models[gpu.value("model", "?")];
  std::string out;
  for (const auto& [model, count] : models) {
    out += (out.empty() ? "" : ",") + std::to_string(count) + "x " + model;
  }
  return out.empty() ? "-" : out;
}

// "0-3,6": the pod's GPU indices, runs of consecutive ones as ranges, so that eight GPUs fit.
std::string AssignedGpus(const Json& pod) {
  std::vector<int64_t> indices;
  for (const Json& gpu : FieldAt(pod, "/spec/assignedGpus")) {
    indices.push_back(gpu.value("index", int64_t{0}));
  }
  std::sort(indices.begin(), indices.end());
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t last = i;
    while (last + 1 < indices.size() && indices[last + 1] == indices[last] + 1) ++last;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
    if (last > i) out += "-" + std::to_string(indices[last]);
    i = last + 1;
  }
  return out.empty() ? "-" : out;
}

// "3/4": the job's running pods out of its replicas.
std::string JobReady(const Json& job, const std::vector<Json>& pods) {
  int running = 0;
  for (const Json& pod : pods) {
    if (PodOwnedBy(pod, job, "Job") && TextAt(pod, "/status/phase") == "Running") ++running;
  }
  return std::to_string(running) + "/" + TextAt(job, "/spec/replicas", "1");
}

TableRow Columns(const api::ResourceType& type) {
  std::string_view kind = type.kind;
  if (kind == "Node") return {"NAME", "STATUS", "GPUS", "RACK", "AGE"};
  if (kind == "Queue") return {"NAME", "COHORT", "GPU USED/NOMINAL", "BORROWED", "AGE"};
  if (kind == "Job") return {"NAME", "PHASE", "READY", "RESTARTS", "GPUS", "QUEUE", "AGE"};
  if (kind == "Pod") return {"NAME", "PHASE", "RESTARTS", "NODE", "GPUS", "AGE"};
  if (kind == "Service") return {"NAME", "MODEL", "READY", "DESIRED", "MIN-MAX", "GPU/POD", "AGE"};
  if (kind == "Event") return {"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"};
  return {"NAME", "AGE"};
}

// A queue's use by resource, from its status (the scheduler's charging rules); empty when the
// object does not decode.
std::map<std::string, api::QueueResourceUsage> QueueUse(const Json& item) {
  Result<api::Object> decoded = api::DecodeObject(item);
  const api::Queue* queue = decoded ? decoded->As<api::Queue>() : nullptr;
  return queue == nullptr ? std::map<std::string, api::QueueResourceUsage>()
                          : api::UsageByResource(*queue);
}

TableRow Cells(const api::ResourceType& type, const Json& item, TimePoint now,
               const std::vector<Json>& pods) {
  std::string_view kind = type.kind;
  std::string name = TextAt(item, "/metadata/name");
  std::string age = ShortAge(TextAt(item, "/metadata/creationTimestamp"), now);
  if (kind == "Node") {
    return {name, NodeReady(item), GpuSummary(item),
            TextAt(item, "/metadata/labels/topology.strata.dev~1rack", "-"), age};
  }
  if (kind == "Queue") {
    const std::map<std::string, api::QueueResourceUsage> usage = QueueUse(item);
    std::string used_nominal = "-";
    std::string borrowed = "-";
    if (auto gpu = usage.find("gpu"); gpu != usage.end()) {
      used_nominal = gpu->second.used.ToString() + "/" + gpu->second.nominal.ToString();
      borrowed = gpu->second.borrowed.ToString();
    }
    return {name, TextAt(item, "/spec/cohort", "-"), used_nominal, borrowed, age};
  }
  if (kind == "Job") {
    return {name,
            TextAt(item, "/status/phase", "Pending"),
            JobReady(item, pods),
            TextAt(item, "/status/restartCount", "0"),
            TextAt(item, "/spec/replicas", "1") + "x" + TextAt(item, "/spec/resources/gpu", "0"),
            TextAt(item, "/spec/queue", "-"),
            age};
  }
  if (kind == "Pod") {
    std::string phase = TextAt(item, "/status/phase", "Pending");
    return {name,
            phase,
            TextAt(item, "/status/restartCount", "0"),
            TextAt(item, "/spec/nodeName", "-"),
            AssignedGpus(item),
            age};
  }
  if (kind == "Service") {
    int64_t desired = 0;
    for (const Json& version : FieldAt(item, "/status/versions")) {
      desired += version.value("desiredReplicas", int64_t{0});
    }
    return {
        name,
        TextAt(item, "/spec/model", "-"),
        TextAt(item, "/status/readyReplicas", "0") + "/" + TextAt(item, "/status/replicas", "0"),
        std::to_string(desired),
        TextAt(item, "/spec/minReplicas", "1") + "-" + TextAt(item, "/spec/maxReplicas", "1"),
        TextAt(item, "/spec/resources/gpu", "0"),
        age};
  }
  if (kind == "Event") {
    std::string message = TextAt(item, "/message");  // FormatTable shortens it to fit
    std::string object =
        TextAt(item, "/involvedObject/kind") + "/" + TextAt(item, "/involvedObject/name");
    std::string last = TextAt(item, "/lastTimestamp", TextAt(item, "/metadata/creationTimestamp"));
    return {ShortAge(last, now), TextAt(item, "/type", "Normal"), TextAt(item, "/reason"), object,
            message};
  }
  return {name, age};
}

// Cuts the last column's cells ("...") so that rows fit kTableWidth, keeping at least
// kMinLastColumn characters of it.
void ShortenLastColumn(const TableRow& header, std::vector<TableRow>& rows) {
  constexpr size_t kTableWidth = 80;
  constexpr size_t kMinLastColumn = 16;
  size_t before = 0;  // the width of every column but the last, with separators
  for (size_t column = 0; column + 1 < header.size(); ++column) {
    size_t width = header[column].size();
    for (const TableRow& row : rows) width = std::max(width, row[column].size());
    before += width + 3;
  }
  size_t room = std::max(kMinLastColumn, kTableWidth - std::min(kTableWidth, before));
  for (TableRow& row : rows) {
    std::string& last = row.back();
    if (last.size() > room) last = last.substr(0, room - 3) + "...";
  }
}

}  // namespace

std::string RenderColumns(const TableRow& header, const std::vector<TableRow>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  auto measure = [&](const TableRow& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  };
  measure(header);
  for (const TableRow& row : rows) measure(row);
  std::string out;
  auto write = [&](const TableRow& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  };
  write(header);
  for (const TableRow& row : rows) write(row);
  return out;
}

bool TableReadsPods(const api::ResourceType& type) { return type.kind == "Job"; }

bool PodJsonTerminal(const Json& pod) {
  const std::optional<api::PodPhase> phase =
      api::ParsePodPhase(TextAt(pod, "/status/phase", "Pending"));
  return phase == api::PodPhase::kSucceeded || phase == api::PodPhase::kFailed;
}

bool PodOwnedBy(const Json& pod, const Json& owner, std::string_view kind) {
  return TextAt(pod, "/spec/owner/kind") == kind &&
         TextAt(pod, "/spec/owner/name") == TextAt(owner, "/metadata/name") &&
         TextAt(pod, "/metadata/namespace") == TextAt(owner, "/metadata/namespace");
}

std::string ShortAge(const std::string& timestamp, TimePoint now) {
  std::optional<TimePoint> parsed = ParseRfc3339(timestamp);
  if (!parsed) return "<unknown>";
  const TimePoint then = *parsed;
  int64_t seconds =
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(now - then).count());
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string FormatTable(const api::ResourceType& type, const std::vector<Json>& items,
                        bool with_namespace, TimePoint now, const std::vector<Json>& pods,
                        bool header) {
  TableRow head = Columns(type);
  if (with_namespace) head.insert(head.begin(), "NAMESPACE");
  std::vector<TableRow> rows;
  for (const Json& item : items) {
    TableRow row = Cells(type, item, now, pods);
    if (with_namespace) row.insert(row.begin(), TextAt(item, "/metadata/namespace", "-"));
    rows.push_back(std::move(row));
  }
  if (head.back() == "MESSAGE") ShortenLastColumn(head, rows);
  std::string table = RenderColumns(head, rows);
  return header ? table : table.substr(table.find('\n') + 1);
}

std::string FormatGpuHolders(const std::vector<Json>& nodes, const std::vector<Json>& pods) {
  // (node, GPU index) -> "namespace/pod", for pods that still hold their GPUs.
  std::map<std::pair<std::string, int64_t>, std::string> holders;
  for (const Json& pod : pods) {
    if (PodJsonTerminal(pod)) continue;
    std::string node = TextAt(pod, "/spec/nodeName");
    std::string holder = TextAt(pod, "/metadata/namespace") + "/" + TextAt(pod, "/metadata/name");
    for (const Json& gpu : FieldAt(pod, "/spec/assignedGpus")) {
      std::string& slot = holders[{node, gpu.value("index", int64_t{0})}];
      slot += (slot.empty() ? "" : ",") + holder;
    }
  }
  std::vector<TableRow> rows;
  for (const Json& node : nodes) {
    std::string name = TextAt(node, "/metadata/name");
    for (const Json& gpu : FieldAt(node, "/status/gpus")) {
      int64_t index = gpu.value("index", int64_t{0});
      auto it = holders.find({name, index});
      rows.push_back({name, std::to_string(index), gpu.value("model", "?"),
                      TextAt(gpu, "/memory", "-"), it == holders.end() ? "-" : it->second});
    }
  }
  return RenderColumns({"NODE", "GPU", "MODEL", "MEMORY", "HELD BY"}, rows);
}

}  // namespace strata::client
