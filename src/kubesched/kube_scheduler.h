#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "kube/client.h"
#include "kube/reflector.h"
#include "kubesched/dynamic_resources.h"
#include "kubesched/kueue_quotas.h"
#include "kubesched/owner_jobs.h"
#include "kubesched/pod_groups.h"
#include "kubesched/pod_spec.h"
#include "kubesched/queue_status.h"
#include "kubesched/scheduling_reporter.h"
#include "scheduler/model.h"
#include "scheduler/scheduler.h"

namespace strata::kubesched {

struct KubeSchedulerOptions {
  // Pods whose spec.schedulerName is this are strata's to place.
  std::string scheduler_name = "strata";
  scheduler::SchedulerOptions scheduler;
  // Node label keys that are topology levels, outermost first (Kueue's Topology levels).
  std::vector<std::string> topology_levels = {"topology.strata.dev/block",
                                              "topology.strata.dev/rack"};
  // pods/binding and status requests in flight at once.
  int api_workers = 16;
  // A FailedScheduling event saying the same thing again within this interval is not
  // rewritten; after it, its count grows.
  Duration event_repeat_interval = std::chrono::minutes(1);
  // When more than `paced_explanations` pods wait, a pod already told why is told a new reason
  // (the condition and its FailedScheduling event) at most once per refresh interval: 10 s
  // (kube-scheduler's retries of a waiting pod back off to 10 s), or longer, so that these
  // rewrites average at most `explanation_rewrites_per_second`.
  size_t paced_explanations = 200;
  Duration explanation_refresh_interval = std::chrono::seconds(10);
  double explanation_rewrites_per_second = 50;
  // With nothing changed, a cycle still runs this often while pods wait.
  Duration idle_cycle_interval = std::chrono::seconds(10);
  // A pod group whose pods do not all exist yet waits without a word for this long from the
  // cycle that first saw it incomplete: its owner is still making them (a Job controller makes
  // a Job's pods within a second or two), as kube-scheduler's gang scheduling holds such pods
  // at PreEnqueue without a FailedScheduling event. After it, each member is told why it waits.
  // Under Job churn almost every gang is briefly incomplete, and telling each member at once
  // cost two API writes per pod for a third of the pods (measured, bench/kubernetes/RESULTS.md).
  Duration incomplete_group_quiet = std::chrono::seconds(5);
  // Enforce the quotas of Kueue's ClusterQueues (kueue.x-k8s.io/v1beta2) on the pods that name
  // a LocalQueue, when Kueue's CRDs are installed: strata in the place of Kueue's controller.
  bool kueue_quotas = true;
  // A ClusterQueue's status is written at most once per this interval, with the newest figures
  // when the interval is up; a change of its Active condition is written at once. Under churn
  // its figures change with every admission and completion (2.5 writes per Job, measured), and
  // each is a write for the API server and an event for every watcher of ClusterQueues.
  Duration queue_status_interval = std::chrono::seconds(1);
  // The DRA driver whose devices are GPUs (dynamic_resources.h), where DRA is served.
  std::string dra_gpu_driver = "gpu.nvidia.com";
};

// strata's scheduler for a Kubernetes cluster. Follows every Node and every non-terminal Pod
// through two reflectors (list, then watch; relist on 410), so that capacity held by pods any
// scheduler bound is counted, and places the pending pods whose schedulerName is its own with
// strata's Scheduler (scheduler/): topology levels from node labels, whole GPUs and HAMi
// shares (nvidia.com/gpumem, nvidia.com/gpucores), taints, selectors and node affinity,
// priority preemption: victims evicted through the Eviction API (their grace period; a
// PodDisruptionBudget that allows no disruption refuses it), cheapest lost work first.
//
// Jobs: the pods of a batch/v1 Job that names a Kueue LocalQueue are one workload, admitted and
// placed whole (its parallel pods: Kueue's batch/Job integration, with placement whole as well),
// and the pods of a JobSet's replicated job (its Jobs, by JobSet's labels) one gang. A suspended
// Job that names a LocalQueue is admitted as Kueue's controller admits it: unsuspended when its
// pods fit, their quota held for it until they are bound (owner_jobs.h).
//
// Gangs: pods of one Kubernetes PodGroup (spec.schedulingGroup.podGroupName: the Workload API of
// Kubernetes 1.36+; its gang policy's minCount and topology constraint, and its
// PodGroupInitiallyScheduled condition written as kube-scheduler writes it), one Kueue pod group
// (kueue.x-k8s.io/pod-group-name with pod-group-total-count), one LeaderWorkerSet group
// (group-key and size) or one Volcano PodGroup (scheduling.k8s.io/group-name; its minMember,
// or the members that exist where Volcano's CRD is not installed) are placed whole: none is
// bound until the snapshot places all of them (at least minCount of them, the rest one by one
// after). If a bind fails midway (another
// scheduler took the capacity), the members already bound are released — deleted, so their
// owner recreates them, or recreated unbound when nothing owns them — and the gang requeues.
// A gang found partly bound (a previous leader died mid-bind) is completed when its remaining
// members fit, and released otherwise.
//
// Dynamic Resource Allocation: where resource.k8s.io/v1 is served, the GPUs a DRA driver
// publishes in a node's ResourceSlices are that node's GPUs, and a pod's ResourceClaims are
// allocated from them when it is placed (dynamic_resources.h): the allocation and the pod's
// reservation are written into each claim's status before the pod is bound, as kube-scheduler
// writes them; a pod whose claims fit no node is told "cannot allocate all claims".
//
// Quotas: with Kueue's CRDs installed, three more reflectors follow ClusterQueues, LocalQueues
// and ResourceFlavors (kueue_quotas.h); a pod labelled kueue.x-k8s.io/queue-name is admitted
// only within its ClusterQueue's quota (cohort borrowing, lending limits, preemption, fair
// sharing as the embedded scheduler applies them), and one naming a LocalQueue that does not
// exist, or a ClusterQueue strata cannot enforce, waits with the reason on it. Each
// ClusterQueue's status (use per flavor, admitted and pending workloads, Active) is written as
// Kueue's controller would, when it changes.
//
// Binds go through pods/binding with the pod's uid as precondition, so a pod is never bound
// twice; explanations through SchedulingReporter, whose Scheduled events follow the binds
// without holding them up. Not thread-safe apart from Stop and stats: one thread calls Run.
class KubeScheduler {
 public:
  // `client` and `clock` must outlive the scheduler.
  KubeScheduler(kube::Client* client, const Clock& clock, KubeSchedulerOptions options = {});
  ~KubeScheduler();
  KubeScheduler(const KubeScheduler&) = delete;
  KubeScheduler& operator=(const KubeScheduler&) = delete;

