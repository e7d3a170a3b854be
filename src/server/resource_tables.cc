#include "server/resource_tables.h"

#include <algorithm>
#include <ctime>
#include <map>

#include "common/yaml_json.h"

namespace strata::server {
namespace {

using Json = nlohmann::json;
using Row = std::vector<std::string>;

std::string Text(const Json& object, std::string_view pointer, std::string fallback = "") {
  Json::json_pointer path{std::string(pointer)};
  if (!object.contains(path)) return fallback;
  const Json& value = object.at(path);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return fallback;
  return value.dump();
}

const Json& Field(const Json& object, std::string_view pointer) {
  static const Json kNull;
  Json::json_pointer path{std::string(pointer)};
  return object.contains(path) ? object.at(path) : kNull;
}

std::string Render(const Row& header, const std::vector<Row>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  auto measure = [&](const Row& row) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  };
  measure(header);
  for (const Row& row : rows) measure(row);
  std::string out;
  auto write = [&](const Row& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    out += line + "\n";
  };
  write(header);
  for (const Row& row : rows) write(row);
  return out;
}

std::string NodeReady(const Json& node) {
  for (const Json& condition : Field(node, "/status/conditions")) {
    if (condition.value("type", "") == "Ready") {
      return condition.value("status", "") == "True" ? "Ready" : "NotReady";
    }
  }
  return "Unknown";
}

// "8x H100-80GB" (several models joined by ',').
std::string GpuSummary(const Json& node) {
  std::map<std::string, int> models;
  for (const Json& gpu : Field(node, "/status/gpus")) ++models[gpu.value("model", "?")];
  std::string out;
  for (const auto& [model, count] : models) {
    out += (out.empty() ? "" : ",") + std::to_string(count) + "x " + model;
  }
  return out.empty() ? "-" : out;
}

std::string AssignedGpus(const Json& pod) {
  std::string out;
  for (const Json& gpu : Field(pod, "/spec/assignedGpus")) {
    out += (out.empty() ? "" : ",") + std::to_string(gpu.value("index", 0));
  }
  return out.empty() ? "-" : out;
}

std::string QueueGpuNominal(const Json& queue) {
  std::string out;
  for (const Json& flavor : Field(queue, "/spec/flavors")) {
    for (const Json& resource : flavor.value("resources", Json::array())) {
      if (resource.value("name", "") == "gpu") {
        out += (out.empty() ? "" : ",") + flavor.value("name", "") + ":" +
               Text(resource, "/nominal", "0");
      }
    }
  }
  return out.empty() ? "-" : out;
}

// Every line of `text` indented by two spaces.
std::string Indented(const std::string& text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "  " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

bool Terminal(const Json& pod) {
  std::string phase = Text(pod, "/status/phase", "Pending");
  return phase == "Succeeded" || phase == "Failed";
}

Row Columns(const ResourceType& type) {
  std::string_view kind = type.kind;
  if (kind == "Node") return {"NAME", "STATUS", "GPUS", "RACK", "AGE"};
  if (kind == "Queue") return {"NAME", "COHORT", "GPU NOMINAL", "AGE"};
  if (kind == "Job") return {"NAME", "PHASE", "REPLICAS", "GPU/POD", "QUEUE", "AGE"};
  if (kind == "Pod") return {"NAME", "PHASE", "NODE", "GPUS", "RESTARTS", "AGE"};
  if (kind == "Service") return {"NAME", "MODEL", "REPLICAS", "GPU/POD", "AGE"};
  if (kind == "Event") return {"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"};
  return {"NAME", "AGE"};
}

Row Cells(const ResourceType& type, const Json& item, TimePoint now) {
  std::string_view kind = type.kind;
  std::string name = Text(item, "/metadata/name");
  std::string age = ShortAge(Text(item, "/metadata/creationTimestamp"), now);
  if (kind == "Node") {
    return {name, NodeReady(item), GpuSummary(item),
            Text(item, "/metadata/labels/topology.strata.dev~1rack", "-"), age};
  }
  if (kind == "Queue") return {name, Text(item, "/spec/cohort", "-"), QueueGpuNominal(item), age};
  if (kind == "Job") {
    return {name,
            Text(item, "/status/phase", "Pending"),
            Text(item, "/spec/replicas", "1") + "x" + Text(item, "/spec/procPerNode", "1"),
            Text(item, "/spec/resources/gpu", "0"),
            Text(item, "/spec/queue", "-"),
            age};
  }
  if (kind == "Pod") {
    return {name,
            Text(item, "/status/phase", "Pending"),
            Text(item, "/spec/nodeName", "-"),
            AssignedGpus(item),
            Text(item, "/status/restartCount", "0"),
            age};
  }
  if (kind == "Service") {
    return {name, Text(item, "/spec/model", "-"),
            Text(item, "/spec/minReplicas", "1") + "-" + Text(item, "/spec/maxReplicas", "1"),
            Text(item, "/spec/resources/gpu", "0"), age};
  }
  if (kind == "Event") {
    std::string message = Text(item, "/message");
    if (message.size() > 60) message = message.substr(0, 57) + "...";
    std::string object =
        Text(item, "/involvedObject/kind") + "/" + Text(item, "/involvedObject/name");
    std::string last = Text(item, "/lastTimestamp", Text(item, "/metadata/creationTimestamp"));
    return {ShortAge(last, now), Text(item, "/type", "Normal"), Text(item, "/reason"), object,
            message};
  }
  return {name, age};
}

}  // namespace

std::string ShortAge(const std::string& timestamp, TimePoint now) {
  std::tm parts{};
  char zone = 0;
  if (std::sscanf(timestamp.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &parts.tm_year, &parts.tm_mon,
                  &parts.tm_mday, &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &zone) != 7 ||
      zone != 'Z') {
    return "<unknown>";
  }
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  TimePoint then = std::chrono::time_point_cast<Duration>(
      std::chrono::system_clock::from_time_t(timegm(&parts)));
  int64_t seconds =
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(now - then).count());
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string FormatTable(const ResourceType& type, const std::vector<Json>& items,
                        bool with_namespace, TimePoint now) {
  Row header = Columns(type);
  if (with_namespace) header.insert(header.begin(), "NAMESPACE");
  std::vector<Row> rows;
  for (const Json& item : items) {
    Row row = Cells(type, item, now);
    if (with_namespace) row.insert(row.begin(), Text(item, "/metadata/namespace", "-"));
    rows.push_back(std::move(row));
  }
  return Render(header, rows);
}

std::string FormatGpuHolders(const std::vector<Json>& nodes, const std::vector<Json>& pods) {
  // (node, GPU index) -> "namespace/pod", for pods that still hold their GPUs.
  std::map<std::pair<std::string, int64_t>, std::string> holders;
  for (const Json& pod : pods) {
    if (Terminal(pod)) continue;
    std::string node = Text(pod, "/spec/nodeName");
    std::string holder = Text(pod, "/metadata/namespace") + "/" + Text(pod, "/metadata/name");
    for (const Json& gpu : Field(pod, "/spec/assignedGpus")) {
      std::string& slot = holders[{node, gpu.value("index", int64_t{0})}];
      slot += (slot.empty() ? "" : ",") + holder;
    }
  }
  std::vector<Row> rows;
  for (const Json& node : nodes) {
    std::string name = Text(node, "/metadata/name");
    for (const Json& gpu : Field(node, "/status/gpus")) {
      int64_t index = gpu.value("index", int64_t{0});
      auto it = holders.find({name, index});
      rows.push_back({name, std::to_string(index), gpu.value("model", "?"),
                      Text(gpu, "/memory", "-"), it == holders.end() ? "-" : it->second});
    }
  }
  return Render({"NODE", "GPU", "MODEL", "MEMORY", "HELD BY"}, rows);
}

std::string FormatDescription(const ResourceType& type, const Json& object,
                              const std::vector<Json>& related_pods,
                              const std::vector<Json>& events, TimePoint now) {
  std::string out;
  out += "Name:         " + Text(object, "/metadata/name") + "\n";
  if (type.namespaced) out += "Namespace:    " + Text(object, "/metadata/namespace") + "\n";
  out += "Kind:         " + std::string(type.kind) + "\n";
  out += "Created:      " + Text(object, "/metadata/creationTimestamp") + " (" +
         ShortAge(Text(object, "/metadata/creationTimestamp"), now) + " ago)\n";
  for (const char* section : {"spec", "status"}) {
    if (!object.contains(section)) continue;
    std::string title = section == std::string_view("spec") ? "Spec:" : "Status:";
    out += title + "\n" + Indented(ToYaml(object[section]));
  }
  std::string message = Text(object, "/status/message");
  if (!message.empty() && Text(object, "/status/phase", "Pending") == "Pending") {
    out +=
        "Pending:      " + Text(object, "/status/reason", "Unschedulable") + ": " + message + "\n";
  }
  if (type.kind == "Node") {
    out += "GPUs:\n" + Indented(FormatGpuHolders({object}, related_pods));
  } else if (!related_pods.empty()) {
    const ResourceType* pods = FindResourceTypeByKind("Pod");
    out += "Pods:\n" + Indented(FormatTable(*pods, related_pods, false, now));
  }
  out += "Events:";
  if (events.empty()) return out + "      <none>\n";
  out += "\n";
  Row header = {"LAST SEEN", "TYPE", "REASON", "COUNT", "MESSAGE"};
  std::vector<Row> rows;
  for (const Json& event : events) {
    std::string last = Text(event, "/lastTimestamp", Text(event, "/metadata/creationTimestamp"));
    rows.push_back({ShortAge(last, now), Text(event, "/type", "Normal"), Text(event, "/reason"),
                    Text(event, "/count", "1"), Text(event, "/message")});
  }
  return out + Indented(Render(header, rows));
}

}  // namespace strata::server
