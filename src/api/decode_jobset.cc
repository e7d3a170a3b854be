// JobSet (jobset.x-k8s.io/v1alpha2): a set of batch Jobs whose pods all come from one template
// becomes one native Job, placed and restarted as one group. Each child Job follows batch/v1's
// rules (decode_batch_v1.cc); the set's failure, success and startup policies, its queue label
// and its exclusive-topology annotation are read here.
#include <algorithm>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

// JobSet's annotation for one child Job per topology domain (the value is a node label key).
constexpr std::string_view kExclusiveTopologyAnnotation =
    "alpha.jobset.sigs.k8s.io/exclusive-topology";
// JobSet's flag to place exclusive Jobs with node selectors on nodes labelled by hand.
constexpr std::string_view kNodeSelectorStrategyAnnotation =
    "alpha.jobset.sigs.k8s.io/node-selector";
// The manager JobSet's own controller answers to, whose part strata plays.
constexpr std::string_view kJobSetController = "jobset.sigs.k8s.io/jobset-controller";
// The most pods one set may have: they are one strata Job's gang.
constexpr int64_t kMaxPods = kMaxJobReplicas;
// Whole-group restarts beyond which a budget saturates (the product below could overflow).
constexpr int64_t kMaxRestarts = 1'000'000'000;

// batch/v1's JobSpec as a child Job has it: the same fields, except that the JobSet suspends
// its children and counts the restarts of the whole set.
const TypeSchema* ChildJobSpecSchema() {
  static const TypeSchema s = [] {
    TypeSchema child{"JobSpec",
                     "A child Job of the JobSet: batch/v1's JobSpec, under the same rules.",
                     BatchJobSpecSchema()->fields};
    for (FieldSpec& f : child.fields) {
      if (f.name == "suspend") {
        f.type = T::kUnsupported;
        f.doc = "the JobSet suspends its child Jobs: set the JobSet's spec.suspend";
      } else if (f.name == "backoffLimit") {
        f.doc =
            "Pod failures a child Job absorbs before it fails (Kubernetes' default 6); strata "
            "turns each into a whole-group restart, so maxRestarts = (backoffLimit + 1) x "
            "(failurePolicy.maxRestarts + 1) - 1.";
      }
    }
    return child;
  }();
  return &s;
}

const TypeSchema* ChildJobMetadataSchema() {
  static const TypeSchema s{
      "JobTemplateMetadata",
      "Labels and annotations of the child Jobs.",
      {{"labels", T::kIgnored, "strata's jobs do not carry a child Job's labels"},
       {"annotations", T::kStringMap,
        "alpha.jobset.sigs.k8s.io/exclusive-topology (a node label key: one child Job per "
        "domain); other annotations are ignored, with a warning."}}};
  return &s;
}

const TypeSchema* ChildJobTemplateSchema() {
  static const TypeSchema s{
      "JobTemplateSpec",
      "The child Job.",
      {{"metadata", T::kObject, "Labels and annotations.", ChildJobMetadataSchema},
       {"spec", T::kObject, "The child Job's spec.", ChildJobSpecSchema, {}, true}}};
  return &s;
}

const TypeSchema* ReplicatedJobSchema() {
  static const TypeSchema s{
      "ReplicatedJob",
      "Child Jobs made from one template; every replicated job must share one pod template.",
      {{"name", T::kString, "The replicated job's name.", nullptr, {}, true},
       {"replicas", T::kNonNegativeInteger, "Child Jobs made from the template (default 1)."},
       {"template", T::kObject, "The child Job.", ChildJobTemplateSchema, {}, true},
       {"groupName", T::kIgnored, "strata's pods do not carry JobSet's group labels"},
       {"dependsOn", T::kUnsupported, "strata starts all of a job's pods together"}}};
  return &s;
}

