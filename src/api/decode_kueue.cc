// Kueue's kinds (kueue.x-k8s.io): ClusterQueue becomes a Queue, LocalQueue a name for one,
// ResourceFlavor a ResourceFlavor, WorkloadPriorityClass a WorkloadPriorityClass, a Cohort a
// Queue of its name that only lends its quota to the queues naming the cohort.
#include <set>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"

namespace strata::api {
namespace {

using T = FieldType;

const TypeSchema* KueueResourceQuotaSchema() {
  static const TypeSchema s{
      "ResourceQuota",
      "Quota of one resource in one flavor.",
      {{"name", T::kString, "cpu, memory or nvidia.com/gpu.", nullptr, {}, true},
       {"nominalQuota", T::kQuantity, "What the queue is guaranteed.", nullptr, {}, true},
       {"borrowingLimit", T::kQuantity, "Most the queue may borrow beyond nominal."},
       {"lendingLimit", T::kQuantity, "Most of its unused quota the queue lends."}}};
  return &s;
}

const TypeSchema* KueueFlavorQuotasSchema() {
  static const TypeSchema s{"FlavorQuotas",
                            "Quotas in one flavor.",
                            {{"name", T::kString, "The ResourceFlavor.", nullptr, {}, true},
                             {"resources",
                              T::kObjectList,
                              "Quota per covered resource.",
                              KueueResourceQuotaSchema,
                              {},
                              true}}};
  return &s;
}

const TypeSchema* ResourceGroupSchema() {
  static const TypeSchema s{
      "ResourceGroup",
      "Resources whose quotas are given together, per flavor.",
      {{"coveredResources", T::kStringList, "The resources of this group.", nullptr, {}, true},
       {"flavors",
        T::kObjectList,
        "Quotas per flavor, in order of preference.",
        KueueFlavorQuotasSchema,
        {},
        true}}};
  return &s;
}

const TypeSchema* BorrowWithinCohortSchema() {
  static const TypeSchema s{
      "BorrowWithinCohort",
      "Preemption in order to borrow; strata does not preempt to borrow: only Never.",
      {{"policy",
        T::kEnum,
        "Never (the only policy strata has).",
        nullptr,
        {"Never", "LowerPriority"}},
       {"maxPriorityThreshold", T::kUnsupported, "strata does not preempt in order to borrow"}}};
  return &s;
}

const TypeSchema* KueuePreemptionSchema() {
  static const TypeSchema s{
      "ClusterQueuePreemption",
      "Whom this queue's workloads may preempt.",
      {{"withinClusterQueue",
        T::kEnum,
        "Never or LowerPriority.",
        nullptr,
        {"Never", "LowerPriority", "LowerOrNewerEqualPriority"}},
       {"reclaimWithinCohort",
        T::kEnum,
        "Never, LowerPriority or Any.",
        nullptr,
        {"Never", "LowerPriority", "Any"}},
       {"borrowWithinCohort", T::kObject, "Preemption in order to borrow: policy Never only.",
        BorrowWithinCohortSchema}}};
  return &s;
}

// What strata does when choosing a flavor is Kueue's default: take the first flavor where the
// workload fits, borrowing if it must (MayStopSearch, v1beta1's Borrow), and try every flavor
// before preempting in any (TryNextFlavor), preferring borrowing to preemption. Those values
// are accepted; the others are errors naming them.
const TypeSchema* FlavorFungibilitySchema() {
  static const TypeSchema s{
      "FlavorFungibility",
      "How flavors are tried; strata does what Kueue does by default.",
      {{"whenCanBorrow",
        T::kEnum,
        "MayStopSearch (v1beta1: Borrow): the first flavor where the workload fits, borrowing "
        "if it must.",
        nullptr,
        {"MayStopSearch", "Borrow", "TryNextFlavor"}},
       {"whenCanPreempt",
        T::kEnum,
        "TryNextFlavor: every flavor is tried before preempting in any.",
        nullptr,
        {"TryNextFlavor", "MayStopSearch", "Preempt"}},
       {"preference",
        T::kEnum,
        "BorrowingOverPreemption.",
        nullptr,
        {"BorrowingOverPreemption", "PreemptionOverBorrowing"}}}};
  return &s;
}

const TypeSchema* FairSharingSchema() {
  static const TypeSchema s{"FairSharing",
                            "Fair sharing within the cohort.",
                            {{"weight", T::kQuantity, "The queue's share weight (default 1)."}}};
  return &s;
}

const TypeSchema* LabelSelectorSchema() {
  static const TypeSchema s{
      "LabelSelector",
      "strata queues admit workloads of every namespace: only {} is accepted.",
      {{"matchLabels", T::kUnsupported, "strata queues admit from every namespace; use {}"},
       {"matchExpressions", T::kUnsupported, "strata queues admit from every namespace; use {}"}}};
  return &s;
}

constexpr std::string_view kStopPolicyDoc = "None; delete the queue to stop it.";

// ClusterQueue's spec in v1beta1 (`cohort`, `admissionChecks`) or v1beta2 (`cohortName` only).
TypeSchema ClusterQueueSpec(bool v1beta2) {
  TypeSchema s{
      "ClusterQueueSpec",
      "A Kueue cluster queue.",
      {{"cohortName", T::kString, "The cohort the queue borrows in."},
       {"namespaceSelector", T::kObject, "Must be {} (every namespace).", LabelSelectorSchema},
       {"queueingStrategy",
        T::kEnum,
        "BestEffortFIFO or StrictFIFO.",
        nullptr,
        {"BestEffortFIFO", "StrictFIFO"}},
       {"resourceGroups", T::kObjectList, "Quotas.", ResourceGroupSchema},
       {"preemption", T::kObject, "Whom the queue's workloads may preempt.", KueuePreemptionSchema},
       {"fairSharing", T::kObject, "Fair sharing weight.", FairSharingSchema},
       {"flavorFungibility", T::kObject, "How flavors are tried.", FlavorFungibilitySchema},
       {"stopPolicy", T::kEnum, kStopPolicyDoc, nullptr, {"None", "Hold", "HoldAndDrain"}},
       {"admissionChecksStrategy", T::kUnsupported, "strata has no admission checks"},
       {"admissionScope", T::kUnsupported, "strata has no admission fair sharing"},
       {"concurrentAdmissionPolicy", T::kUnsupported, "strata admits a workload in one flavor"}}};
  if (!v1beta2) {
    s.fields.push_back({"cohort", T::kString, "The cohort the queue borrows in."});
    s.fields.push_back({"admissionChecks", T::kUnsupported, "strata has no admission checks"});
  }
  return s;
}

const TypeSchema* ClusterQueueSpecV1beta1() {
  static const TypeSchema s = ClusterQueueSpec(false);
  return &s;
}

const TypeSchema* ClusterQueueSpecV1beta2() {
  static const TypeSchema s = ClusterQueueSpec(true);
  return &s;
}

const TypeSchema* LocalQueueSpecSchema() {
  static const TypeSchema s{
      "LocalQueueSpec",
      "A namespaced name for a cluster queue.",
      {{"clusterQueue", T::kString, "The ClusterQueue it names.", nullptr, {}, true},
       {"stopPolicy", T::kEnum, kStopPolicyDoc, nullptr, {"None", "Hold", "HoldAndDrain"}},
       {"fairSharing", T::kUnsupported, "fair sharing is per cluster queue"}}};
  return &s;
}

const TypeSchema* KueueTaintSchema() {
  static const TypeSchema s{"Taint",
                            "A taint the flavor's nodes carry.",
                            {{"key", T::kString, "The taint's key.", nullptr, {}, true},
                             {"value", T::kString, "Its value."},
                             {"effect",
                              T::kEnum,
                              "NoSchedule, PreferNoSchedule or NoExecute.",
                              nullptr,
                              {"NoSchedule", "PreferNoSchedule", "NoExecute"},
                              true},
                             {"timeAdded", T::kTimestamp, "When it was added."}}};
  return &s;
}

const TypeSchema* KueueResourceFlavorSpecSchema() {
  static const TypeSchema s{
      "ResourceFlavorSpec",
      "A class of nodes.",
      {{"nodeLabels", T::kStringMap, "Nodes carrying all of these labels are of this flavor."},
       {"tolerations", T::kObjectList, "Tolerations added to admitted workloads.",
        TolerationSchema},
       {"nodeTaints", T::kObjectList,
        "Taints of the flavor's nodes; strata reads the taints on the nodes themselves, so these "
        "must be on them.",
        KueueTaintSchema},
       {"topologyName", T::kString,
        "The flavor's Topology; strata places by any node label a job names, so it is checked "
        "for a name only."}}};
  return &s;
}

const TypeSchema* CohortSpecSchema() {
  static const TypeSchema s{
      "CohortSpec",
      "A Kueue cohort: the queues naming it, and quota of its own that they borrow.",
      {{"parentName", T::kUnsupported,
        "strata's cohorts are one level: a cohort has no parent (give the quota to this cohort)"},
       {"parent", T::kUnsupported,
        "strata's cohorts are one level: a cohort has no parent (give the quota to this cohort)"},
       {"resourceGroups", T::kObjectList,
        "Quota of the cohort itself, per flavor, which its queues may borrow (within their "
        "borrowing limits).",
        ResourceGroupSchema},
       {"fairSharing", T::kUnsupported,
        "strata's cohorts are one level: a cohort's weight among others has no meaning"}}};
  return &s;
}

const TypeSchema* TopologyLevelSchema() {
  static const TypeSchema s{"TopologyLevel",
                            "One level of a topology, from the widest to the narrowest.",
                            {{"nodeLabel",
                              T::kString,
                              "The node label key whose value names the level's domain.",
                              nullptr,
                              {},
                              true}}};
  return &s;
}

const TypeSchema* TopologySpecSchema() {
  static const TypeSchema s{
      "TopologySpec",
      "A Kueue topology: node label keys, widest first.",
      {{"levels", T::kObjectList, "The levels.", TopologyLevelSchema, {}, true}}};
  return &s;
}

// stopPolicy None is what every strata queue does; Hold and HoldAndDrain would stop admission.
void RejectStopPolicy(const FieldView& spec, FieldErrors& errors) {
  if (spec.String("stopPolicy", "None") != "None") {
    errors.Add(spec.PathOf("stopPolicy"),
               "strata queues cannot be held: only None (delete the queue to stop it)");
  }
}

// Flavor fungibility other than strata's own way of trying flavors (Kueue's default).
void RejectOtherFungibility(const FieldView& fungibility, FieldErrors& errors) {
  if (fungibility.String("whenCanBorrow", "MayStopSearch") == "TryNextFlavor") {
    errors.Add(fungibility.PathOf("whenCanBorrow"),
               "strata takes the first flavor where the workload fits, borrowing if it must: "
               "only MayStopSearch (v1beta1: Borrow)");
  }
  if (fungibility.String("whenCanPreempt", "TryNextFlavor") != "TryNextFlavor") {
    errors.Add(fungibility.PathOf("whenCanPreempt"),
               "strata tries every flavor before preempting in any: only TryNextFlavor");
  }
  if (fungibility.String("preference", "BorrowingOverPreemption") != "BorrowingOverPreemption") {
    errors.Add(fungibility.PathOf("preference"),
               "strata borrows before it preempts: only BorrowingOverPreemption");
  }
}

// Kueue's resource name as strata's quota resource, or empty after reporting it.
std::string QuotaResource(const std::string& name, const std::string& path, FieldErrors& errors) {
  if (name == "cpu" || name == "memory") return name;
  if (name == "nvidia.com/gpu") return "gpu";
  errors.Add(path, "strata gives quota in cpu, memory and nvidia.com/gpu, got " + Quoted(name));
  return "";
}

// The quotas of a ClusterQueue's or a Cohort's spec.resourceGroups, per flavor.
std::vector<FlavorQuota> DecodeResourceGroups(const FieldView& spec, FieldErrors& errors) {
  std::vector<FlavorQuota> flavors;
  std::set<std::string> flavors_seen;
  for (const FieldView& group : spec.ObjectList("resourceGroups")) {
    std::vector<std::string> covered = group.StringList("coveredResources");
    for (const FieldView& f : group.ObjectList("flavors")) {
      FlavorQuota flavor{f.String("name"), {}};
      if (!flavors_seen.insert(flavor.flavor).second) {
        errors.Add(f.PathOf("name"), "flavor " + Quoted(flavor.flavor) + " appears twice");
      }
      for (const FieldView& r : f.ObjectList("resources")) {
        std::string name = r.String("name");
        if (std::find(covered.begin(), covered.end(), name) == covered.end()) {
          errors.Add(r.PathOf("name"), Quoted(name) + " is not in coveredResources");
        }
        ResourceQuota quota{QuotaResource(name, r.PathOf("name"), errors),
                            r.GetQuantity("nominalQuota"), r.OptionalQuantity("borrowingLimit"),
                            r.OptionalQuantity("lendingLimit")};
        if (quota.lending_limit && *quota.lending_limit > quota.nominal) {
          errors.Add(r.PathOf("lendingLimit"), "must not exceed nominalQuota");
        }
        flavor.resources.push_back(std::move(quota));
      }
      flavors.push_back(std::move(flavor));
    }
  }
  return flavors;
}

}  // namespace

const TypeSchema* ClusterQueueV1beta1Schema() {
  static const TypeSchema s = CompatDocument("ClusterQueue", "kueue.x-k8s.io/v1beta1",
                                             "A Kueue cluster queue.", ClusterQueueSpecV1beta1);
  return &s;
}

const TypeSchema* ClusterQueueV1beta2Schema() {
  static const TypeSchema s = CompatDocument("ClusterQueue", "kueue.x-k8s.io/v1beta2",
                                             "A Kueue cluster queue.", ClusterQueueSpecV1beta2);
  return &s;
}

const TypeSchema* LocalQueueSchema() {
  static const TypeSchema s = CompatDocument("LocalQueue", "kueue.x-k8s.io/v1beta2 (or v1beta1)",
                                             "A Kueue local queue.", LocalQueueSpecSchema);
  return &s;
}

const TypeSchema* KueueResourceFlavorSchema() {
  static const TypeSchema s = [] {
    TypeSchema d = CompatDocument("ResourceFlavor", "kueue.x-k8s.io/v1beta2 (or v1beta1)",
                                  "A Kueue resource flavor.", KueueResourceFlavorSpecSchema);
    for (FieldSpec& f : d.fields) {
      if (f.name == "spec") f.required = false;  // a flavor without labels: every node
    }
    return d;
  }();
  return &s;
}

const TypeSchema* WorkloadPriorityClassSchema() {
  static const TypeSchema s{
      "WorkloadPriorityClass",
      "A Kueue workload priority: the priority in the queues of the workloads labelled "
      "kueue.x-k8s.io/priority-class with its name (their pods' own priority aside).",
      {{"apiVersion", T::kString, "kueue.x-k8s.io/v1beta2 (or v1beta1)", nullptr, {}, true},
       {"kind", T::kString, "WorkloadPriorityClass", nullptr, {}, true},
       {"metadata", T::kObject, "Name and labels.", ObjectMetaSchema, {}, true},
       {"value",
        T::kInteger,
        "The priority: higher goes first and may preempt lower.",
        nullptr,
        {},
        true},
       {"description", T::kString, "What the class is for."}}};
  return &s;
}

void DecodeWorkloadPriorityClass(const FieldView& doc, DecodedDocument& out) {
  WorkloadPriorityClass priority_class;
  priority_class.metadata = DecodeMetadata(doc.Object("metadata"), false, false, out.errors);
  priority_class.spec.value = doc.Integer("value", 0);
  CheckWorkloadPriority(priority_class.spec.value, doc.PathOf("value"), out.errors);
  priority_class.spec.description = doc.String("description");
  // Kueue's document has no spec: its fields are kept as the source's (api/source_form.h).
  nlohmann::json fields = {{"value", priority_class.spec.value}};
  if (!priority_class.spec.description.empty()) {
    fields["description"] = priority_class.spec.description;
  }
  priority_class.metadata.annotations[kSourceAnnotation] =
      SourceAnnotationValue(KueueWorkloadPriorityClassType(), fields);
  out.priority_class = PriorityClassLink{priority_class.metadata.name, priority_class.spec.value};
  out.objects.push_back(std::move(priority_class));
}

const TypeSchema* CohortSchema() {
  static const TypeSchema s = [] {
    TypeSchema d = CompatDocument("Cohort", "kueue.x-k8s.io/v1beta2 (or v1beta1, v1alpha1)",
                                  "A Kueue cohort.", CohortSpecSchema);
    for (FieldSpec& f : d.fields) {
      if (f.name == "spec") f.required = false;
    }
    return d;
  }();
  return &s;
}

const TypeSchema* KueueTopologySchema() {
  static const TypeSchema s =
      CompatDocument("Topology", "kueue.x-k8s.io/v1beta2 (or v1beta1, v1alpha1)",
                     "A Kueue topology.", TopologySpecSchema);
  return &s;
}

void DecodeClusterQueue(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Queue queue;
  queue.metadata = DecodeMetadata(doc.Object("metadata"), false, false, errors);
  FieldView spec = doc.Object("spec");
  QueueSpec& s = queue.spec;
  s.cohort = spec.String("cohort", spec.String("cohortName"));
  if (spec.Has("cohort") && spec.Has("cohortName") &&
      spec.String("cohort") != spec.String("cohortName")) {
    errors.Add(spec.PathOf("cohortName"), "contradicts cohort");
  }
  s.queueing_strategy = spec.String("queueingStrategy", "BestEffortFIFO");
  RejectStopPolicy(spec, errors);
  RejectOtherFungibility(spec.Object("flavorFungibility"), errors);
  s.flavors = DecodeResourceGroups(spec, errors);

  FieldView preemption = spec.Object("preemption");
  s.preemption.within_queue = preemption.String("withinClusterQueue", "Never");
  if (s.preemption.within_queue == "LowerOrNewerEqualPriority") {
    errors.Add(preemption.PathOf("withinClusterQueue"),
               "strata supports Never and LowerPriority, got \"LowerOrNewerEqualPriority\"");
  }
  s.preemption.reclaim_within_cohort = preemption.String("reclaimWithinCohort", "Never");
  FieldView borrow = preemption.Object("borrowWithinCohort");
  if (borrow.Has("policy") && borrow.String("policy") != "Never") {
    errors.Add(borrow.PathOf("policy"), "strata does not preempt in order to borrow: only Never");
  }
  s.weight = spec.Object("fairSharing").GetQuantity("weight", Quantity::FromUnits(1));
  // Kept so that /apis/kueue.x-k8s.io serves the ClusterQueue back as written
  // (api/source_form.h).
  queue.metadata.annotations[kSourceAnnotation] =
      SourceAnnotationValue(ClusterQueueType(), doc.Raw("spec"));
  out.objects.push_back(std::move(queue));
}

void DecodeLocalQueue(const FieldView& doc, DecodedDocument& out) {
  ObjectMeta meta = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
  RejectStopPolicy(doc.Object("spec"), out.errors);
  out.local_queue =
      LocalQueueLink{meta.namespace_name, meta.name, doc.Object("spec").String("clusterQueue")};
}

void DecodeKueueResourceFlavor(const FieldView& doc, DecodedDocument& out) {
  ResourceFlavor flavor;
  flavor.metadata = DecodeMetadata(doc.Object("metadata"), false, false, out.errors);
  FieldView spec = doc.Object("spec");
  flavor.spec.node_labels = spec.StringMap("nodeLabels");
  ValidateLabels(flavor.spec.node_labels, spec.PathOf("nodeLabels"), out.errors);
  flavor.spec.tolerations = DecodeTolerations(spec, "tolerations");
  flavor.metadata.annotations[kSourceAnnotation] =
      SourceAnnotationValue(KueueResourceFlavorType(), doc.Raw("spec"));
  out.objects.push_back(std::move(flavor));
}

void DecodeCohort(const FieldView& doc, DecodedDocument& out) {
  Queue queue;
  queue.metadata = DecodeMetadata(doc.Object("metadata"), false, false, out.errors);
  FieldView spec = doc.Object("spec");
  queue.spec.cohort = queue.metadata.name;
  queue.spec.lend_only = true;
  queue.spec.flavors = DecodeResourceGroups(spec, out.errors);
  // Kueue's webhook allows a cohort's limits only where it has a parent to borrow from or lend
  // to; strata's cohorts have none.
  for (const FieldView& group : spec.ObjectList("resourceGroups")) {
    for (const FieldView& f : group.ObjectList("flavors")) {
      for (const FieldView& r : f.ObjectList("resources")) {
        for (const char* limit : {"borrowingLimit", "lendingLimit"}) {
          if (r.Has(limit)) {
            out.errors.Add(r.PathOf(limit),
                           "only a Cohort with a parent has limits (Kueue's rule), and strata's "
                           "cohorts have no parent");
          }
        }
      }
    }
  }
  // Kept so that /apis/kueue.x-k8s.io serves the Cohort back as written (api/source_form.h).
  queue.metadata.annotations[kSourceAnnotation] =
      SourceAnnotationValue(CohortType(), doc.Raw("spec"));
  out.objects.push_back(std::move(queue));
}

void DecodeKueueTopology(const FieldView& doc, DecodedDocument& out) {
  DecodeMetadata(doc.Object("metadata"), false, false, out.errors);
  FieldView spec = doc.Object("spec");
  std::set<std::string> seen;
  for (const FieldView& level : spec.ObjectList("levels")) {
    std::string label = level.String("nodeLabel");
    std::map<std::string, std::string> as_label{{label, ""}};
    ValidateLabels(as_label, level.PathOf("nodeLabel"), out.errors);
    if (!seen.insert(label).second) {
      out.errors.Add(level.PathOf("nodeLabel"), Quoted(label) + " appears twice");
    }
  }
  if (seen.empty()) out.errors.Add(spec.PathOf("levels"), "needs at least one level");
}

}  // namespace strata::api
