#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "scheduler/model.h"

namespace strata::scheduler {

// Decoding of the scheduler's model from JSON (or YAML through common/yaml_json.h), the format
// of testdata/scheduler scenarios and of `strata bench schedule --cluster`. Quantities are
// Kubernetes quantities (numbers or strings: "64", "500m", "80Gi"). Every field not listed is an
// error, and errors name the field path (common/field_decoder.h):
// "cluster.nodes[2].gpus.count: must be an integer from 0 to 64".
// Pure functions; thread-safe.
//
//   cluster:
//     topology: [block, rack]              # node label keys, outermost first
//     nodes:
//       - name: gpu                        # with count: gpu-0 .. gpu-<count-1>
//         count: 4
//         labels: {rack: r1}
//         taints: [{key: k, value: v, effect: NoSchedule}]
//         unschedulable: false
//         cpu: 64
//         memory: 512Gi
//         gpus: {count: 8, model: H100-80GB, memory: 80Gi, islands: 2, mig: false}
//     flavors: [{name: h100, nodeLabels: {gpu: h100}, gpuMemory: 80Gi}]
//     queues:
//       - name: team-a
//         cohort: research
//         weight: 1
//         strategy: BestEffortFIFO         # or StrictFIFO
//         preemption: {withinQueue: LowerPriority, reclaimWithinCohort: Any}  # or Never
//         quota:
//           - flavor: h100
//             resources:
//               nvidia.com/gpu: {nominal: 32, borrowingLimit: 8, lendingLimit: 16}
//
//   workload:
//     name: train
//     queue: team-a
//     priority: 0
//     submitted: 0                         # seconds after `epoch`
//     runtimeLimit: 3600                   # seconds
//     topology: {level: rack, mode: Required}   # or Preferred
//     podSets:
//       - name: worker
//         count: 4
//         cpu: 8
//         memory: 64Gi
//         gpu: 8                           # or {milli: 500, memory: 20Gi} or {mig: 3g.40gb}
//         gpuModels: [H100-80GB]
//         gpuMinMemory: 40Gi
//         nodeSelector: {k: v}
//         affinity: [{matchExpressions: [{key: k, operator: In, values: [a]}]}]
//         tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
Result<Cluster> DecodeCluster(const nlohmann::json& json, const std::string& path);
Result<Workload> DecodeWorkload(const nlohmann::json& json, const std::string& path,
                                TimePoint epoch);

}  // namespace strata::scheduler