const TypeSchema* FailurePolicySchema() {
  static const TypeSchema s{
      "FailurePolicy",
      "How the JobSet restarts after a failure.",
      {{"maxRestarts", T::kNonNegativeInteger,
        "Restarts of the whole set (default 0): the job's maxRestarts when child Jobs have "
        "backoffLimit 0."},
       {"restartStrategy",
        T::kEnum,
        "Recreate (default) or BlockingRecreate: strata recreates the group once all of its pods "
        "stopped.",
        nullptr,
        {"Recreate", "BlockingRecreate"}},
       {"rules", T::kUnsupported, "strata restarts the whole group on any failure"}}};
  return &s;
}

const TypeSchema* SuccessPolicySchema() {
  static const TypeSchema s{
      "SuccessPolicy",
      "When the JobSet succeeds: strata's jobs succeed when every pod succeeds.",
      {{"operator", T::kEnum, "All: every targeted child Job succeeds.", nullptr, {"All", "Any"}},
       {"targetReplicatedJobs", T::kStringList,
        "Every replicated job (the default): a strata job succeeds when all of its pods do."}}};
  return &s;
}

const TypeSchema* StartupPolicySchema() {
  static const TypeSchema s{
      "StartupPolicy",
      "The order in which replicated jobs start; strata starts one template's pods together.",
      {{"startupPolicyOrder",
        T::kEnum,
        "AnyOrder or InOrder.",
        nullptr,
        {"AnyOrder", "InOrder"},
        true}}};
  return &s;
}

const TypeSchema* NetworkSchema() {
  static const TypeSchema s{
      "Network",
      "Pod host names; strata gives every pod MASTER_ADDR and MASTER_PORT itself.",
      {{"enableDNSHostnames", T::kIgnored,
        "strata gives every pod MASTER_ADDR and MASTER_PORT (rank 0's address) itself"},
       {"subdomain", T::kIgnored,
        "strata gives every pod MASTER_ADDR and MASTER_PORT (rank 0's address) itself"},
       {"publishNotReadyAddresses", T::kIgnored,
        "strata gives every pod MASTER_ADDR and MASTER_PORT (rank 0's address) itself"}}};
  return &s;
}

const TypeSchema* JobSetSpecSchema() {
  static const TypeSchema s{
      "JobSetSpec",
      "A JobSet whose child Jobs share one pod template; strata runs their pods as one group.",
      {{"replicatedJobs",
        T::kObjectList,
        "The child Jobs, all with one pod template.",
        ReplicatedJobSchema,
        {},
        true},
       {"failurePolicy", T::kObject, "How the set restarts after a failure.", FailurePolicySchema},
       {"successPolicy", T::kObject, "When the set succeeds (operator All over every job).",
        SuccessPolicySchema},
       {"startupPolicy", T::kObject, "Start order; one template's pods start together.",
        StartupPolicySchema},
       {"network", T::kObject, "Pod host names.", NetworkSchema},
       {"suspend", T::kBool,
        "true: wait for the queue's admission (Kueue's convention); needs the "
        "kueue.x-k8s.io/queue-name label."},
       {"managedBy", T::kString,
        "jobset.sigs.k8s.io/jobset-controller (JobSet's default), whose part strata plays."},
       {"coordinator", T::kUnsupported, "strata gives every pod MASTER_ADDR, rank 0's address"},
       {"ttlSecondsAfterFinished", T::kUnsupported, "strata keeps finished jobs until deleted"},
       {"volumeClaimPolicies", T::kUnsupported, "strata has no persistent volumes"}}};
  return &s;
}

int64_t SaturatingRestarts(int64_t backoff_limit, int64_t set_restarts) {
  int64_t budget = 0;
  if (__builtin_mul_overflow(backoff_limit + 1, set_restarts + 1, &budget)) return kMaxRestarts;
  return std::min(budget - 1, kMaxRestarts);
}

// An exclusive-topology annotation: the node label key it names, and where it was found.
struct ExclusiveTopology {
  std::string level;
  std::string path;
};

