#include "api/local_queue_form.h"

#include "api/kueue_form.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

std::string RecordKey(std::string_view namespace_name, std::string_view name) {
  return std::string(namespace_name) + "/" + std::string(name);
}

// The kept metadata of the LocalQueues naming `stored`, an empty object when none is readable.
Json Records(const Json& stored) {
  const std::string text = StringMemberOr(
      MemberOrNull(MemberOrNull(stored, "metadata"), "annotations"), kLocalQueuesAnnotation);
  Json records = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return records.is_object() ? records : Json::object();
}

// Sets the kept metadata of `queue`'s LocalQueues, dropping the annotation when none is left.
void SetRecords(Json& queue, const Json& records) {
  Json& metadata = queue["metadata"];
  if (records.empty()) {
    if (metadata.contains("annotations")) {
      metadata["annotations"].erase(kLocalQueuesAnnotation);
      if (metadata["annotations"].empty()) metadata.erase("annotations");
    }
    return;
  }
  metadata["annotations"][kLocalQueuesAnnotation] = records.dump();
}

const Json& LocalQueueRefs(const Json& stored) {
  return MemberOrNull(MemberOrNull(stored, "spec"), "localQueues");
}

bool SameRef(const Json& ref, std::string_view namespace_name, std::string_view name) {
  return StringMemberOr(ref, "namespace") == namespace_name && StringMemberOr(ref, "name") == name;
}

}  // namespace

bool HasLocalQueue(const Json& stored, std::string_view namespace_name, std::string_view name) {
  for (const Json& ref : LocalQueueRefs(stored)) {
    if (SameRef(ref, namespace_name, name)) return true;
  }
  return false;
}

std::vector<Json> ServedLocalQueues(const Json& stored) {
  const Json& queue_metadata = MemberOrNull(stored, "metadata");
  const Json records = Records(stored);
  std::vector<Json> served;
  for (const Json& ref : LocalQueueRefs(stored)) {
    const std::string namespace_name = StringMemberOr(ref, "namespace");
    const std::string name = StringMemberOr(ref, "name");
    const Json& record = MemberOrNull(records, RecordKey(namespace_name, name));
    Json metadata = {
        {"name", name},
        {"namespace", namespace_name},
        {"resourceVersion", MemberOrNull(queue_metadata, "resourceVersion")},
        {"creationTimestamp", StringMemberOr(record, "creationTimestamp",
                                             StringMemberOr(queue_metadata, "creationTimestamp"))}};
    for (const char* key : {"labels", "annotations"}) {
      if (MemberOrNull(record, key).is_object() && !record[key].empty())
        metadata[key] = record[key];
    }
    served.push_back(
        {{"apiVersion", LocalQueueType().GroupVersion()},
         {"kind", LocalQueueType().kind},
         {"metadata", std::move(metadata)},
         {"spec",
          {{"clusterQueue", StringMemberOr(queue_metadata, "name")}, {"stopPolicy", "None"}}}});
  }
  return served;
}

LocalQueueWorkload LocalQueueWorkloadOf(const Json& stored_job) {
  const Json& metadata = MemberOrNull(stored_job, "metadata");
  const std::string queue = StringMemberOr(MemberOrNull(stored_job, "spec"), "queue");
  if (queue.empty()) return {};
  const std::string phase = StringMemberOr(MemberOrNull(stored_job, "status"), "phase", "Pending");
  return {RecordKey(StringMemberOr(metadata, "namespace"), queue), phase == "Pending",
          phase == "Running" || phase == "Restarting"};
}

Json LocalQueueStatus(int64_t pending, int64_t admitted, const std::string& since) {
  return {{"pendingWorkloads", pending},
          {"reservingWorkloads", admitted},
          {"admittedWorkloads", admitted},
          {"conditions",
           Json::array({KueueActiveCondition("Can submit new workloads to localQueue", since)})}};
}

Json WithLocalQueue(const Json& stored, const LocalQueueLink& link, const Json& document,
                    const std::string& now) {
  Json queue = stored;
  if (!HasLocalQueue(stored, link.namespace_name, link.name)) {
    queue["spec"]["localQueues"].push_back(
        {{"namespace", link.namespace_name}, {"name", link.name}});
  }
  Json records = Records(stored);
  const std::string key = RecordKey(link.namespace_name, link.name);
  const Json& before = MemberOrNull(records, key);
  Json record = {{"creationTimestamp", StringMemberOr(before, "creationTimestamp", now)}};
  const Json& metadata = MemberOrNull(document, "metadata");
  for (const char* field : {"labels", "annotations"}) {
    if (MemberOrNull(metadata, field).is_object() && !metadata[field].empty()) {
      record[field] = metadata[field];
    }
  }
  records[key] = std::move(record);
  SetRecords(queue, records);
  return queue;
}

Json WithoutLocalQueue(const Json& stored, std::string_view namespace_name, std::string_view name) {
  Json queue = stored;
  Json refs = Json::array();
  for (const Json& ref : LocalQueueRefs(stored)) {
    if (!SameRef(ref, namespace_name, name)) refs.push_back(ref);
  }
  if (refs.empty()) {
    queue["spec"].erase("localQueues");
  } else {
    queue["spec"]["localQueues"] = std::move(refs);
  }
  Json records = Records(stored);
  records.erase(RecordKey(namespace_name, name));
  SetRecords(queue, records);
  return queue;
}

void CarryLocalQueues(const Json& current, Json& write) {
  if (SourceTypeOf(write) != &ClusterQueueType() || LocalQueueRefs(current).empty()) return;
  Json refs = LocalQueueRefs(current);
  for (const Json& ref : LocalQueueRefs(write)) {
    if (!HasLocalQueue(current, StringMemberOr(ref, "namespace"), StringMemberOr(ref, "name"))) {
      refs.push_back(ref);
    }
  }
  write["spec"]["localQueues"] = std::move(refs);
  Json records = Records(current);
  const Json written = Records(write);
  for (const auto& [key, record] : written.items()) records[key] = record;
  SetRecords(write, records);
}

std::vector<TableColumn> LocalQueueColumns() {
  return {{"ClusterQueue", "The ClusterQueue the LocalQueue names."},
          {"Pending Workloads", "Its workloads waiting for admission."},
          {"Admitted Workloads", "Its admitted workloads that have not finished."}};
}

std::vector<std::string> LocalQueueCells(const Json& served) {
  const Json& status = MemberOrNull(served, "status");
  return {StringMemberOr(MemberOrNull(served, "spec"), "clusterQueue"),
          std::to_string(IntegerMemberOr(status, "pendingWorkloads", 0)),
          std::to_string(IntegerMemberOr(status, "admittedWorkloads", 0))};
}

}  // namespace strata::api
