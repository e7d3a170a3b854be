// The field tables of the statuses strata's loops write on Jobs, Services and Queues. Users
// never write them (the REST API keeps the stored status when a spec is written); the tables
// make `explain` describe them and decoding check them like any field.
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

const TypeSchema* ConditionSchema() {
  static const TypeSchema s{
      "Condition",
      "One condition of the object, Kubernetes' shape.",
      {{"type", T::kString, "The condition, e.g. Scheduled or Running.", nullptr, {}, true},
       {"status", T::kEnum, "True, False or Unknown.", nullptr, {"True", "False", "Unknown"}},
       {"reason", T::kString, "One CamelCase word saying why."},
       {"message", T::kString, "A sentence for people."},
       {"lastTransitionTime", T::kTimestamp, "When the status last changed."}}};
  return &s;
}

const TypeSchema* JobPodAssignmentSchema() {
  static const TypeSchema s{"JobPodAssignment",
                            "Where one rank of the run is bound.",
                            {{"rank", T::kNonNegativeInteger, "The pod's rank."},
                             {"nodeName", T::kString, "The node.", nullptr, {}, true},
                             {"gpus", T::kObjectList, "Its GPUs.", AssignedGpuSchema}}};
  return &s;
}

const TypeSchema* JobPlacementSchema() {
  static const TypeSchema s{
      "JobPlacement",
      "The scheduler's decision for the current run, written before its pods are created.",
      {{"run", T::kNonNegativeInteger, "The run's number; its pods carry it."},
       {"flavor", T::kString, "The ResourceFlavor the run is charged to."},
       {"masterAddr", T::kString, "Rank 0's address (MASTER_ADDR)."},
       {"masterPort", T::kNonNegativeInteger, "The rendezvous port (MASTER_PORT)."},
       {"boundAt", T::kTimestamp, "When the run was bound."},
       {"pods", T::kObjectList, "One entry per rank.", JobPodAssignmentSchema}}};
  return &s;
}

const TypeSchema* ServiceVersionStatusSchema() {
  static const TypeSchema s{
      "ServiceVersionStatus",
      "The replicas of one version.",
      {{"name", T::kString, "The version.", nullptr, {}, true},
       {"desiredReplicas", T::kNonNegativeInteger, "What the autoscaler asks for."},
       {"replicas", T::kNonNegativeInteger, "Replicas not being drained."},
       {"readyReplicas", T::kNonNegativeInteger, "Replicas serving."},
       {"startingReplicas", T::kNonNegativeInteger, "Replicas created, not yet ready."},
       {"drainingReplicas", T::kNonNegativeInteger, "Replicas finishing their streams."},
       {"updatedReplicas", T::kNonNegativeInteger, "Replicas running the current template."},
       {"reason", T::kString, "Why the desired count last changed."}}};
  return &s;
}

const TypeSchema* ScaleDecisionSchema() {
  static const TypeSchema s{"ScaleDecision",
                            "One change of a version's desired replica count.",
                            {{"time", T::kTimestamp, "When."},
                             {"version", T::kString, "Which version."},
                             {"from", T::kNonNegativeInteger, "The count before."},
                             {"to", T::kNonNegativeInteger, "The count after."},
                             {"reason", T::kString, "Why, in the autoscaler's words."}}};
  return &s;
}

const TypeSchema* ResourceUsageSchema() {
  static const TypeSchema s{"ResourceUsage",
                            "One resource of one flavor.",
                            {{"name", T::kString, "gpu, gpuMemory, cpu or memory."},
                             {"nominal", T::kQuantity, "The nominal quota."},
                             {"used", T::kQuantity, "What admitted workloads use."},
                             {"borrowed", T::kQuantity, "Use above nominal, lent by the cohort."}}};
  return &s;
}

const TypeSchema* FlavorUsageSchema() {
  static const TypeSchema s{
      "FlavorUsage",
      "Use of one flavor's quota.",
      {{"name", T::kString, "The ResourceFlavor (absent: use charged to no flavor)."},
       {"resources", T::kObjectList, "Per resource.", ResourceUsageSchema}}};
  return &s;
}

}  // namespace

const TypeSchema* JobStatusSchema() {
  static const TypeSchema s{
      "JobStatus",
      "What happened to the job (written by strata).",
      {{"phase",
        T::kEnum,
        "Pending, Running, Restarting, Succeeded or Failed.",
        nullptr,
        {"Pending", "Running", "Restarting", "Succeeded", "Failed"}},
       {"restartCount", T::kNonNegativeInteger, "Whole-group restarts after failures."},
       {"preemptionCount", T::kNonNegativeInteger, "Times it was preempted and requeued."},
       {"runs", T::kNonNegativeInteger, "Placements made so far."},
       {"reason", T::kString, "Why it waits or ended: one CamelCase word."},
       {"message", T::kString, "A sentence for people."},
       {"startTime", T::kTimestamp, "When every pod first ran."},
       {"completionTime", T::kTimestamp, "When it succeeded or failed."},
       {"lastCheckpointTime", T::kTimestamp, "The newest checkpoint its pods reported."},
       {"conditions", T::kObjectList, "Scheduled, Running, Restarting, ...", ConditionSchema},
       {"placement", T::kObject, "The current run's placement.", JobPlacementSchema}}};
  return &s;
}

const TypeSchema* ServiceStatusSchema() {
  static const TypeSchema s{
      "ServiceStatus",
      "The service's replicas and scale decisions (written by strata).",
      {{"replicas", T::kNonNegativeInteger, "Replicas not being drained, over every version."},
       {"readyReplicas", T::kNonNegativeInteger, "Replicas serving, over every version."},
       {"versions", T::kObjectList, "Per version.", ServiceVersionStatusSchema},
       {"decisions", T::kObjectList, "The last scale decisions, newest last.", ScaleDecisionSchema},
       {"coldStartSeconds", T::kNumber, "Mean creation-to-ready time of its replicas."},
       {"coldStartsMeasured", T::kNonNegativeInteger, "Replicas that mean is over."}}};
  return &s;
}

const TypeSchema* QueueStatusSchema() {
  static const TypeSchema s{
      "QueueStatus",
      "The queue's use of its quota, by the scheduler's charging rules (written by strata).",
      {{"flavorsUsage", T::kObjectList, "Use per flavor and resource.", FlavorUsageSchema},
       {"admittedWorkloads", T::kNonNegativeInteger, "Workloads holding quota."},
       {"pendingWorkloads", T::kNonNegativeInteger, "Workloads waiting."}}};
  return &s;
}

}  // namespace strata::api
