#include "api/source_form.h"

#include "api/batch_v1_form.h"
#include "api/jobset_form.h"
#include "api/kueue_form.h"
#include "api/local_queue_form.h"
#include "api/object_meta.h"
#include "api/strategic_merge_patch.h"
#include "common/check.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

using Json = nlohmann::json;

// One source-served kind: where it is served, and what its form adds to the kept document.
struct SourceKind {
  const ResourceType& (*type)();
  std::string_view patch_kind;   // empty: the type's kind
  void (*defaults)(Json& spec);  // nullptr: none
  Json (*status)(const Json& stored, const Json& spec);
  std::vector<TableColumn> (*columns)();
  std::vector<std::string> (*cells)(const Json& served, TimePoint now);
  // The spec at another served version of the kind (Kueue's v1beta1), from the kept one;
  // nullptr: the same at every version.
  void (*spec_at_version)(Json& spec, std::string_view version) = nullptr;
  // Whether the kind's document has its fields at the top, not under spec (a
  // WorkloadPriorityClass's value): they are kept as the source's spec and served at the top.
  bool flat = false;
};

const std::vector<SourceKind>& SourceKinds() {
  static const std::vector<SourceKind> kKinds = {
      {BatchJobType, kBatchJobPatchKind, DefaultBatchJobSpec, BatchJobStatus, BatchJobColumns,
       BatchJobCells},
      {JobSetType, "", nullptr, JobSetStatus, JobSetColumns, JobSetCells},
      {ClusterQueueType, "", DefaultClusterQueueSpec, ClusterQueueStatus, ClusterQueueColumns,
       ClusterQueueCells, ClusterQueueSpecAtVersion},
      {KueueResourceFlavorType, "", nullptr, KueueResourceFlavorStatus, KueueResourceFlavorColumns,
       KueueResourceFlavorCells},
      {KueueWorkloadPriorityClassType, "", nullptr, WorkloadPriorityClassStatus,
       WorkloadPriorityClassColumns, WorkloadPriorityClassCells, nullptr, /*flat=*/true},
      {CohortType, "", nullptr, CohortStatus, CohortColumns, CohortCells},
  };
  return kKinds;
}

const SourceKind* SourceKindAt(const ResourceType& type) {
  const ResourceType& storage = StorageVersionOf(type);
  for (const SourceKind& kind : SourceKinds()) {
    if (&kind.type() == &storage) return &kind;
  }
  return nullptr;
}

// The kept source of `stored` and its kind's entry; a null source when it has none that reads
// as a served kind's.
std::pair<Json, const SourceKind*> SourceOf(const Json& stored) {
  if (StringMemberOr(stored, "apiVersion") != kApiVersion) return {};
  const std::string text = StringMemberOr(
      MemberOrNull(MemberOrNull(stored, "metadata"), "annotations"), kSourceAnnotation);
  if (text.empty()) return {};
  Json source = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!MemberOrNull(source, "spec").is_object()) return {};
  for (const SourceKind& kind : SourceKinds()) {
    const ResourceType& type = kind.type();
    if (StringMemberOr(source, "apiVersion") == type.GroupVersion() &&
        StringMemberOr(source, "kind") == type.kind &&
        StringMemberOr(stored, "kind") == type.StoreKind()) {
      return {std::move(source), &kind};
    }
  }
  return {};
}

}  // namespace

bool IsSourceServedType(const ResourceType& type) { return SourceKindAt(type) != nullptr; }

std::string SourceAnnotationValue(const ResourceType& type, const Json& spec) {
  const SourceKind* kind = SourceKindAt(type);
  STRATA_CHECK(kind != nullptr);
  Json defaulted = spec.is_object() ? spec : Json::object();  // a ResourceFlavor may have none
  if (kind->defaults != nullptr) kind->defaults(defaulted);
  return Json{{"apiVersion", type.GroupVersion()}, {"kind", type.kind}, {"spec", defaulted}}.dump();
}

const ResourceType* SourceTypeOf(const Json& stored) {
  const SourceKind* kind = SourceOf(stored).second;
  return kind == nullptr ? nullptr : &kind->type();
}

bool IsServedAt(const Json& stored, const ResourceType& type) {
  return !IsSourceServedType(type) || SourceTypeOf(stored) == &StorageVersionOf(type);
}

Json ServedSourceForm(const Json& stored, const ResourceType* at) {
  auto [source, kind] = SourceOf(stored);
  if (kind == nullptr) return stored;
  Json metadata = MemberOrNull(stored, "metadata");
  Json& annotations = metadata["annotations"];
  annotations.erase(kSourceAnnotation);
  annotations.erase(kLocalQueuesAnnotation);  // served as LocalQueues of their own
  if (annotations.empty()) metadata.erase("annotations");
  // The decoders read Kueue's queue label into the native object's queue.
  const std::string queue = StringMemberOr(MemberOrNull(stored, "spec"), "queue");
  if (!queue.empty()) metadata["labels"][std::string(kKueueQueueNameLabel)] = queue;
  Json spec = std::move(source["spec"]);
  Json status = kind->status(stored, spec);
  const ResourceType& type =
      at != nullptr && &StorageVersionOf(*at) == &kind->type() ? *at : kind->type();
  if (&type != &kind->type() && kind->spec_at_version != nullptr) {
    kind->spec_at_version(spec, type.version);
  }
  Json served = {{"apiVersion", type.GroupVersion()},
                 {"kind", kind->type().kind},
                 {"metadata", std::move(metadata)}};
  if (kind->flat) {
    for (auto& field : spec.items()) served[field.key()] = std::move(field.value());
  } else {
    served["spec"] = std::move(spec);
  }
  if (!status.is_null()) served["status"] = std::move(status);
  return served;
}

std::string_view PatchKindOf(const ResourceType& type) {
  const SourceKind* kind = SourceKindAt(type);
  return kind == nullptr || kind->patch_kind.empty() ? type.kind : kind->patch_kind;
}

std::vector<TableColumn> SourceTableColumns(const ResourceType& type) {
  const SourceKind* kind = SourceKindAt(type);
  STRATA_CHECK(kind != nullptr);
  return kind->columns();
}

std::vector<std::string> SourceTableCells(const ResourceType& type, const Json& stored,
                                          TimePoint now) {
  const SourceKind* kind = SourceKindAt(type);
  STRATA_CHECK(kind != nullptr);
  return kind->cells(ServedSourceForm(stored), now);
}

Json TrueCondition(std::string_view type, std::string_view reason, std::string_view message,
                   const std::string& time) {
  Json condition = {{"type", type}, {"status", "True"}, {"reason", reason}};
  if (!message.empty()) condition["message"] = message;
  if (!time.empty()) {
    condition["lastProbeTime"] = time;
    condition["lastTransitionTime"] = time;
  }
  return condition;
}

std::string ConditionTime(const Json& native_status, std::string_view type,
                          const std::string& fallback) {
  for (const Json& condition : MemberOrNull(native_status, "conditions")) {
    if (StringMemberOr(condition, "type") == type) {
      return StringMemberOr(condition, "lastTransitionTime", fallback);
    }
  }
  return fallback;
}

const Json* TrueConditionOf(const Json& served, std::string_view type) {
  for (const Json& condition : MemberOrNull(MemberOrNull(served, "status"), "conditions")) {
    if (StringMemberOr(condition, "type") == type &&
        StringMemberOr(condition, "status") == "True") {
      return &condition;
    }
  }
  return nullptr;
}

}  // namespace strata::api