// Moves the exclusive-topology annotation of `annotations` (under `path`) into `found`; reports
// the node-selector strategy, and warns of every other annotation when `warn_others` (a child
// Job's annotations mean nothing here).
void TakeExclusiveTopology(std::map<std::string, std::string>& annotations, const std::string& path,
                           bool warn_others, std::vector<ExclusiveTopology>& found,
                           FieldErrors& errors) {
  for (auto it = annotations.begin(); it != annotations.end();) {
    std::string key_path = KeyPath(path, it->first);
    if (it->first == kExclusiveTopologyAnnotation) {
      if (it->second.empty()) errors.Add(key_path, "must name a node label key");
      found.push_back({it->second, key_path});
      it = annotations.erase(it);
      continue;
    }
    if (it->first == kNodeSelectorStrategyAnnotation) {
      errors.Add(key_path,
                 "not supported by strata: it places the group in one domain of the "
                 "exclusive-topology label by itself, with no node selectors to label by hand");
    } else if (warn_others) {
      errors.Warn(key_path, "ignored: strata's jobs do not carry a child Job's annotations");
    }
    ++it;
  }
}

}  // namespace

const TypeSchema* JobSetSchema() {
  static const TypeSchema s = CompatDocument("JobSet", "jobset.x-k8s.io/v1alpha2",
                                             "A JobSet of child Jobs.", JobSetSpecSchema);
  return &s;
}

