// Volcano's scheduling.volcano.sh/v1beta1 kinds: a PodGroup becomes the gang of the pods that
// name it; a Queue becomes a native Queue in the shared cohort "volcano".
#include <set>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

const TypeSchema* PodGroupSpecSchema() {
  static const TypeSchema s{
      "PodGroupSpec",
      "An all-or-nothing group of pods.",
      {{"minMember",
        T::kNonNegativeInteger,
        "Pods that must be placed together.",
        nullptr,
        {},
        true},
       {"minResources", T::kQuantityMap, "Resources the group needs to start."},
       {"queue", T::kString, "The queue that admits the group."},
       {"priorityClassName", T::kString,
        "critical, standard, sheddable, system-cluster-critical or system-node-critical."},
       {"minTaskMember", T::kUnsupported, "strata's gangs count pods, not tasks"}}};
  return &s;
}

const TypeSchema* GuaranteeSchema() {
  static const TypeSchema s{"Guarantee",
                            "Resources reserved for the queue, never lent.",
                            {{"resource", T::kQuantityMap, "The reserved amounts."}}};
  return &s;
}

const TypeSchema* VolcanoQueueSpecSchema() {
  static const TypeSchema s{
      "QueueSpec",
      "A Volcano queue.",
      {{"weight", T::kNonNegativeInteger, "Share weight among queues (default 1)."},
       {"capability", T::kQuantityMap, "Most the queue may use."},
       {"deserved", T::kQuantityMap, "The queue's fair amount: strata's nominal quota."},
       {"guarantee", T::kObject, "Resources never lent.", GuaranteeSchema},
       {"reclaimable", T::kBool, "Whether others may reclaim what the queue uses beyond deserved."},
       {"parent", T::kUnsupported, "strata's queues are flat, in one cohort"},
       {"affinity", T::kUnsupported, "use a ResourceFlavor's nodeLabels"},
       {"extendClusters", T::kUnsupported, "strata schedules one cluster"},
       {"type", T::kUnsupported, "strata has one kind of queue"}}};
  return &s;
}

std::string VolcanoResource(const std::string& name) {
  return name == "nvidia.com/gpu" ? "gpu" : name;
}

}  // namespace

const TypeSchema* PodGroupSchema() {
  static const TypeSchema s = CompatDocument("PodGroup", "scheduling.volcano.sh/v1beta1",
                                             "A Volcano pod group.", PodGroupSpecSchema);
  return &s;
}

const TypeSchema* VolcanoQueueSchema() {
  static const TypeSchema s = CompatDocument("Queue", "scheduling.volcano.sh/v1beta1",
                                             "A Volcano queue.", VolcanoQueueSpecSchema);
  return &s;
}

void DecodePodGroup(const FieldView& doc, DecodedDocument& out) {
  ObjectMeta meta = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  FieldView spec = doc.Object("spec");
  PodGroupLink link;
  link.namespace_name = meta.namespace_name;
  link.name = meta.name;
  link.min_member = spec.Integer("minMember", 0);
  if (link.min_member < 1) out.errors.Add(spec.PathOf("minMember"), "must be at least 1");
  link.min_resources = spec.QuantityMap("minResources");
  link.queue = spec.String("queue");
  if (spec.Has("priorityClassName")) {
    link.priority = PriorityForClass(spec.String("priorityClassName"),
                                     spec.PathOf("priorityClassName"), out.errors);
  }
  out.pod_group = std::move(link);
}

void DecodeVolcanoQueue(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Queue queue;
  queue.metadata = DecodeMetadata(doc.Object("metadata"), false, false, errors);
  FieldView spec = doc.Object("spec");
  QueueSpec& s = queue.spec;
  s.cohort = "volcano";
  s.weight = Quantity::FromUnits(std::min<int64_t>(spec.Integer("weight", 1), 1'000'000'000));
  s.reclaimable = spec.Bool("reclaimable", true);
  std::map<std::string, Quantity> capability = spec.QuantityMap("capability");
  std::map<std::string, Quantity> deserved = spec.QuantityMap("deserved");
  FieldView guarantee_view = spec.Object("guarantee");
  std::map<std::string, Quantity> guarantee = guarantee_view.QuantityMap("resource");
  std::set<std::string> names;
  for (const auto* m : {&capability, &deserved, &guarantee}) {
    for (const auto& [name, q] : *m) names.insert(name);
  }
  FlavorQuota flavor{"default", {}};
  for (const std::string& name : names) {
    if (name != "cpu" && name != "memory" && name != "nvidia.com/gpu") {
      errors.Add(spec.path(), "resource " + Quoted(name) +
                                  " is not supported by strata (cpu, memory, nvidia.com/gpu)");
      continue;
    }
    ResourceQuota quota{VolcanoResource(name), Quantity(), std::nullopt, std::nullopt};
    if (deserved.count(name)) quota.nominal = deserved[name];
    if (capability.count(name)) {
      if (capability[name] < quota.nominal) {
        errors.Add(JoinPath(spec.PathOf("capability"), name), "must be at least deserved");
      } else {
        quota.borrowing_limit = capability[name] - quota.nominal;
      }
    }
    if (guarantee.count(name)) {
      if (guarantee[name] > quota.nominal) {
        errors.Add(JoinPath(guarantee_view.PathOf("resource"), name),
                   "must not exceed deserved (strata lends only unused nominal quota)");
      } else {
        quota.lending_limit = quota.nominal - guarantee[name];
      }
    }
    flavor.resources.push_back(std::move(quota));
  }
  if (!flavor.resources.empty()) s.flavors.push_back(std::move(flavor));
  out.objects.push_back(std::move(queue));
}

}  // namespace strata::api
