// Volcano's batch.volcano.sh/v1alpha1 Job: tasks whose pods all come from one template become
// one native Job, a gang placed whole and restarted as a group. Volcano's own scheduling pieces
// (the PodGroup and Queue kinds) are in decode_volcano.cc.
#include <algorithm>

#include "api/compat_schema.h"
#include "api/decode_common.h"
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
      "(RestartJob on PodFailed or PodEvicted) and completes it when every pod succeeds "
      "(CompleteJob on TaskCompleted, for a job of one task).",
      {{"action", T::kString, "RestartJob, or CompleteJob on TaskCompleted.", nullptr, {}, true},
       {"event", T::kString, "PodFailed or PodEvicted (TaskCompleted for CompleteJob)."},
       {"events", T::kStringList, "Several events, each as in event."},
       {"exitCode", T::kUnsupported, "strata restarts the whole job on any failure"},
       {"timeout", T::kUnsupported, "strata restarts a job as soon as all of its pods stopped"}}};
  return &s;
}

const TypeSchema* TaskSchema() {
  static const TypeSchema s{
      "TaskSpec",
      "Pods from one template; every task of a job must share one pod template.",
      {{"name", T::kString, "The task's name."},
       {"replicas", T::kNonNegativeInteger, "Pods of the task."},
       {"minAvailable", T::kNonNegativeInteger,
        "strata places the whole job: must equal replicas, or be left out."},
       {"template", T::kObject, "The pod template.", KubePodTemplateSchema, {}, true},
       {"policies", T::kObjectList, "The task's lifecycle policies, as the job's.", PolicySchema},
       {"maxRetry", T::kUnsupported, "strata restarts the whole job: set spec.maxRetry"},
       {"topologyPolicy", T::kUnsupported, "strata places a pod's GPUs within one NVLink island"},
       {"dependsOn", T::kUnsupported, "strata starts all of a job's pods together"}}};
  return &s;
}

const TypeSchema* PluginsSchema() {
  static const TypeSchema s{
      "Plugins",
      "Volcano's job plugins, each with its arguments.",
      {{"env", T::kStringList,
        "Each pod's index in VK_TASK_INDEX and VC_TASK_INDEX: strata's pods carry both, equal to "
        "the pod's rank (GROUP_RANK)."},
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
        "strata sets torchrun's environment, not TF_CONFIG (a Job with ps and worker templates "
        "has no home in strata yet)"},
       {"mpi", T::kUnsupported,
        "strata starts torch-style process groups, not MPI launchers over ssh"}}};
  return &s;
}

const TypeSchema* VolcanoJobSpecSchema() {
  static const TypeSchema s{
      "JobSpec",
      "A Volcano Job whose tasks share one pod template; strata runs its pods as one gang.",
      {{"tasks", T::kObjectList, "The tasks, all with one pod template.", TaskSchema, {}, true},
       {"minAvailable", T::kNonNegativeInteger,
        "strata places whole gangs: must equal the total replicas, or be left out."},
       {"minSuccess", T::kNonNegativeInteger,
        "a strata job succeeds when every pod succeeds: must equal the total replicas, or be "
        "left out."},
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

// Checks one lifecycle policy; returns whether it restarts the job on a pod failure.
bool ReadPolicy(const FieldView& policy, size_t tasks, FieldErrors& errors) {
  std::string action = policy.String("action");
  std::vector<std::string> events = policy.StringList("events");
  if (policy.Has("event")) events.insert(events.begin(), policy.String("event"));
  std::string events_path = policy.Has("event") ? policy.PathOf("event") : policy.PathOf("events");
  if (events.empty()) {
    errors.Add(policy.PathOf("event"), "required: the event the action answers");
    return false;
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
    return on_failure;
  }
  if (action == "CompleteJob" && events == std::vector<std::string>{"TaskCompleted"} &&
      tasks == 1) {
    return false;  // a job of one task completes when the task does, as strata's jobs do
  }
  std::string on;
  for (const std::string& event : events) on += (on.empty() ? "" : ", ") + event;
  errors.Add(policy.PathOf("action"),
             Quoted(action) + " on " + on +
                 " is not supported by strata: it restarts the whole job on PodFailed or "
                 "PodEvicted (RestartJob) and completes a job when every pod succeeds "
                 "(CompleteJob on TaskCompleted, for a job of one task)");
  return false;
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
  const FieldView& first = tasks.front();
  int64_t pods = 0;
  bool restart_on_failure = false;
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
    for (const FieldView& policy : task.ObjectList("policies")) {
      restart_on_failure |= ReadPolicy(policy, tasks.size(), errors);
    }
    if (i > 0 && task.Raw("template") != first.Raw("template")) {
      errors.Add(task.PathOf("template"), SeveralTemplatesMessage(first.PathOf("template")));
    }
  }
  for (const FieldView& policy : spec.ObjectList("policies")) {
    restart_on_failure |= ReadPolicy(policy, tasks.size(), errors);
  }
  for (const char* field : {"minAvailable", "minSuccess"}) {
    if (spec.Has(field) && spec.Integer(field, 0) != pods) {
      errors.Add(spec.PathOf(field), std::string(field == std::string_view("minAvailable")
                                                     ? "strata places whole gangs"
                                                     : "a strata job succeeds when every pod "
                                                       "succeeds") +
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
  if (plugins.Has("env") && tasks.size() > 1) {
    errors.Add(plugins.PathOf("env"),
               "VK_TASK_INDEX counts pods from 0 in each task, but strata numbers a job's pods "
               "across all of its tasks: give the job one task (tasks of one template merge into "
               "one, their replicas summed) or leave the env plugin out");
  }
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

  s.replicas = pods;
  FieldView pod_template = first.Object("template");
  FieldView pod_spec = pod_template.Object("spec");
  std::string restart = pod_spec.String("restartPolicy", "Always");
  if (restart == "Always") {
    errors.Add(pod_spec.PathOf("restartPolicy"),
               "Always restarts pods for ever and the job never completes: strata runs a job's "
               "pods to completion; use Never or OnFailure");
  }
  DecodeGangPodTemplate(pod_template, s, errors);
  if (spec.Has("priorityClassName")) {
    if (pod_spec.Has("priorityClassName")) {
      errors.Add(pod_spec.PathOf("priorityClassName"),
                 "give the job's priority once, in spec.priorityClassName");
    }
    s.priority =
        PriorityForClass(spec.String("priorityClassName"), spec.PathOf("priorityClassName"), errors)
            .value_or(0);
  }
  restart_on_failure |= restart == "OnFailure";
  s.max_restarts = restart_on_failure ? spec.Integer("maxRetry", 3) : 0;
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
