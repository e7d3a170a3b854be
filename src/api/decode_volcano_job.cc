// Volcano's batch.volcano.sh/v1alpha1 Job: its tasks become one native Job, a gang placed whole
// and restarted as a group, each task a role (a job of one task: a job of one role). Volcano's own
// scheduling pieces (the PodGroup and Queue kinds) are in decode_volcano.cc.
#include <algorithm>

#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/job_roles.h"
#include "api/kube_common.h"
#include "api/native_schema.h"

namespace strata::api {
namespace {

using T = FieldType;

// Volcano's queue for jobs that name none; strata's counterpart is no queue at all.
constexpr std::string_view kVolcanoDefaultQueue = "default";
constexpr std::string_view kVolcanoSchedulerName = "volcano";
// The most pods one job may have: they are one strata Job's gang.
constexpr int64_t kMaxPods = kMaxJobReplicas;

const TypeSchema* PolicySchema() {
  static const TypeSchema s{
      "LifecyclePolicy",
      "What the job does on an event: strata restarts the whole job on a pod failure or eviction "
      "(RestartJob on PodFailed or PodEvicted) and completes it when a task's pods all "
      "succeeded (CompleteJob on TaskCompleted: of this task in a task's policies, of any task in "
      "the job's).",
      {{"action", T::kString, "RestartJob, or CompleteJob on TaskCompleted.", nullptr, {}, true},
       {"event", T::kString, "PodFailed or PodEvicted (TaskCompleted for CompleteJob)."},
       {"events", T::kStringList, "Several events, each as in event."},
       {"exitCode", T::kUnsupported, "strata restarts the whole job on any failure"},
       {"timeout", T::kUnsupported, "strata restarts a job as soon as all of its pods stopped"}}};
  return &s;
}

const TypeSchema* DependsOnSchema() {
  static const TypeSchema s{
      "DependsOn",
      "Tasks this task waits for.",
      {{"name",
        T::kStringList,
        "The tasks, each Ready (every pod running) first.",
        nullptr,
        {},
        true},
       {"iteration",
        T::kEnum,
        "all (default): every task named; any: one of them, only with one name.",
        nullptr,
        {"all", "any"}}}};
  return &s;
}

const TypeSchema* TaskSchema() {
  static const TypeSchema s{
      "TaskSpec",
      "Pods from one template: one role of the strata job.",
      {{"name", T::kString, "The task's name (the role's; default default<index>)."},
       {"replicas", T::kNonNegativeInteger, "Pods of the task."},
       {"minAvailable", T::kNonNegativeInteger,
        "strata places the whole job: must equal replicas, or be left out."},
       {"template", T::kObject, "The pod template.", KubePodTemplateSchema, {}, true},
       {"policies", T::kObjectList, "The task's lifecycle policies, as the job's.", PolicySchema},
       {"maxRetry", T::kUnsupported, "strata restarts the whole job: set spec.maxRetry"},
       {"topologyPolicy", T::kUnsupported, "strata places a pod's GPUs within one NVLink island"},
       {"dependsOn", T::kObject,
        "Tasks whose pods must all run before this task's start; the whole job is placed at "
        "once.",
        DependsOnSchema}}};
  return &s;
}

const TypeSchema* PluginsSchema() {
  static const TypeSchema s{
      "Plugins",
      "Volcano's job plugins, each with its arguments.",
      {{"env", T::kStringList,
        "Each pod's index within its task in VK_TASK_INDEX and VC_TASK_INDEX: strata's pods "
        "carry both."},
       {"svc", T::kStringList,
        "Accepted: strata gives every pod MASTER_ADDR and MASTER_PORT (rank 0's address) in "
        "place of /etc/volcano host files and VC_<TASK>_HOSTS, which it does not write (a "
        "warning says so)."},
       {"pytorch", T::kIgnored,
        "strata sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK itself, rank 0 in the first "
        "task's first pod, on a port it picks"},
       {"ssh", T::kUnsupported,
        "strata starts every pod's processes itself; pods reach each other at MASTER_ADDR, "
        "without ssh"},
       {"tensorflow", T::kUnsupported,
        "strata sets torchrun's environment (and each task's VK_TASK_INDEX), not TF_CONFIG"},
       {"mpi", T::kUnsupported,
        "strata starts torch-style process groups, not MPI launchers over ssh"}}};
  return &s;
}

const TypeSchema* VolcanoJobSpecSchema() {
  static const TypeSchema s{
      "JobSpec",
      "A Volcano Job; strata runs its pods as one gang, each task a role.",
      {{"tasks", T::kObjectList, "The tasks, each with its pod template.", TaskSchema, {}, true},
       {"minAvailable", T::kNonNegativeInteger,
        "strata places whole gangs: must equal the total replicas, or be left out."},
       {"minSuccess", T::kNonNegativeInteger,
        "a strata job succeeds when every pod of its success tasks succeeds: must equal the "
        "total replicas, or be left out."},
       {"schedulerName", T::kString, "volcano (or left out): strata is the scheduler."},
       {"queue", T::kString,
        "The queue that admits the job; \"default\", Volcano's queue for jobs that name none, is "
        "strata's no queue."},
       {"priorityClassName", T::kString,
        "critical, standard, sheddable, system-cluster-critical or system-node-critical."},
       {"maxRetry", T::kNonNegativeInteger,
        "Whole-group restarts after a pod failure (default 3), made when a policy restarts the "
        "job on PodFailed or the template's restartPolicy is OnFailure; otherwise a failed pod "
        "fails the job, as in Volcano."},
       {"policies", T::kObjectList, "Lifecycle policies.", PolicySchema},
       {"plugins", T::kObject, "Job plugins.", PluginsSchema},
       {"runningEstimate", T::kIgnored,
        "strata backfills by runtime limits, not by estimates of the running time"},
       {"volumes", T::kUnsupported, "strata has no persistent volumes"},
       {"ttlSecondsAfterFinished", T::kUnsupported, "strata keeps finished jobs until deleted"},
       {"networkTopology", T::kUnsupported,
        "ask for a topology with Kueue's podset-required-topology annotation on the pod "
        "template"}}};
  return &s;
}

// What one lifecycle policy asks for that strata does.
enum class PolicyEffect { kNone, kRestartOnFailure, kCompleteOnTask };

// Checks one lifecycle policy.
PolicyEffect ReadPolicy(const FieldView& policy, FieldErrors& errors) {
  std::string action = policy.String("action");
  std::vector<std::string> events = policy.StringList("events");
  if (policy.Has("event")) events.insert(events.begin(), policy.String("event"));
  std::string events_path = policy.Has("event") ? policy.PathOf("event") : policy.PathOf("events");
  if (events.empty()) {
    errors.Add(policy.PathOf("event"), "required: the event the action answers");
    return PolicyEffect::kNone;
  }
  if (action == "RestartJob") {
    bool on_failure = false;
    for (const std::string& event : events) {
      if (event == "PodFailed") {
        on_failure = true;
      } else if (event != "PodEvicted") {
        errors.Add(events_path, "RestartJob on " + Quoted(event) +
                                    ": strata restarts a job on PodFailed and PodEvicted only");
      }
    }
    return on_failure ? PolicyEffect::kRestartOnFailure : PolicyEffect::kNone;
  }
  if (action == "CompleteJob" && events == std::vector<std::string>{"TaskCompleted"}) {
    return PolicyEffect::kCompleteOnTask;
  }
  std::string on;
  for (const std::string& event : events) on += (on.empty() ? "" : ", ") + event;
  errors.Add(policy.PathOf("action"),
             Quoted(action) + " on " + on +
                 " is not supported by strata: it restarts the whole job on PodFailed or "
                 "PodEvicted (RestartJob) and completes a job when a task does (CompleteJob on "
                 "TaskCompleted)");
  return PolicyEffect::kNone;
}

}  // namespace

const TypeSchema* VolcanoJobSchema() {
  static const TypeSchema s = CompatDocument("Job", "batch.volcano.sh/v1alpha1",
                                             "A Volcano batch Job.", VolcanoJobSpecSchema);
  return &s;
}

void DecodeVolcanoJob(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  JobSpec& s = job.spec;
  s.queue = TakeQueueLabel(job.metadata);
  s.clean_pod_policy = "None";  // Volcano keeps a finished job's pods for their logs
  FieldView spec = doc.Object("spec");

  std::vector<FieldView> tasks = spec.ObjectList("tasks");
  if (tasks.empty()) {
    errors.Add(spec.PathOf("tasks"), "needs at least one task");
    return;
  }
  int64_t pods = 0;
  bool restart_on_failure = false;
  std::vector<JobRole> roles;
  std::vector<std::string> completing;  // tasks whose completion completes the job
  bool any_task_completes = false;      // a job-level CompleteJob on TaskCompleted
  for (size_t i = 0; i < tasks.size(); ++i) {
    const FieldView& task = tasks[i];
    int64_t replicas = task.Integer("replicas", 0);
    if (replicas < 1) errors.Add(task.PathOf("replicas"), "must be at least 1");
    if (replicas > kMaxPods || pods + replicas > kMaxPods) {
      errors.Add(task.PathOf("replicas"),
                 "the tasks make more than " + std::to_string(kMaxPods) + " pods");
      return;
    }
    pods += std::max<int64_t>(replicas, 0);
    if (task.Has("minAvailable") && task.Integer("minAvailable", 0) != replicas) {
      errors.Add(task.PathOf("minAvailable"),
                 "strata places whole gangs: must equal the task's replicas (" +
                     std::to_string(replicas) + ") or be left out");
    }
    JobRole role;
    role.name = task.String("name", "default" + std::to_string(i));
    role.replicas = replicas;
    for (const FieldView& policy : task.ObjectList("policies")) {
      PolicyEffect effect = ReadPolicy(policy, errors);
      restart_on_failure |= effect == PolicyEffect::kRestartOnFailure;
      if (effect == PolicyEffect::kCompleteOnTask) completing.push_back(role.name);
    }
    FieldView depends_on = task.Object("dependsOn");
    std::vector<std::string> names = depends_on.StringList("name");
    if (depends_on.String("iteration", "all") == "any" && names.size() > 1) {
      errors.Add(depends_on.PathOf("iteration"),
                 "any of several tasks is not supported by strata: a role waits for every role "
                 "it depends on; give all");
    }
    for (const std::string& name : names) role.depends_on.push_back({name, "Ready"});
    roles.push_back(std::move(role));
  }
  for (const FieldView& policy : spec.ObjectList("policies")) {
    PolicyEffect effect = ReadPolicy(policy, errors);
    restart_on_failure |= effect == PolicyEffect::kRestartOnFailure;
    any_task_completes |= effect == PolicyEffect::kCompleteOnTask;
  }
  for (const char* field : {"minAvailable", "minSuccess"}) {
    if (spec.Has(field) && spec.Integer(field, 0) != pods) {
      errors.Add(spec.PathOf(field), std::string(field == std::string_view("minAvailable")
                                                     ? "strata places whole gangs"
                                                     : "a strata job succeeds when every pod "
                                                       "of its success tasks succeeds") +
                                         ": must equal the total replicas (" +
                                         std::to_string(pods) + ") or be left out");
    }
  }
  if (spec.Has("schedulerName") && spec.String("schedulerName") != kVolcanoSchedulerName) {
    errors.Add(spec.PathOf("schedulerName"),
               "strata is the scheduler: give volcano or leave it out, got " +
                   Quoted(spec.String("schedulerName")));
  }
  FieldView plugins = spec.Object("plugins");
  if (plugins.Has("svc")) {
    errors.Warn(plugins.PathOf("svc"),
                "accepted: strata writes no /etc/volcano host files and sets no VC_<TASK>_HOSTS; "
                "every pod finds rank 0 at MASTER_ADDR and MASTER_PORT");
  }
  if (spec.Has("queue")) {
    std::string queue = spec.String("queue");
    if (queue == kVolcanoDefaultQueue) queue.clear();
    if (!s.queue.empty() && !queue.empty() && s.queue != queue) {
      errors.Add(spec.PathOf("queue"), "contradicts the kueue.x-k8s.io/queue-name label");
    }
    if (s.queue.empty()) s.queue = queue;
  }
  if (!errors.empty()) return;

  JobSpec first_template;  // what the tasks must share: tolerations, topology, priority
  std::string first_path;
  bool on_failure = false;
  for (size_t i = 0; i < tasks.size(); ++i) {
    FieldView pod_template = tasks[i].Object("template");
    FieldView pod_spec = pod_template.Object("spec");
    std::string restart = pod_spec.String("restartPolicy", "Always");
    if (restart == "Always") {
      errors.Add(pod_spec.PathOf("restartPolicy"),
                 "Always restarts pods for ever and the job never completes: strata runs a job's "
                 "pods to completion; use Never or OnFailure");
    }
    on_failure |= restart == "OnFailure";
    if (spec.Has("priorityClassName") && pod_spec.Has("priorityClassName")) {
      errors.Add(pod_spec.PathOf("priorityClassName"),
                 "give the job's priority once, in spec.priorityClassName");
    }
    JobSpec decoded;
    DecodeGangPodTemplate(pod_template, decoded, errors);
    roles[i].resources = decoded.resources;
    roles[i].template_ = decoded.template_;
    roles[i].node_selector = decoded.node_selector;
    if (i == 0) {
      first_template = std::move(decoded);
      first_path = pod_spec.path();
      continue;
    }
    const std::string why = ": strata places a job's tasks as one gang";
    if (decoded.tolerations != first_template.tolerations) {
      errors.Add(pod_spec.PathOf("tolerations"), "must equal " + first_path + ".tolerations" + why);
    }
    if (decoded.topology != first_template.topology) {
      errors.Add(
          pod_template.Object("metadata").PathOf("annotations"),
          "Kueue's topology annotations must equal those of the first task's template" + why);
    }
    if (decoded.priority != first_template.priority) {
      errors.Add(pod_spec.PathOf("priorityClassName"),
                 "must equal " + first_path + ".priorityClassName" + why);
    }
  }
  s.tolerations = first_template.tolerations;
  s.topology = first_template.topology;
  s.priority = first_template.priority;
  if (spec.Has("priorityClassName")) {
    s.priority =
        PriorityForClass(spec.String("priorityClassName"), spec.PathOf("priorityClassName"), errors)
            .value_or(0);
  }
  if (any_task_completes) {
    s.success_policy.op = "Any";  // any task completing completes the job
  } else if (!completing.empty()) {
    s.success_policy = {"Any", completing};
  }
  if (roles.size() == 1 && roles.front().depends_on.empty()) {
    JobRole& only = roles.front();
    s.replicas = only.replicas;
    s.resources = std::move(only.resources);
    s.template_ = std::move(only.template_);
    s.node_selector = std::move(only.node_selector);
    s.success_policy = {};  // with one task, the task completing is every pod succeeding
  } else {
    s.roles = std::move(roles);
  }
  ValidateJobRoles(s, {spec.PathOf("tasks"), "dependsOn", "name", spec.PathOf("policies")}, errors);
  restart_on_failure |= on_failure;
  s.max_restarts = restart_on_failure ? spec.Integer("maxRetry", 3) : 0;
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
