// Kubernetes batch/v1: a Job whose pods all run at once (parallelism = completions) becomes a
// native Job, placed and restarted as one group; Indexed completion gives each pod its index
// in JOB_COMPLETION_INDEX, which every strata training pod carries. The rules that make a
// JobSpec one gang are shared with JobSet's child Jobs and Volcano's tasks (kube_common.h).
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kube_common.h"
#include "api/native_schema.h"
#include "api/resource_catalog.h"
#include "api/source_form.h"

namespace strata::api {
namespace {

using T = FieldType;

}  // namespace

const TypeSchema* BatchJobSpecSchema() {
  static const TypeSchema s{
      "JobSpec",
      "A Kubernetes batch Job; strata runs its pods as one group.",
      {{"parallelism", T::kNonNegativeInteger, "Pods that run at once (default 1)."},
       {"completions", T::kNonNegativeInteger,
        "Pods that must succeed; must equal parallelism (strata runs them as one group)."},
       {"completionMode",
        T::kEnum,
        "NonIndexed (default) or Indexed (each pod gets JOB_COMPLETION_INDEX).",
        nullptr,
        {"NonIndexed", "Indexed"}},
       {"backoffLimit", T::kNonNegativeInteger,
        "Whole-group restarts after a failure before the Job fails (becomes maxRestarts; "
        "Kubernetes' default 6)."},
       {"activeDeadlineSeconds", T::kNonNegativeInteger, "Becomes the job's runtimeLimit."},
       {"suspend", T::kBool,
        "true: wait for the queue's admission (Kueue's convention); needs the "
        "kueue.x-k8s.io/queue-name label."},
       {"template", T::kObject, "The pod template.", KubePodTemplateSchema, {}, true},
       {"podReplacementPolicy", T::kIgnored,
        "strata replaces a group's pods only once all of them stopped"},
       {"ttlSecondsAfterFinished", T::kUnsupported, "strata keeps finished jobs until deleted"},
       {"backoffLimitPerIndex", T::kUnsupported, "strata restarts the whole group"},
       {"maxFailedIndexes", T::kUnsupported, "strata restarts the whole group"},
       {"podFailurePolicy", T::kUnsupported, "strata restarts the whole group on any failure"},
       {"successPolicy", T::kUnsupported, "a strata job succeeds when every pod succeeds"},
       {"selector", T::kIgnored, "set by the server; strata tracks a job's pods itself"},
       {"manualSelector", T::kUnsupported, "strata tracks a job's pods itself"},
       {"managedBy", T::kUnsupported, "strata manages every job it admits"}}};
  return &s;
}

const TypeSchema* BatchJobSchema() {
  static const TypeSchema s =
      CompatDocument("Job", "batch/v1", "A Kubernetes batch Job.", BatchJobSpecSchema);
  return &s;
}

int64_t BatchJobParallelism(const FieldView& spec, FieldErrors& errors) {
  int64_t parallelism = spec.Integer("parallelism", 1);
  if (parallelism < 1) {
    errors.Add(spec.PathOf("parallelism"), "must be at least 1: strata has no paused Jobs");
  }
  ValidateCeiling(parallelism, kMaxJobReplicas, spec.PathOf("parallelism"), errors);
  if (spec.Has("completions") && spec.Integer("completions", 0) != parallelism) {
    errors.Add(spec.PathOf("completions"),
               "strata runs a Job's pods as one group that succeeds when all of them succeed: "
               "must equal parallelism (" +
                   std::to_string(parallelism) + ")");
  } else if (!spec.Has("completions") && parallelism > 1) {
    errors.Add(spec.PathOf("completions"),
               "required when parallelism is above 1: strata has no work-queue Jobs; set it to "
               "parallelism (" +
                   std::to_string(parallelism) + ")");
  }
  return parallelism;
}

void DecodeBatchJobLimits(const FieldView& spec, JobSpec& out, FieldErrors& errors) {
  out.max_restarts = spec.Integer("backoffLimit", 6);
  out.runtime_limit = ActiveDeadline(spec, errors);
}

void RequireQueueToSuspend(const FieldView& spec, std::string_view kind, const std::string& queue,
                           FieldErrors& errors) {
  if (spec.Bool("suspend", false) && queue.empty()) {
    errors.Add(spec.PathOf("suspend"),
               "strata holds a " + std::string(kind) +
                   " back only in a queue: add the kueue.x-k8s.io/queue-name label, or leave "
                   "suspend out");
  }
}

void DecodeGangPodTemplate(const FieldView& pod_template, JobSpec& out, FieldErrors& errors,
                           bool command_required, const HandSetRendezvous* rendezvous) {
  FieldView pod_spec = pod_template.Object("spec");
  for (const char* field : {"nodeName", "priority"}) {
    if (pod_spec.Has(field)) {
      errors.Add(pod_spec.PathOf(field), "set per job: strata places the job's pods together");
    }
  }
  KubeContainer container =
      FromSingleContainer(pod_spec, WorkloadClass::kTraining, errors, command_required,
                          /*node_selector_honoured=*/true, ProbeDefaults::kNone, rendezvous);
  out.resources = container.resources;
  out.node_selector = std::move(container.node_selector);
  out.template_ = std::move(container.process);
  out.tolerations = DecodeTolerations(pod_spec, "tolerations");
  out.topology = TemplateTopology(pod_template, errors);
  if (pod_spec.Has("priorityClassName")) {
    out.priority = PriorityForClass(pod_spec.String("priorityClassName"),
                                    pod_spec.PathOf("priorityClassName"), errors)
                       .value_or(0);
  }
}

namespace {

// DecodeGangPodTemplate, after Kubernetes' rule for a Job's pods: restartPolicy Never or
// OnFailure.
void DecodeBatchPodTemplate(const FieldView& pod_template, JobSpec& out, FieldErrors& errors) {
  FieldView pod_spec = pod_template.Object("spec");
  if (pod_spec.String("restartPolicy", "Always") == "Always") {
    errors.Add(pod_spec.PathOf("restartPolicy"),
               "a Job's pods need restartPolicy Never or OnFailure (Kubernetes' rule)");
  }
  DecodeGangPodTemplate(pod_template, out, errors);
}

}  // namespace

void DecodeBatchJob(const FieldView& doc, DecodedDocument& out) {
  FieldErrors& errors = out.errors;
  Job job;
  job.metadata = DecodeMetadata(doc.Object("metadata"), true, true, errors);
  job.spec.queue = TakeQueueLabel(job.metadata);
  FieldView spec = doc.Object("spec");
  JobSpec& s = job.spec;
  s.replicas = BatchJobParallelism(spec, errors);
  RequireQueueToSuspend(spec, "Job", s.queue, errors);
  DecodeBatchJobLimits(spec, s, errors);
  s.clean_pod_policy = "None";  // Kubernetes keeps a finished Job's pods for their logs
  DecodeBatchPodTemplate(spec.Object("template"), s, errors);
  // Kept so that /apis/batch/v1 serves the Job back as it was written (api/source_form.h).
  job.metadata.annotations[kSourceAnnotation] =
      SourceAnnotationValue(BatchJobType(), doc.Raw("spec"));
  out.objects.push_back(std::move(job));
}

}  // namespace strata::api
