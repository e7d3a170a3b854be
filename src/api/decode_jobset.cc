// JobSet (jobset.x-k8s.io/v1alpha2): a set of batch Jobs becomes one native Job, placed and
// restarted as one group, each replicated job one role (a set of one replicated job: a job of
// one role). Each child Job follows batch/v1's rules (decode_batch_v1.cc); the set's failure,
// success and startup policies, dependsOn, its queue label and its exclusive-topology
// annotation are read here.
#include <algorithm>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/job_roles.h"
#include "api/kube_common.h"
#include "api/native_schema.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"

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

const TypeSchema* DependsOnSchema() {
  static const TypeSchema s{"DependsOn",
                            "A replicated job that must get this far before this one's pods start.",
                            {{"name", T::kString, "An earlier replicated job.", nullptr, {}, true},
                             {"status",
                              T::kEnum,
                              "Ready (its pods run) or Complete (they succeeded).",
                              nullptr,
                              {"Ready", "Complete"},
                              true}}};
  return &s;
}

const TypeSchema* ReplicatedJobSchema() {
  static const TypeSchema s{
      "ReplicatedJob",
      "Child Jobs made from one template: one role of the strata job.",
      {{"name", T::kString, "The replicated job's name (the role's).", nullptr, {}, true},
       {"replicas", T::kNonNegativeInteger, "Child Jobs made from the template (default 1)."},
       {"template", T::kObject, "The child Job.", ChildJobTemplateSchema, {}, true},
       {"groupName", T::kIgnored, "strata's pods do not carry JobSet's group labels"},
       {"dependsOn", T::kObjectList,
        "Replicated jobs whose pods must be Ready or Complete before this one's start; the whole "
        "set is placed at once.",
        DependsOnSchema}}};
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
      "When the JobSet succeeds; its other pods are then stopped.",
      {{"operator",
        T::kEnum,
        "All (default): every pod of the targeted replicated jobs succeeded; Any: every pod of "
        "one of them. strata counts a replicated job, not each child Job.",
        nullptr,
        {"All", "Any"}},
       {"targetReplicatedJobs", T::kStringList,
        "The replicated jobs that decide (default: all)."}}};
  return &s;
}

