// Kueue's kinds (kueue.x-k8s.io): ClusterQueue becomes a Queue, LocalQueue a name for one,
// ResourceFlavor a ResourceFlavor; a Cohort without quota of its own adds nothing, since a
// strata cohort is the set of queues that name it.
#include <set>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

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
       {"borrowWithinCohort", T::kUnsupported, "strata does not preempt in order to borrow"}}};
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

const TypeSchema* ClusterQueueSpecSchema() {
  static const TypeSchema s{
      "ClusterQueueSpec",
      "A Kueue cluster queue.",
      {{"cohort", T::kString, "The cohort the queue borrows in."},
       {"cohortName", T::kString, "The cohort (newer name of cohort)."},
       {"namespaceSelector", T::kObject, "Must be {} (every namespace).", LabelSelectorSchema},
       {"queueingStrategy",
        T::kEnum,
        "BestEffortFIFO or StrictFIFO.",
        nullptr,
        {"BestEffortFIFO", "StrictFIFO"}},
       {"resourceGroups", T::kObjectList, "Quotas.", ResourceGroupSchema},
       {"preemption", T::kObject, "Whom the queue's workloads may preempt.", KueuePreemptionSchema},
       {"fairSharing", T::kObject, "Fair sharing weight.", FairSharingSchema},
       {"flavorFungibility", T::kUnsupported, "strata tries flavors in order"},
       {"stopPolicy", T::kUnsupported, "delete the queue to stop it"},
       {"admissionChecks", T::kUnsupported, "strata has no admission checks"},
       {"admissionChecksStrategy", T::kUnsupported, "strata has no admission checks"}}};
  return &s;
}

const TypeSchema* LocalQueueSpecSchema() {
  static const TypeSchema s{
      "LocalQueueSpec",
      "A namespaced name for a cluster queue.",
      {{"clusterQueue", T::kString, "The ClusterQueue it names.", nullptr, {}, true},
       {"stopPolicy", T::kUnsupported, "delete the queue to stop it"},
       {"fairSharing", T::kUnsupported, "fair sharing is per cluster queue"}}};
  return &s;
}

const TypeSchema* KueueResourceFlavorSpecSchema() {
  static const TypeSchema s{
      "ResourceFlavorSpec",
      "A class of nodes.",
      {{"nodeLabels", T::kStringMap, "Nodes carrying all of these labels are of this flavor."},
       {"tolerations", T::kObjectList, "Tolerations added to admitted workloads.",
        TolerationSchema},
       {"nodeTaints", T::kUnsupported, "strata reads taints from the Node objects"},
       {"topologyName", T::kUnsupported, "use a Job's topology level (a node label key)"}}};
  return &s;
}

const TypeSchema* CohortSpecSchema() {
  static const TypeSchema s{"CohortSpec",
                            "A Kueue cohort; in strata a cohort is the set of queues naming it.",
                            {{"parentName", T::kUnsupported, "strata's cohorts are flat"},
                             {"parent", T::kUnsupported, "strata's cohorts are flat"},
                             {"resourceGroups", T::kUnsupported,
                              "a strata cohort holds no quota of its own; give it to its queues"},
                             {"fairSharing", T::kUnsupported, "strata's cohorts are flat"}}};
  return &s;
}

// Kueue's resource name as strata's quota resource, or empty after reporting it.
std::string QuotaResource(const std::string& name, const std::string& path, FieldErrors& errors) {
  if (name == "cpu" || name == "memory") return name;
  if (name == "nvidia.com/gpu") return "gpu";
  errors.Add(path, "strata gives quota in cpu, memory and nvidia.com/gpu, got " + Quoted(name));
  return "";
}

}  // namespace

const TypeSchema* ClusterQueueSchema() {
  static const TypeSchema s = CompatDocument("ClusterQueue", "kueue.x-k8s.io/v1beta1",
                                             "A Kueue cluster queue.", ClusterQueueSpecSchema);
  return &s;
}

const TypeSchema* LocalQueueSchema() {
  static const TypeSchema s = CompatDocument("LocalQueue", "kueue.x-k8s.io/v1beta1",
                                             "A Kueue local queue.", LocalQueueSpecSchema);
  return &s;
}

const TypeSchema* KueueResourceFlavorSchema() {
  static const TypeSchema s =
      CompatDocument("ResourceFlavor", "kueue.x-k8s.io/v1beta1", "A Kueue resource flavor.",
                     KueueResourceFlavorSpecSchema);
  return &s;
}

const TypeSchema* CohortSchema() {
  static const TypeSchema s = [] {
    TypeSchema d =
        CompatDocument("Cohort", "kueue.x-k8s.io/v1alpha1", "A Kueue cohort.", CohortSpecSchema);
    for (FieldSpec& f : d.fields) {
      if (f.name == "spec") f.required = false;
    }
    return d;
  }();
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
      s.flavors.push_back(std::move(flavor));
    }
  }
  FieldView preemption = spec.Object("preemption");
  s.preemption.within_queue = preemption.String("withinClusterQueue", "Never");
  if (s.preemption.within_queue == "LowerOrNewerEqualPriority") {
    errors.Add(preemption.PathOf("withinClusterQueue"),
               "strata supports Never and LowerPriority, got \"LowerOrNewerEqualPriority\"");
  }
  s.preemption.reclaim_within_cohort = preemption.String("reclaimWithinCohort", "Never");
  s.weight = spec.Object("fairSharing").GetQuantity("weight", Quantity::FromUnits(1));
  out.objects.push_back(std::move(queue));
}

void DecodeLocalQueue(const FieldView& doc, DecodedDocument& out) {
  ObjectMeta meta = DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
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
  out.objects.push_back(std::move(flavor));
}

void DecodeCohort(const FieldView& doc, DecodedDocument& out) {
  DecodeMetadata(doc.Object("metadata"), false, false, out.errors);
}

}  // namespace strata::api
