#include "api/object_table.h"

#include <algorithm>
#include <map>

#include "api/job_roles.h"
#include "api/local_queue_form.h"
#include "api/manifest.h"
#include "api/media_ranges.h"
#include "api/pod.h"
#include "api/queue_usage.h"
#include "api/served_form.h"
#include "api/source_form.h"
#include "common/json_fields.h"

namespace strata::api {
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

// The job's spec; empty when the object does not decode.
JobSpec JobSpecOf(const Json& item) {
  Result<Object> decoded = DecodeObject(item);
  const Job* job = decoded ? decoded->As<Job>() : nullptr;
  return job == nullptr ? JobSpec() : job->spec;
}

// "3/4": the job's running pods out of its pods (of every role).
std::string JobReady(const Json& job, const JobSpec& spec, const std::vector<Json>& pods) {
  int running = 0;
  for (const Json& pod : pods) {
    if (PodOwnedBy(pod, job, "Job") && TextAt(pod, "/status/phase") == "Running") ++running;
  }
  return std::to_string(running) + "/" + std::to_string(JobPodCount(spec));
}

// "2x8": pods x GPUs per pod, by role ("1x0+2x8").
std::string JobGpus(const JobSpec& spec) {
  std::string out;
  for (const JobRole& role : JobRoles(spec)) {
    if (!out.empty()) out += "+";
    out += std::to_string(role.replicas) + "x" + role.resources.gpu.ToString();
  }
  return out;
}

// A queue's use by resource, from its status (the scheduler's charging rules); empty when the
// object does not decode.
std::map<std::string, QueueResourceUsage> QueueUse(const Json& item) {
  Result<Object> decoded = DecodeObject(item);
  const Queue* queue = decoded ? decoded->As<Queue>() : nullptr;
  return queue == nullptr ? std::map<std::string, QueueResourceUsage>() : UsageByResource(*queue);
}

const TableColumn kName{"Name", "The object's name, unique in its namespace."};
const TableColumn kAge{"Age", "How long ago the object was created."};

}  // namespace

std::vector<TableColumn> TableColumns(const ResourceType& type) {
  std::string_view kind = type.kind;
  const bool local_queue = &StorageVersionOf(type) == &LocalQueueType();
  if (IsSourceServedType(type) || local_queue) {
    // Its own project's columns.
    std::vector<TableColumn> columns = {kName};
    for (TableColumn& column : local_queue ? LocalQueueColumns() : SourceTableColumns(type)) {
      columns.push_back(std::move(column));
    }
    columns.push_back(kAge);
    return columns;
  }
  if (kind == "Node") {
    return {kName,
            {"Status", "Ready when the node's agent reports in, else NotReady or Unknown."},
            {"GPUs", "The node's GPUs by model."},
            {"Rack", "The rack (topology.strata.dev/rack) the node is in."},
            kAge};
  }
  if (kind == "Queue") {
    return {kName,
            {"Cohort", "The cohort whose queues lend and borrow quota among themselves."},
            {"GPU Used/Nominal", "GPUs its admitted workloads hold, out of its nominal quota."},
            {"Borrowed", "GPUs it holds beyond its nominal quota, borrowed from its cohort."},
            kAge};
  }
  if (kind == "Job") {
    return {kName,
            {"Phase", "Pending, Running, Restarting, Succeeded or Failed."},
            {"Ready", "Its running pods out of its replicas."},
            {"Restarts", "Whole-group restarts after a failure."},
            {"GPUs", "Replicas x GPUs per replica, by role."},
            {"Queue", "The queue it is admitted through."},
            kAge};
  }
  if (kind == "Pod") {
    return {kName,
            {"Phase", "Pending, Running, Succeeded or Failed."},
            {"Restarts", "Times its processes were restarted."},
            {"Node", "The node it is bound to."},
            {"GPUs", "The indices of the GPUs it holds on its node."},
            kAge};
  }
  if (kind == "Service") {
    return {kName,
            {"Model", "The model it serves through the gateway."},
            {"Ready", "Replicas serving, out of the replicas running."},
            {"Desired", "Replicas its autoscaler wants."},
            {"Min-Max", "Its autoscaler's bounds."},
            {"GPU/Pod", "GPUs per replica pod."},
            kAge};
  }
  if (kind == "Namespace") {
    return {kName, {"Status", "Active: deleting it deletes what is in it at once."}, kAge};
  }
  if (kind == "Event") {
    return {{"Last Seen", "How long ago it last happened."},
            {"Type", "Normal or Warning."},
            {"Reason", "Why, in one CamelCase word."},
            {"Object", "The object it is about."},
            {"Message", "What happened."}};
  }
  if (kind == "ConfigMap") {
    return {kName, {"Data", "How many keys it holds (data and binaryData)."}, kAge};
  }
  if (kind == "Secret") {
    return {kName,
            {"Type", "What the data is for (Opaque, kubernetes.io/tls...)."},
            {"Data", "How many keys it holds; their values are never shown."},
            kAge};
  }
  return {kName, kAge};
}