const TypeSchema* StartupPolicySchema() {
  static const TypeSchema s{
      "StartupPolicy",
      "The order in which replicated jobs start.",
      {{"startupPolicyOrder",
        T::kEnum,
        "AnyOrder, or InOrder: each replicated job's pods start once the previous one's are "
        "Ready.",
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
      "A JobSet; strata runs its pods as one group, each replicated job a role.",
      {{"replicatedJobs",
        T::kObjectList,
        "The child Jobs, by template.",
        ReplicatedJobSchema,
        {},
        true},
       {"failurePolicy", T::kObject, "How the set restarts after a failure.", FailurePolicySchema},
       {"successPolicy", T::kObject, "When the set succeeds.", SuccessPolicySchema},
       {"startupPolicy", T::kObject, "Start order of the replicated jobs.", StartupPolicySchema},
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

// What the set's tutorials set by hand that strata's contract gives anyway. With one replicated
// job, strata's MASTER_ADDR is its first pod, whose host name JobSet makes
// "<set>-<job>-0-0.<subdomain>"; with one child Job too, strata's RANK is the completion index.
HandSetRendezvous SetRendezvous(const std::string& set_name, const FieldView& spec,
                                const std::vector<FieldView>& replicated_jobs) {
  HandSetRendezvous out;
  if (replicated_jobs.size() != 1) return out;
  const FieldView network = spec.Object("network");
  if (network.Bool("enableDNSHostnames", true)) {
    out.first_pod_host = set_name + "-" + replicated_jobs.front().String("name") + "-0-0." +
                         network.String("subdomain", set_name);
  }
  out.rank_is_completion_index = replicated_jobs.front().Integer("replicas", 1) == 1;
  return out;
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
  const HandSetRendezvous rendezvous = SetRendezvous(job.metadata.name, spec, replicated_jobs);
  int64_t child_jobs = 0;
  int64_t pods = 0;
  std::vector<JobRole> roles;
  JobSpec first_template;  // what the roles must share: tolerations, topology, priority
  for (size_t i = 0; i < replicated_jobs.size(); ++i) {
    const FieldView& replicated = replicated_jobs[i];
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
    if (replicas > 1 && child.String("completionMode", "Indexed") == "Indexed") {
      // JobSet makes its child Jobs Indexed unless they say NonIndexed; asked for in so many
      // words, a per-child-Job index is refused, left to the default it is warned of.
      std::string what = "strata numbers the replicated job's pods 0.." +
                         std::to_string(child_pods - 1) + " in JOB_COMPLETION_INDEX across its " +
                         std::to_string(replicas) + " child Jobs, not from 0 in each";
      if (child.Has("completionMode")) {
        errors.Add(child.PathOf("completionMode"),
                   "Indexed with several child Jobs: " + what +
                       "; use one child Job (replicas 1) of parallelism " +
                       std::to_string(child_pods) + ", or NonIndexed");
      } else {
        errors.Warn(replicated.PathOf("replicas"),
                    "child Jobs are Indexed by default, but " + what +
                        "; say completionMode: NonIndexed to silence this");
      }
    }

    FieldView pod_template = child.Object("template");
    if (pod_template.Object("spec").String("restartPolicy") == "Always") {
      errors.Add(pod_template.Object("spec").PathOf("restartPolicy"),
                 "a Job's pods need restartPolicy Never or OnFailure (JobSet's default)");
    }
    JobSpec decoded;
    DecodeGangPodTemplate(pod_template, decoded, errors, /*command_required=*/true, &rendezvous);
    JobRole role{.name = replicated.String("name"),
                 .replicas = child_pods,
                 .resources = decoded.resources,
                 .template_ = decoded.template_,
                 .node_selector = decoded.node_selector};
    for (const FieldView& d : replicated.ObjectList("dependsOn")) {
      role.depends_on.push_back({d.String("name"), d.String("status")});
    }
    roles.push_back(std::move(role));
    if (i == 0) {
      first_template = std::move(decoded);
      continue;
    }
    const std::string first_path = first_spec.Object("template").PathOf("spec");
    const std::string why = ": strata places a JobSet's pods as one gang";
    if (decoded.tolerations != first_template.tolerations) {
      errors.Add(pod_template.Object("spec").PathOf("tolerations"),
                 "must equal " + first_path + ".tolerations" + why);
    }
    if (decoded.topology != first_template.topology) {
      errors.Add(pod_template.Object("metadata").PathOf("annotations"),
                 "Kueue's topology annotations must equal those of " +
                     first_spec.Object("template").PathOf("metadata") + why);
    }
    if (decoded.priority != first_template.priority) {
      errors.Add(pod_template.Object("spec").PathOf("priorityClassName"),
                 "must equal " + first_path + ".priorityClassName" + why);
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
  if (!errors.empty()) return;

  FieldView startup = spec.Object("startupPolicy");
  if (startup.String("startupPolicyOrder") == "InOrder") {
    // JobSet's InOrder: each replicated job starts once the one before it is Ready.
    for (size_t i = 1; i < roles.size(); ++i) {
      if (roles[i].depends_on.empty()) roles[i].depends_on.push_back({roles[i - 1].name, "Ready"});
    }
  }
  FieldView success = spec.Object("successPolicy");
  s.success_policy.op = success.String("operator", "All");
  s.success_policy.roles = success.StringList("targetReplicatedJobs");
  s.tolerations = first_template.tolerations;
  s.topology = first_template.topology;
  s.priority = first_template.priority;
  FieldView failure = spec.Object("failurePolicy");
  s.max_restarts = SaturatingRestarts(first_limits.max_restarts, failure.Integer("maxRestarts", 0));
  s.runtime_limit = first_limits.runtime_limit;
  if (roles.size() == 1 && roles.front().depends_on.empty()) {
    // One replicated job: a job of one role, as a batch Job's.
    JobRole& only = roles.front();
    s.replicas = only.replicas;
    s.resources = std::move(only.resources);
    s.template_ = std::move(only.template_);
    s.node_selector = std::move(only.node_selector);
    if (s.success_policy.roles == std::vector<std::string>{only.name}) {
      s.success_policy.roles = {std::string(kDefaultRoleName)};
    }
  } else {
    s.roles = std::move(roles);
  }
  ValidateJobRoles(s,
                   {spec.PathOf("replicatedJobs"), "dependsOn", "name",
                    spec.Object("successPolicy").PathOf("targetReplicatedJobs")},
                   errors);
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
  // Kept so that /apis/jobset.x-k8s.io/v1alpha2 serves the JobSet back as it was written
  // (api/source_form.h).
  job.metadata.annotations[kSourceAnnotation] =
      SourceAnnotationValue(JobSetType(), doc.Raw("spec"));
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
