#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata::controller {

// What the service controller reports of one version of a service.
struct ServiceVersionStatus {
  std::string name;
  int64_t desired_replicas = 0;   // what the autoscaler (or minReplicas) asks for
  int64_t replicas = 0;           // replicas not being drained
  int64_t ready_replicas = 0;     // serving: readiness probe passed, not draining
  int64_t starting_replicas = 0;  // created, not yet ready
  int64_t draining_replicas = 0;  // finishing their streams before they stop
  int64_t updated_replicas = 0;   // not draining, running the current template
  std::string reason;             // why desired last changed, in the autoscaler's words

  bool operator==(const ServiceVersionStatus&) const = default;
};

// One change of a version's desired replica count, for `describe service`.
struct ScaleDecisionRecord {
  std::string time;  // RFC 3339
  std::string version;
  int64_t from = 0;
  int64_t to = 0;
  std::string reason;

  bool operator==(const ScaleDecisionRecord&) const = default;
};

// The status of a Service, which the service controller owns. It lives under `status` in the
// Service's stored body (the api model describes only the spec). A plain value.
struct ServiceStatus {
  std::vector<ServiceVersionStatus> versions;
  std::vector<ScaleDecisionRecord> decisions;  // newest last, at most kMaxDecisions
  // Mean time from a replica's creation to its readiness, over the replicas seen becoming
  // ready (0: none yet). The autoscaler's forecast horizon.
  double cold_start_seconds = 0;
  int64_t cold_starts_measured = 0;

  static constexpr size_t kMaxDecisions = 20;

  bool operator==(const ServiceStatus&) const = default;

  // The status of version `name`, added when absent.
  ServiceVersionStatus& Version(const std::string& name);
  const ServiceVersionStatus* FindVersion(const std::string& name) const;
  // Appends `record`, dropping the oldest beyond kMaxDecisions.
  void Record(ScaleDecisionRecord record);
  // Folds one replica's measured cold start into the running mean.
  void AddColdStart(double seconds);
};

// Reads `body["status"]`; a missing status, or a field of the wrong type, reads as its default.
ServiceStatus ReadServiceStatus(const nlohmann::json& body);

// Writes `status` into `body["status"]`, leaving out empty fields.
void WriteServiceStatus(const ServiceStatus& status, nlohmann::json& body);

}  // namespace strata::controller