std::vector<std::string> TableCells(const ResourceType& type, const Json& item, TimePoint now,
                                    const std::vector<Json>& pods) {
  std::string_view kind = type.kind;
  std::string name = TextAt(item, "/metadata/name");
  std::string age = ShortAge(TextAt(item, "/metadata/creationTimestamp"), now);
  const bool local_queue = &StorageVersionOf(type) == &LocalQueueType();
  if (IsSourceServedType(type) || local_queue) {
    std::vector<std::string> cells = {name};
    // A LocalQueue's item is served already (api/local_queue_form.h).
    for (std::string& cell :
         local_queue ? LocalQueueCells(item) : SourceTableCells(type, item, now)) {
      cells.push_back(std::move(cell));
    }
    cells.push_back(age);
    return cells;
  }
  if (kind == "Node") {
    return {name, NodeReady(item), GpuSummary(item),
            TextAt(item, "/metadata/labels/topology.strata.dev~1rack", "-"), age};
  }
  if (kind == "Queue") {
    const std::map<std::string, QueueResourceUsage> usage = QueueUse(item);
    std::string used_nominal = "-";
    std::string borrowed = "-";
    if (auto gpu = usage.find("gpu"); gpu != usage.end()) {
      used_nominal = gpu->second.used.ToString() + "/" + gpu->second.nominal.ToString();
      borrowed = gpu->second.borrowed.ToString();
    }
    return {name, TextAt(item, "/spec/cohort", "-"), used_nominal, borrowed, age};
  }
  if (kind == "Job") {
    const JobSpec spec = JobSpecOf(item);
    return {name,
            TextAt(item, "/status/phase", "Pending"),
            JobReady(item, spec, pods),
            TextAt(item, "/status/restartCount", "0"),
            JobGpus(spec),
            TextAt(item, "/spec/queue", "-"),
            age};
  }
  if (kind == "Pod") {
    return {name,
            TextAt(item, "/status/phase", "Pending"),
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
  if (kind == "Namespace") return {name, TextAt(item, "/status/phase", "Active"), age};
  if (kind == "Event") {
    std::string object =
        TextAt(item, "/involvedObject/kind") + "/" + TextAt(item, "/involvedObject/name");
    std::string last = TextAt(item, "/lastTimestamp", TextAt(item, "/metadata/creationTimestamp"));
    return {ShortAge(last, now), TextAt(item, "/type", "Normal"), TextAt(item, "/reason"), object,
            TextAt(item, "/message")};
  }
  if (kind == "ConfigMap") {
    const size_t keys = FieldAt(item, "/data").size() + FieldAt(item, "/binaryData").size();
    return {name, std::to_string(keys), age};
  }
  if (kind == "Secret") {
    return {name, TextAt(item, "/type", "Opaque"), std::to_string(FieldAt(item, "/data").size()),
            age};
  }
  return {name, age};
}

bool TableReadsPods(const ResourceType& type) {
  return type.kind == "Job" && type.group == kStrataGroup;
}

std::string ShortAge(const std::string& timestamp, TimePoint now) {
  std::optional<TimePoint> parsed = ParseRfc3339(timestamp);
  if (!parsed) return "<unknown>";
  const int64_t seconds =
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(now - *parsed).count());
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

bool PodJsonTerminal(const Json& pod) {
  const std::optional<PodPhase> phase = ParsePodPhase(TextAt(pod, "/status/phase", "Pending"));
  return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed;
}

bool PodOwnedBy(const Json& pod, const Json& owner, std::string_view kind) {
  return TextAt(pod, "/spec/owner/kind") == kind &&
         TextAt(pod, "/spec/owner/name") == TextAt(owner, "/metadata/name") &&
         TextAt(pod, "/metadata/namespace") == TextAt(owner, "/metadata/namespace");
}

std::optional<std::string> TableVersionWanted(std::string_view accept) {
  for (const MediaRange& range : ParseAcceptHeader(accept)) {
    if (range.type != "application/json" && range.type != "application/*" && range.type != "*/*") {
      continue;  // YAML, protobuf, CBOR...: not served; the next range may be
    }
    auto as = range.parameters.find("as");
    if (as == range.parameters.end()) return std::nullopt;  // the object itself
    auto group = range.parameters.find("g");
    auto version = range.parameters.find("v");
    if (as->second == "Table" && group != range.parameters.end() &&
        group->second == "meta.k8s.io" && version != range.parameters.end() &&
        (version->second == "v1" || version->second == "v1beta1")) {
      return version->second;
    }
  }
  return std::nullopt;
}

std::optional<TableObject> ParseTableObject(std::string_view text) {
  if (text.empty() || text == "Metadata") return TableObject::kMetadata;
  if (text == "None") return TableObject::kNone;
  if (text == "Object") return TableObject::kObject;
  return std::nullopt;
}

Json MakeTable(const ResourceType& type, std::string_view version, const std::vector<Json>& objects,
               TableObject include, Json list_metadata, TimePoint now,
               const std::vector<Json>& pods) {
  const std::string api_version = "meta.k8s.io/" + std::string(version);
  Json columns = Json::array();
  const std::vector<TableColumn> definitions = TableColumns(type);
  for (size_t i = 0; i < definitions.size(); ++i) {
    // The name column is formatted "name": kubectl puts the kind before it with --show-kind.
    const bool name = definitions[i].name == kName.name;
    columns.push_back({{"name", definitions[i].name},
                       {"type", "string"},
                       {"format", name ? "name" : ""},
                       {"description", definitions[i].description},
                       {"priority", definitions[i].priority}});
  }
  Json rows = Json::array();
  for (const Json& object : objects) {
    Json row = {{"cells", TableCells(type, object, now, pods)}};
    Json served = object;
    ToServedForm(served, KubernetesFormAt(type), &type);
    if (include == TableObject::kObject) {
      row["object"] = std::move(served);
    } else if (include == TableObject::kMetadata) {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", api_version},
                       {"metadata", FieldAt(served, "/metadata")}};
    }
    rows.push_back(std::move(row));
  }
  return {{"kind", "Table"},
          {"apiVersion", api_version},
          {"metadata", std::move(list_metadata)},
          {"columnDefinitions", std::move(columns)},
          {"rows", std::move(rows)}};
}

}  // namespace strata::api
