#include "client/resource_description.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/manifest.h"
#include "api/object_table.h"
#include "api/queue_usage.h"
#include "client/resource_tables.h"
#include "common/base64.h"
#include "common/json_fields.h"
#include "common/yaml_json.h"

namespace strata::client {
namespace {

using Json = nlohmann::json;

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

// "Label:" padded to the width every field name of a description uses.
std::string Line(std::string_view label, const std::string& value) {
  std::string head = std::string(label) + ":";
  if (head.size() < 18) head += std::string(18 - head.size(), ' ');
  return head + value + "\n";
}

// "2026-01-01T00:00:30Z (5m ago)", or "<none>".
std::string When(const std::string& timestamp, TimePoint now) {
  if (timestamp.empty()) return "<none>";
  return timestamp + " (" + api::ShortAge(timestamp, now) + " ago)";
}

std::string JobState(const Json& job, TimePoint now) {
  std::string out;
  out += Line("Phase", TextAt(job, "/status/phase", "Pending"));
  out += Line("Restarts", TextAt(job, "/status/restartCount", "0") + " of at most " +
                              TextAt(job, "/spec/maxRestarts", "0"));
  out += Line("Preemptions", TextAt(job, "/status/preemptionCount", "0"));
  out += Line("Last checkpoint", When(TextAt(job, "/status/lastCheckpointTime"), now));
  out += Line("Started", When(TextAt(job, "/status/startTime"), now));
  std::string completed = TextAt(job, "/status/completionTime");
  if (!completed.empty()) out += Line("Completed", When(completed, now));
  return out;
}

std::string PodState(const Json& pod) {
  std::string out;
  out += Line("Phase", TextAt(pod, "/status/phase", "Pending"));
  // Why it is in that phase: a start error ("cannot run ...") is the first thing to read.
  std::string reason = TextAt(pod, "/status/reason");
  if (!reason.empty()) out += Line("Reason", reason);
  std::string message = TextAt(pod, "/status/message");
  if (!message.empty()) out += Line("Message", message);
  out += Line("Node", TextAt(pod, "/spec/nodeName", "<none>"));
  std::string gpus;
  for (const Json& gpu : FieldAt(pod, "/spec/assignedGpus")) {
    gpus += (gpus.empty() ? "" : ", ") + TextAt(gpu, "/index", "?");
    std::string uuid = TextAt(gpu, "/uuid");
    if (!uuid.empty()) gpus += " (" + uuid + ")";
  }
  out += Line("GPUs", gpus.empty() ? "<none>" : gpus);
  out += Line("Restarts", TextAt(pod, "/status/restartCount", "0"));
  std::string exit_code = TextAt(pod, "/status/exitCode");
  if (!exit_code.empty()) out += Line("Exit code", exit_code);
  std::string owner = TextAt(pod, "/spec/owner/kind");
  if (!owner.empty()) {
    out += Line("Owner", owner + "/" + TextAt(pod, "/spec/owner/name") + " (replica " +
                             TextAt(pod, "/spec/owner/replica", "0") + ")");
  }
  return out;
}

// What the queue's status says it uses (the scheduler's charging rules), by resource.
std::string QueueState(const Json& queue) {
  Result<api::Object> decoded = api::DecodeObject(queue);
  const api::Queue* value = decoded ? decoded->As<api::Queue>() : nullptr;
  if (value == nullptr) return "";
  std::vector<TableRow> rows;
  for (const auto& [name, resource] : api::UsageByResource(*value)) {
    rows.push_back({name, resource.nominal.ToString(), resource.used.ToString(),
                    resource.borrowed.ToString()});
  }
  return "Usage:\n" + Indented(RenderColumns({"RESOURCE", "NOMINAL", "USED", "BORROWED"}, rows));
}

// A service's replicas per version, and its autoscaler's last decisions with their reasons.
std::string ServiceState(const Json& service, TimePoint now) {
  std::vector<TableRow> versions;
  for (const Json& v : FieldAt(service, "/status/versions")) {
    versions.push_back({TextAt(v, "/name"), TextAt(v, "/desiredReplicas", "0"),
                        TextAt(v, "/readyReplicas", "0"), TextAt(v, "/startingReplicas", "0"),
                        TextAt(v, "/drainingReplicas", "0"), TextAt(v, "/updatedReplicas", "0"),
                        TextAt(v, "/reason", "-")});
  }
  std::string out;
  if (!versions.empty()) {
    out +=
        "Replicas:\n" +
        Indented(RenderColumns(
            {"VERSION", "DESIRED", "READY", "STARTING", "DRAINING", "UPDATED", "WHY"}, versions));
  }
  const Json& cold_start = FieldAt(service, "/status/coldStartSeconds");
  out += Line("Cold start", !cold_start.is_number()
                                ? "<not measured yet>"
                                : fmt::format("{:.1f} s (mean over {} ready replica(s))",
                                              cold_start.get<double>(),
                                              TextAt(service, "/status/coldStartsMeasured", "0")));
  std::vector<TableRow> decisions;
  for (const Json& d : FieldAt(service, "/status/decisions")) {
    decisions.push_back({api::ShortAge(TextAt(d, "/time"), now), TextAt(d, "/version"),
                         TextAt(d, "/from", "0") + " -> " + TextAt(d, "/to", "0"),
                         TextAt(d, "/reason")});
  }
  if (!decisions.empty()) {
    out += "Scale decisions:\n" +
           Indented(RenderColumns({"AGO", "VERSION", "REPLICAS", "WHY"}, decisions));
  }
  return out;
}

std::string Conditions(const Json& object, TimePoint now) {
  const Json& conditions = FieldAt(object, "/status/conditions");
  if (!conditions.is_array() || conditions.empty()) return "";
  std::vector<TableRow> rows;
  for (const Json& condition : conditions) {
    std::string changed =
        TextAt(condition, "/lastTransitionTime", TextAt(condition, "/lastHeartbeatTime"));
    rows.push_back({TextAt(condition, "/type"), TextAt(condition, "/status"),
                    TextAt(condition, "/reason", "-"), api::ShortAge(changed, now),
                    TextAt(condition, "/message")});
  }
  return "Conditions:\n" +
         Indented(RenderColumns({"TYPE", "STATUS", "REASON", "AGE", "MESSAGE"}, rows));
}

// Oldest first, by when each event last happened (kubectl's order); ties keep the list's.
std::string Events(const std::vector<Json>& events, TimePoint now) {
  if (events.empty()) return Line("Events", "<none>");
  std::vector<std::pair<TimePoint, const Json*>> ordered;
  for (const Json& event : events) {
    std::string last =
        TextAt(event, "/lastTimestamp", TextAt(event, "/metadata/creationTimestamp"));
    ordered.push_back({ParseRfc3339(last).value_or(TimePoint{}), &event});
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TableRow> rows;
  for (const auto& [when, event] : ordered) {
    std::string last =
        TextAt(*event, "/lastTimestamp", TextAt(*event, "/metadata/creationTimestamp"));
    rows.push_back({api::ShortAge(last, now), TextAt(*event, "/type", "Normal"),
                    TextAt(*event, "/reason"), TextAt(*event, "/count", "1"),
                    TextAt(*event, "/message")});
  }
  return "Events:\n" +
         Indented(RenderColumns({"LAST SEEN", "TYPE", "REASON", "COUNT", "MESSAGE"}, rows));
}

// A ConfigMap's data as kubectl describes it (each key and its text; binary values by size), or
// a Secret's keys with their sizes only: a Secret's values are never printed.
std::string ConfigData(const Json& object, bool secret) {
  std::string out = secret ? Line("Type", TextAt(object, "/type", "Opaque")) : "";
  out += "Data:\n";
  for (const auto& [key, value] : FieldAt(object, "/data").items()) {
    const std::string text = value.is_string() ? value.get<std::string>() : "";
    if (secret) {
      const std::optional<std::string> bytes = Base64Decode(text);
      out += "  " + key + ":  " + std::to_string(bytes ? bytes->size() : 0) + " bytes\n";
    } else {
      out += "  " + key + ":\n" + Indented(Indented(text));
    }
  }
  for (const auto& [key, value] : FieldAt(object, "/binaryData").items()) {
    const std::optional<std::string> bytes =
        Base64Decode(value.is_string() ? value.get<std::string>() : "");
    out += "  " + key + ":  " + std::to_string(bytes ? bytes->size() : 0) + " bytes (binary)\n";
  }
  return out;
}

}  // namespace

std::string FormatDescription(const api::ResourceType& type, const Json& object,
                              const std::vector<Json>& pods, const std::vector<Json>& events,
                              TimePoint now) {
  std::string out;
  out += Line("Name", TextAt(object, "/metadata/name"));
  if (type.namespaced) out += Line("Namespace", TextAt(object, "/metadata/namespace"));
  out += Line("Kind", std::string(type.kind));
  out += Line("Created", When(TextAt(object, "/metadata/creationTimestamp"), now));
  if (object.contains("spec")) out += "Spec:\n" + Indented(ToYaml(object["spec"]));
  if (type.kind == "Job") {
    out += JobState(object, now);
  } else if (type.kind == "Pod") {
    out += PodState(object);
  } else if (type.kind == "Queue") {
    out += QueueState(object);
  } else if (type.kind == "Service") {
    out += ServiceState(object, now);
  } else if (type.kind == "ConfigMap" || type.kind == "Secret") {
    out += ConfigData(object, type.kind == "Secret");
  } else if (object.contains("status") && type.kind != "Node") {
    out += "Status:\n" + Indented(ToYaml(object["status"]));
  }
  out += Conditions(object, now);
  std::string message = TextAt(object, "/status/message");
  if (!message.empty() && TextAt(object, "/status/phase", "Pending") == "Pending") {
    out += Line("Pending", TextAt(object, "/status/reason", "Unschedulable") + ": " + message);
  }
  if (type.kind == "Node") {
    out += "GPUs:\n" + Indented(FormatGpuHolders({object}, pods));
  } else if (!pods.empty() && type.kind != "Queue") {
    out += "Pods:\n" + Indented(FormatTable(*api::FindResourceTypeByKind("Pod"), pods, false, now));
  }
  return out + Events(events, now);
}

}  // namespace strata::client
