#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/capacity_index.h"
#include "scheduler/model.h"

namespace strata::scheduler {

// What a pod set needs of a node beyond free capacity: the flavor's labels (null: any node) and
// whether reserved nodes may be used.
struct FitContext {
  const Flavor* flavor = nullptr;
  bool may_use_reserved = true;
};

// True if the node passes the filters that do not depend on free capacity, in kube-scheduler's
// order: unschedulable, taints, node affinity/selector, flavor, GPU attributes.
bool StaticFit(const Node& node, const PodSet& pod_set, const FitContext& context);

// Chooses GPUs on `node` for one pod of `pod_set` and returns true, or returns false if its free
// capacity (CPU, memory, GPUs) cannot host the pod. Whole GPUs come from one NVLink island (the
// fullest one that fits) unless the request is larger than every island; shares and MIG
// instances go to the GPU left with the least free capacity (best fit). Does not check
// StaticFit.
bool ChooseGpus(const CapacityIndex& index, int node, const PodSet& pod_set,
                std::vector<int>* gpus);

// The reasons kube-scheduler would give for `node` not hosting a pod of `pod_set`: those of the
// first failing filter, e.g. {"node(s) had untolerated taint {k: v}"} or {"Insufficient cpu",
// "Insufficient nvidia.com/gpu"}. Empty if the pod fits.
std::vector<std::string> UnfitReasons(const CapacityIndex& index, int node, const PodSet& pod_set,
                                      const FitContext& context);

// Counts reasons over nodes and renders kube-scheduler's FitError text:
// "0/4 nodes are available: 1 node(s) had untolerated taint {...}, 3 Insufficient
// nvidia.com/gpu." (entries "<count> <reason>" sorted as strings, joined by ", ").
class FitErrorBuilder {
 public:
  void AddNode(const std::vector<std::string>& reasons);
  // "0/N nodes are available<for_whom>: <count> <reason>, ...." (kube-scheduler's FitError);
  // `for_whom` (" for pod 3 of ...") says which pod, when that is not plain.
  std::string Message(std::string_view for_whom = "") const;

 private:
  int nodes_ = 0;
  std::map<std::string, int> counts_;
};

}  // namespace strata::scheduler