  // Schedules until Stop, then returns OK.
  Status Run();
  // Makes Run return soon. Thread-safe.
  void Stop();

  struct Stats {
    uint64_t cycles = 0;
    uint64_t bound = 0;                // pods bound
    uint64_t bind_failures = 0;        // binds the API server refused
    uint64_t gangs_released = 0;       // gangs whose bound members were released
    uint64_t preempted = 0;            // victims evicted
    uint64_t preemptions_refused = 0;  // evictions a PodDisruptionBudget refused
  };
  Stats stats() const;

 private:
  // Names of the scheduler's workloads: one pod alone, or a gang.
  static constexpr const char* kPodWorkloadPrefix = "Pod/";
  static constexpr const char* kGangWorkloadPrefix = "PodGroup/";
  // A suspended Job waiting for admission, and the quota held for an admitted Job's pods.
  static constexpr const char* kJobWorkloadPrefix = "Job/";
  static constexpr const char* kReservationPrefix = "JobReservation/";
  // What a reflector follows.
  enum class Source {
    kNodes,
    kPods,
    kClusterQueues,
    kLocalQueues,
    kResourceFlavors,
    kWorkloadPriorityClasses,
    kPodGroups,
    kVolcanoPodGroups,
    kResourceSlices,
    kResourceClaims,
    kDeviceClasses,
    kJobs
  };
  struct Queued {
    Source source = Source::kNodes;
    kube::Delta delta;
    bool served = true;  // false: the API is not served (an empty list stands for it)
  };
  // One decided bind: the pod, its node and GPUs, and the gang it completes ("" alone).
  struct BindTask {
    std::string pod_key;
    std::string node;
    std::vector<int> gpus;
    std::string workload;
    Status result;
    bool dra = false;                      // its GPUs are DRA devices, held through its claims
    std::vector<ClaimWrite> claim_writes;  // written before the bind
  };