void DecodeJobSet(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  FieldView metadata = doc.Object("metadata");
  job.metadata = DecodeMetadata(metadata, true, true, errors);
  JobSpec& s = job.spec;
  s.queue = TakeQueueLabel(job.metadata);
  s.clean_pod_policy = "None";  // a JobSet, like a batch Job, keeps finished pods for their logs
  FieldView spec = doc.Object("spec");
  RequireQueueToSuspend(spec, "JobSet", s.queue, errors);
  if (spec.Has("managedBy") && spec.String("managedBy") != kJobSetController) {
    errors.Add(spec.PathOf("managedBy"),
               "strata manages every JobSet it admits: leave it out or give " +
                   std::string(kJobSetController) + ", got " + Quoted(spec.String("managedBy")));
  }
  std::vector<ExclusiveTopology> exclusive;
  TakeExclusiveTopology(job.metadata.annotations, metadata.PathOf("annotations"),
                        /*warn_others=*/false, exclusive, errors);

  std::vector<FieldView> replicated_jobs = spec.ObjectList("replicatedJobs");
  if (replicated_jobs.empty()) {
    errors.Add(spec.PathOf("replicatedJobs"), "needs at least one replicated job");
    return;
  }
  const FieldView first_spec = replicated_jobs.front().Object("template").Object("spec");
  JobSpec first_limits;
  DecodeBatchJobLimits(first_spec, first_limits, errors);
  int64_t child_jobs = 0;
  int64_t pods = 0;
  std::vector<std::string> names;
  bool indexed = false;
  bool indexed_by_default = false;
  std::string indexed_path;
  for (size_t i = 0; i < replicated_jobs.size(); ++i) {
    const FieldView& replicated = replicated_jobs[i];
    names.push_back(replicated.String("name"));
    int64_t replicas = replicated.Integer("replicas", 1);
    if (replicas < 1) errors.Add(replicated.PathOf("replicas"), "must be at least 1");
    FieldView job_template = replicated.Object("template");
    FieldView child = job_template.Object("spec");
    std::map<std::string, std::string> annotations =
        job_template.Object("metadata").StringMap("annotations");
    TakeExclusiveTopology(annotations, job_template.Object("metadata").PathOf("annotations"),
                          /*warn_others=*/true, exclusive, errors);
    int64_t parallelism = BatchJobParallelism(child, errors);
    int64_t child_pods = 0;
    if (__builtin_mul_overflow(replicas, parallelism, &child_pods) || child_pods > kMaxPods ||
        pods + child_pods > kMaxPods) {
      errors.Add(replicated.PathOf("replicas"),
                 "replicas x parallelism makes more than " + std::to_string(kMaxPods) + " pods");
      return;
    }
    child_jobs += std::max<int64_t>(replicas, 0);
    pods += std::max<int64_t>(child_pods, 0);
    indexed_by_default |= !child.Has("completionMode");
    if (child.String("completionMode") == "Indexed" && !indexed) {
      indexed = true;
      indexed_path = child.PathOf("completionMode");
    }
    if (i == 0) continue;
    if (child.Raw("template") != first_spec.Raw("template")) {
      errors.Add(child.PathOf("template"), SeveralTemplatesMessage(first_spec.PathOf("template")));
    }
    JobSpec limits;
    DecodeBatchJobLimits(child, limits, errors);
    if (limits.max_restarts != first_limits.max_restarts) {
      errors.Add(child.PathOf("backoffLimit"),
                 "must equal " + first_spec.PathOf("backoffLimit") +
                     " (or its default): strata restarts the set's pods as one group");
    }
    if (limits.runtime_limit != first_limits.runtime_limit) {
      errors.Add(child.PathOf("activeDeadlineSeconds"),
                 "must equal " + first_spec.PathOf("activeDeadlineSeconds") +
                     ": strata times the set's pods as one group");
    }
  }
  if (child_jobs > 1 && (indexed || indexed_by_default)) {
    // JobSet makes its child Jobs Indexed unless they say NonIndexed; asked for in so many words,
    // a per-child-Job index is refused, left to the default it is warned of.
    std::string what = "strata numbers the set's pods 0.." + std::to_string(pods - 1) +
                       " in JOB_COMPLETION_INDEX across all " + std::to_string(child_jobs) +
                       " child Jobs, not from 0 in each";
    if (indexed) {
      errors.Add(indexed_path, "Indexed with several child Jobs: " + what +
                                   "; use one child Job (replicas 1) of parallelism " +
                                   std::to_string(pods) + ", or NonIndexed");
    } else {
      errors.Warn(spec.PathOf("replicatedJobs"),
                  "child Jobs are Indexed by default, but " + what +
                      "; say completionMode: NonIndexed to silence this");
    }
  }
  if (!errors.empty()) return;

  s.replicas = pods;
  FieldView pod_template = first_spec.Object("template");
  if (pod_template.Object("spec").String("restartPolicy") == "Always") {
    errors.Add(pod_template.Object("spec").PathOf("restartPolicy"),
               "a Job's pods need restartPolicy Never or OnFailure (JobSet's default)");
  }
  DecodeGangPodTemplate(pod_template, s, errors);
  FieldView failure = spec.Object("failurePolicy");
  s.max_restarts = SaturatingRestarts(first_limits.max_restarts, failure.Integer("maxRestarts", 0));
  s.runtime_limit = first_limits.runtime_limit;

  FieldView success = spec.Object("successPolicy");
  if (success.String("operator", "All") != "All") {
    errors.Add(success.PathOf("operator"),
               "a strata job succeeds when every pod succeeds: only All is supported");
  }
  std::vector<std::string> targets = success.StringList("targetReplicatedJobs");
  for (const std::string& name : names) {
    if (!targets.empty() && std::find(targets.begin(), targets.end(), name) == targets.end()) {
      errors.Add(success.PathOf("targetReplicatedJobs"),
                 "leaves out " + Quoted(name) +
                     ": a strata job succeeds when every pod succeeds; target every replicated "
                     "job or leave the field out");
      break;
    }
  }
  FieldView startup = spec.Object("startupPolicy");
  if (startup.String("startupPolicyOrder") == "InOrder" && replicated_jobs.size() > 1) {
    errors.Warn(startup.PathOf("startupPolicyOrder"),
                "InOrder: strata starts all of the set's pods together; with one pod template "
                "no replicated job has to wait for another's");
  }
  for (const ExclusiveTopology& e : exclusive) {
    if (child_jobs != 1) {
      errors.Add(e.path,
                 "strata places a JobSet as one gang and has no per-child-Job domains: "
                 "exclusive placement needs exactly one child Job, got " +
                     std::to_string(child_jobs));
    } else if (!s.topology.level.empty() &&
               (s.topology.level != e.level || s.topology.mode != "Required")) {
      errors.Add(e.path, "contradicts the pod template's Kueue topology annotation");
    } else {
      s.topology = {e.level, "Required"};
    }
  }
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
