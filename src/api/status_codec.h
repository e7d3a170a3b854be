#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "api/field_reader.h"
#include "api/job.h"
#include "api/pod.h"
#include "api/queue.h"
#include "api/service.h"

// The statuses of strata's kinds in their canonical JSON, both ways. Statuses are written by
// strata's loops (never by users: the REST API keeps the stored status when a user writes a
// spec), validated against their schemas in native_schema.cc like any field. Pure; thread-safe.
namespace strata::api {

nlohmann::json EncodeAssignedGpus(const std::vector<AssignedGpu>& gpus);
std::vector<AssignedGpu> DecodeAssignedGpus(const FieldView& parent, std::string_view field);

nlohmann::json EncodePodStatus(const PodStatus& status);
PodStatus DecodePodStatus(const FieldView& status);

nlohmann::json EncodeJobStatus(const JobStatus& status);
JobStatus DecodeJobStatus(const FieldView& status);

nlohmann::json EncodeServiceStatus(const ServiceStatus& status);
ServiceStatus DecodeServiceStatus(const FieldView& status);

nlohmann::json EncodeQueueStatus(const QueueStatus& status);
QueueStatus DecodeQueueStatus(const FieldView& status);

}  // namespace strata::api