  static std::string_view SourceName(Source source);
  void Follow(kube::Reflector* reflector, Source source);
  void ApplyNodes(const kube::Delta& delta);
  void ApplyJobs(const kube::Delta& delta);
  // Kueue's kinds and the group objects: APIs that a cluster may not serve.
  void ApplyOptional(Source source, const kube::Delta& delta);
  std::map<std::string, nlohmann::json>& ObjectsOf(Source source);
  // The gang a pending or bound pod of strata's is placed in, as its group object (if any)
  // says: its key ("" when the pod is placed alone), least size and required topology; or why
  // it waits (its PodGroup does not exist or is broken).
  struct Gang {
    std::string key;
    int64_t size = 1;
    std::string required_topology;
    std::string why;
  };
  Gang GangOfPod(const PodSpec& pod) const;
  // Writes the PodGroupInitiallyScheduled condition of each Kubernetes PodGroup in `outcomes`
  // (by "namespace/name": placed, or the message of why it waits) where it changes; a group
  // already told why it waits is told a new reason at most once per `refresh` (zero: at once),
  // as pods are (SchedulingReporter).
  void WritePodGroupStatuses(const std::map<std::string, std::pair<bool, std::string>>& outcomes,
                             Duration refresh);
  // How the queues see a pod: the ClusterQueue it is charged to ("" when it names no
  // LocalQueue, or one it cannot be admitted through), its priority there (its
  // WorkloadPriorityClass's value when it names one, else spec.priority), and why it cannot be
  // admitted ("" when it can: a missing class first, then a missing or unusable queue).
  struct Admission {
    std::string queue;
    int priority = 0;
    std::string why;
    bool job_unseen = false;  // a Job's pod whose Job (which names its queue) is not seen yet
  };
  Admission AdmissionOf(const PodSpec& pod, const KueueQuotas& quotas) const;
  // Writes each ClusterQueue's status (queue_status.h) where it differs from what is stored:
  // at once when its Active condition changes or its last write is queue_status_interval old,
  // else held until then (FlushQueueStatuses).
  void WriteQueueStatuses(const KueueQuotas& quotas, std::map<std::string, QueueFigures> figures);
  // Writes the held statuses whose interval is up.
  void FlushQueueStatuses();
  void WriteQueueStatus(const std::string& name, nlohmann::json& object, nlohmann::json status);
  void ApplyPods(const kube::Delta& delta);
  void SetPod(const std::string& key, const nlohmann::json& object);
  void ErasePod(const std::string& key);
  void Cycle();
  void BindAll(std::vector<BindTask>& tasks);
  // Unsuspends the suspended Jobs a cycle admitted (by "namespace/name": the flavor and the
  // ClusterQueue), marking each with the flavor, and says so in an event on it.
  void AdmitJobs(const std::map<std::string, std::pair<std::string, std::string>>& admitted);
  // Writes a task's claims (the finalizer, then the status); what the API server stored goes to
  // `stored`, by "namespace/name".
  Status WriteClaims(const BindTask& task,
                     std::vector<std::pair<std::string, nlohmann::json>>* stored);
  void Release(const std::vector<std::string>& pod_keys);

  kube::Client* const client_;
  const Clock& clock_;
  const KubeSchedulerOptions options_;
  scheduler::Scheduler scheduler_;
  SchedulingReporter reporter_;
  std::unique_ptr<kube::Reflector> node_reflector_;
  std::unique_ptr<kube::Reflector> pod_reflector_;
  // Kueue's kinds and the group objects, whose APIs may not be served.
  std::vector<std::pair<Source, std::unique_ptr<kube::Reflector>>> optional_reflectors_;

  // Filled by the reflectors' threads, drained by Run.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;  // guarded by mutex_
  bool stopped_ = false;      // guarded by mutex_

  // Run's thread only.
  std::map<std::string, scheduler::Node> nodes_;  // by name
  std::map<std::string, PodSpec> pods_;           // by "namespace/name"
  std::map<std::string, std::string> invalid_;    // pods that do not convert: the error
  std::map<std::string, std::vector<int>> gpus_;  // GPUs strata chose for the pods it bound
  KueueObjects kueue_;
  std::optional<KueueQuotas> quotas_;  // made of kueue_; reset when what it is made of changes
  // ClusterQueue statuses by name: when each was last written, and the newest one held back.
  std::map<std::string, TimePoint> queue_status_written_;
  std::map<std::string, nlohmann::json> queue_status_held_;
  // Group objects by "namespace/name", as the API returned them.
  std::map<std::string, nlohmann::json> pod_groups_, volcano_pod_groups_;
  std::map<std::string, TimePoint> groups_told_;       // when a PodGroup was last told why it waits
  std::map<std::string, TimePoint> incomplete_since_;  // gang -> first cycle that saw it short
  bool volcano_served_ = false;                        // Volcano's PodGroup CRD is installed
  std::map<std::string, JobSpec> jobs_;                // batch/v1 Jobs by "namespace/name"
  DraObjects dra_objects_;
  std::optional<DraCluster> dra_;     // made of dra_objects_; reset when they change
  std::set<Source> optional_listed_;  // optional reflectors that delivered a list (or no API)
  std::set<std::string> nominated_;   // workloads whose victims are being evicted
  // Released pods that nothing owns, made again unbound once their deletion is seen. Kept in
  // memory only: a crash between the delete and the create loses such a pod.
  std::mutex recreate_mutex_;
  std::map<std::string, nlohmann::json> recreate_;  // guarded by recreate_mutex_
  bool nodes_synced_ = false, pods_synced_ = false;
  bool dirty_ = false;
  bool waiting_ = false;  // the last cycle left pods pending
  TimePoint next_idle_cycle_{};

  std::atomic<uint64_t> cycles_{0}, bound_{0}, bind_failures_{0}, gangs_released_{0}, preempted_{0},
      preemptions_refused_{0};
};

}  // namespace strata::kubesched
