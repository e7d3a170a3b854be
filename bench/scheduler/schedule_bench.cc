// schedule_bench NODES GPUS_PER_NODE PODS SHAPE [SEED]: one timed scheduling cycle over a
// synthetic load (scheduler/synthetic_load.h), printed as one JSON line like
// `strata bench schedule -o json`.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "scheduler/synthetic_load.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: schedule_bench NODES GPUS_PER_NODE PODS 1gpu|mixed|gangs|pools [SEED]\n");
    return 2;
  }
  strata::scheduler::SyntheticLoad load;
  load.nodes = std::atoi(argv[1]);
  load.gpus_per_node = std::atoi(argv[2]);
  load.pods = std::atoi(argv[3]);
  load.shape = argv[4];
  if (argc > 5) load.seed = std::strtoull(argv[5], nullptr, 10);
  if (load.nodes < 1 || load.pods < 1 || load.gpus_per_node < 1 || load.gpus_per_node > 16 ||
      !strata::scheduler::IsSyntheticShape(load.shape)) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  const strata::scheduler::ThroughputResult r = strata::scheduler::MeasureThroughput(load);
  std::printf(
      "{\"pods\":%lld,\"placed\":%lld,\"workloads\":%lld,\"pending\":%lld,"
      "\"seconds\":%.6f,\"pods_per_s\":%.0f}\n",
      static_cast<long long>(r.pods), static_cast<long long>(r.placed),
      static_cast<long long>(r.workloads), static_cast<long long>(r.pending), r.seconds,
      r.seconds > 0 ? r.placed / r.seconds : 0.0);
  return 0;
}
