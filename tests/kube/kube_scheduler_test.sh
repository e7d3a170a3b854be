#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `strata up --kubernetes` as the scheduler of a real control plane (tools/kube/cluster.sh, with
# the real kube-scheduler beside it), checked with kubectl as a user would:
#  - the seed's walkthrough: 1 control-plane-tainted node and 3 GPU-less nodes; the GPU probe
#    pod's PodScheduled condition and FailedScheduling event, in `kubectl describe pod`,
#    against what kube-scheduler writes for the same pod on the same cluster;
#  - binding through pods/binding with a Scheduled event, counting a pod bound by someone else;
#  - a Kueue pod group placed whole or not at all: held while incomplete, none bound while it
#    does not fit, all bound once it does; a half-bound one completed or released;
#  - a Kubernetes PodGroup (the Workload API, GenericWorkload): its pods wait for it to exist and
#    for minCount of them; minCount placed whole or none, the rest after; its
#    PodGroupInitiallyScheduled condition as kube-scheduler writes it for its own group;
#  - a Volcano PodGroup (its CRD, not Volcano): minMember of its pods placed whole, the rest
#    after; a pod naming one that does not exist waits;
#  - a JobSet's replicated job (its Jobs made by hand as JobSet's controller makes them, their
#    pods by the real Job controller): none bound while one of its Jobs is missing, all at once;
#  - priority preemption through the Eviction API, stopped by a PodDisruptionBudget;
#  - Kueue's ClusterQueue quota enforced by strata (Kueue's CRDs installed, not its controller):
#    a pod beyond quota waits saying so, one naming a missing LocalQueue or
#    WorkloadPriorityClass too, and when quota frees the higher WorkloadPriorityClass goes first;
#    a batch/v1 Job naming the LocalQueue (Kueue's Job integration) is admitted as one workload
#    of its parallel pods, and waits whole when the quota has room for only some of them;
#  - two strata schedulers on one Lease: the leader killed with SIGKILL, the other takes over and
#    binds, and no pod is bound twice.
# Skips (exit 77) only when tools/kube/build.sh has not built the binaries.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=checks.sh
source "$repo/tests/kube/checks.sh"
require_kube_binaries etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok
[[ -d $KUBE_KUEUE_DIR/crds ]] || { echo "SKIP: Kueue's CRDs are not in $KUBE_KUEUE_DIR"; exit 77; }
[[ -d $KUBE_VOLCANO_DIR/crds ]] || { echo "SKIP: Volcano's CRDs are not in $KUBE_VOLCANO_DIR"; exit 77; }

cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_scheduler_test.XXXXXX")
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  # What the schedulers said, when something failed.
  if ((status != 0 || failures != 0)); then
    for log in "$dir"/strata-*.log; do echo "--- $log"; tail -60 "$log"; done
  fi
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# GenericWorkload (beta, off by default in 1.37) serves scheduling.k8s.io/v1beta1 PodGroups and
# turns on kube-scheduler's gang scheduling.
kubeconfig=$("$cluster" up "$dir" --nodes 0 --with-kube-scheduler \
  --feature-gates GenericWorkload=true --runtime-config scheduling.k8s.io/v1beta1=true)
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }
# Kueue's quota kinds without Kueue's controller: strata enforces the ClusterQueues itself.
"$cluster" install-kueue-quota-crds "$dir"
# Volcano's PodGroup CRD without Volcano: strata reads minMember.
"$cluster" install-volcano-crds "$dir"

# node NAME GPUS [TAINT_KEY]: a kwok node registered as a kubelet would.
node() {
  local taints="[]"
  [[ -n ${3:-} ]] && taints="[{\"key\": \"$3\", \"effect\": \"NoSchedule\"}]"
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$1", "annotations": {"kwok.x-k8s.io/node": "fake"},
              "labels": {"kubernetes.io/hostname": "$1", "type": "kwok",
                         "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
 "spec": {"taints": $taints},
 "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "$2"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "$2"}}}
JSON
}
# pod NAME SCHEDULER GPUS [LABELS_JSON [ANNOTATIONS_JSON [NODE]]]
pod() {
  local node_name=""
  [[ -n ${6:-} ]] && node_name="\"nodeName\": \"$6\","
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "$1", "labels": ${4:-{\}}, "annotations": ${5:-{\}}},
 "spec": {"schedulerName": "$2", $node_name
          "containers": [{"name": "main", "image": "registry.example/probe:1",
                          "resources": {"limits": {"nvidia.com/gpu": "$3"}}}]}}
JSON
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [[ -n $(node_of "$1") ]]; }
scheduled_message() {
  k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
}
unschedulable() {
  [[ $(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}') == Unschedulable ]]
}
# event_says POD REASON TEXT: an event of POD with REASON carries TEXT.
event_says() {
  k get events --field-selector "involvedObject.name=$1,reason=$2" \
    -o jsonpath='{.items[*].message}' | grep -qF "$3"
}
gone() { ! k get pod "$1" >/dev/null 2>&1; }
explained_by_fit() { [[ $(scheduled_message "$1") == 0/* ]]; }
nodes_ready() {
  [[ $(k get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c True) == "$1" ]]
}

# ---- two strata schedulers on one Lease --------------------------------------------------------
for i in 1 2; do
  "$strata" up --kubernetes --kubeconfig "$kubeconfig" >"$dir/strata-$i.log" 2>&1 &
  pids+=($!)
  disown $!
done
wait_for 30 grep -q "leading" "$dir/strata-1.log" "$dir/strata-2.log" || true
check "one of two strata schedulers leads" \
  [ "$(cat "$dir/strata-1.log" "$dir/strata-2.log" | grep -c 'strata: leading')" = 1 ]

# ---- the seed's walkthrough, against kube-scheduler --------------------------------------------
node control-plane 8 node-role.kubernetes.io/control-plane
for i in 0 1 2; do node "cpu-$i" 0; done
wait_for 60 nodes_ready 4
pod probe-strata strata 1
pod probe-default default-scheduler 1
wait_for 30 unschedulable probe-strata
wait_for 30 unschedulable probe-default
strata_says=$(scheduled_message probe-strata)
kube_says=$(scheduled_message probe-default)
echo "strata:         $strata_says"
echo "kube-scheduler: $kube_says"
walkthrough='0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 3 Insufficient nvidia.com/gpu.'
check "strata explains the probe pod as the walkthrough reads" [ "$strata_says" = "$walkthrough" ]
# kube-scheduler v1.37 no longer names the taint, and adds its preemption verdict after the
# FitError; the node counts and reasons must agree.
check "kube-scheduler counts the same nodes for the same reasons" \
  [ "${kube_says%% preemption:*}" = "${walkthrough/taint \{node-role.kubernetes.io\/control-plane: \}/taint(s)}" ]
describe=$(k describe pod probe-strata)
check "kubectl describe shows the FailedScheduling event from strata" \
  grep -qE "Warning +FailedScheduling +.* strata +0/4 nodes are available" <<<"$describe"
k delete pod probe-strata probe-default --wait=false >/dev/null

# ---- binding, counting what others bound --------------------------------------------------------
node gpu-0 8
node gpu-1 8
wait_for 60 nodes_ready 6
pod prebound default-scheduler 8 '{}' '{}' gpu-0
pod big strata 8
wait_for 30 bound big
check "strata binds the 8-GPU pod on the free node (gpu-0 is full)" [ "$(node_of big)" = gpu-1 ]
check "a Scheduled event says where" \
  wait_for 10 event_says big Scheduled "Successfully assigned default/big to gpu-1"
pod small strata 1
wait_for 30 unschedulable small
check "with both GPU nodes full, a 1-GPU pod is explained" \
  [ "$(scheduled_message small)" = "0/6 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 5 Insufficient nvidia.com/gpu." ]
k delete pod small --wait=false >/dev/null

# ---- a gang: whole or not at all ---------------------------------------------------------------
k delete pod prebound --grace-period=0 --force >/dev/null 2>&1
group='{"kueue.x-k8s.io/pod-group-name": "g"}'
total='{"kueue.x-k8s.io/pod-group-total-count": "3"}'
pod g-0 strata 4 "$group" "$total"
pod g-1 strata 4 "$group" "$total"
wait_for 30 unschedulable g-1
check "an incomplete gang waits for its members" \
  grep -q "2 of its 3 pods exist" <<<"$(scheduled_message g-0)"
# Its owner may still be making the rest: strata says nothing for its first 5 s (second
# resolution on both timestamps, so at least 4 s apart).
quiet_s() {
  local created told
  created=$(date -d "$(k get pod "$1" -o jsonpath='{.metadata.creationTimestamp}')" +%s)
  told=$(date -d "$(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}')" +%s)
  echo $((told - created))
}
check "an incomplete gang is told why it waits only after 5 s" [ "$(quiet_s g-0)" -ge 4 ]
pod g-2 strata 4 "$group" "$total"
wait_for 30 explained_by_fit g-2
sleep 2
check "a gang that does not fit whole binds no member (12 GPUs asked, 8 free)" \
  [ -z "$(node_of g-0)$(node_of g-1)$(node_of g-2)" ]
k delete pod big --grace-period=0 --force >/dev/null 2>&1
wait_for 30 bound g-0 && wait_for 10 bound g-1 && wait_for 10 bound g-2 || true
check "once 16 GPUs are free the whole gang is bound" \
  [ -n "$(node_of g-0)" ] && [ -n "$(node_of g-1)" ] && [ -n "$(node_of g-2)" ]

# ---- a gang a dead leader left half bound: completed when the rest fits, else released --------
k delete pod g-0 g-1 g-2 --grace-period=0 --force >/dev/null 2>&1
wait_for 30 gone g-0
pod h-0 strata 4 '{"kueue.x-k8s.io/pod-group-name": "h"}' \
  '{"kueue.x-k8s.io/pod-group-total-count": "2"}' gpu-0
pod h-1 strata 4 '{"kueue.x-k8s.io/pod-group-name": "h"}' \
  '{"kueue.x-k8s.io/pod-group-total-count": "2"}'
wait_for 30 bound h-1 || true
check "the rest of a half-bound gang is bound when it fits" bound h-1
k delete pod h-0 h-1 --grace-period=0 --force >/dev/null 2>&1
wait_for 30 gone h-1
pod prebound-1 default-scheduler 8 '{}' '{}' gpu-1
pod j-0 strata 8 '{"kueue.x-k8s.io/pod-group-name": "j"}' \
  '{"kueue.x-k8s.io/pod-group-total-count": "2"}' gpu-0
pod j-1 strata 8 '{"kueue.x-k8s.io/pod-group-name": "j"}' \
  '{"kueue.x-k8s.io/pod-group-total-count": "2"}'
# j-0 was made bound (nodeName at creation): unbound, it can only be a new pod of the same name.
released() { ! gone j-0 && ! bound j-0; }
wait_for 30 released || true
check "a half-bound gang whose rest cannot fit is released: its bound member is made again, unbound" \
  released
check "and the released gang binds nothing" [ -z "$(node_of j-0)$(node_of j-1)" ]
k delete pod j-0 j-1 prebound-1 --grace-period=0 --force --ignore-not-found >/dev/null 2>&1

# ---- a Kubernetes PodGroup (the Workload API) ---------------------------------------------------
# group_pod NAME SCHEDULER GPUS GROUP: a pod of PodGroup GROUP (spec.schedulingGroup).
group_pod() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"schedulerName": "$2", "schedulingGroup": {"podGroupName": "$4"},
          "containers": [{"name": "main", "image": "registry.example/train:1",
                          "resources": {"limits": {"nvidia.com/gpu": "$3"}}}]}}
JSON
}
# pod_group NAME MINCOUNT: a gang PodGroup.
pod_group() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "$1"},
 "spec": {"schedulingPolicy": {"gang": {"minCount": $2}}}}
JSON
}
group_condition() {
  k get podgroup.v1beta1.scheduling.k8s.io "$1" \
    -o jsonpath='{.status.conditions[?(@.type=="PodGroupInitiallyScheduled")].status}/{.status.conditions[?(@.type=="PodGroupInitiallyScheduled")].reason}'
}
group_says() { [[ $(group_condition "$1") == "$2" ]]; }
group_pod pg-0 strata 6 pg
wait_for 30 unschedulable pg-0 || true
check "a pod of a PodGroup that does not exist waits for it, in kube-scheduler's words" \
  grep -qF 'waiting for pods'"'"'s pod group "pg" to appear' <<<"$(scheduled_message pg-0)"
pod_group pg 3
group_pod pg-1 strata 6 pg
wait_for 30 eval 'grep -q "2 of its 3 pods exist" <<<"$(scheduled_message pg-1)"' || true
check "with 2 of its minCount 3 pods, the group waits for the third" \
  grep -q "2 of its 3 pods exist" <<<"$(scheduled_message pg-1)"
group_pod pg-2 strata 6 pg
wait_for 30 explained_by_fit pg-2 || true
check "minCount 3 of 6 GPUs (16 free) does not fit: none is bound" \
  [ -z "$(node_of pg-0)$(node_of pg-1)$(node_of pg-2)" ]
check "and the PodGroup says so, as kube-scheduler writes it" \
  wait_for 20 group_says pg False/Unschedulable
k patch podgroup.v1beta1.scheduling.k8s.io pg --type merge \
  -p '{"spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}' >/dev/null
wait_for 30 eval '[ "$(k get pods pg-0 pg-1 pg-2 -o jsonpath="{.items[*].spec.nodeName}" | wc -w)" = 2 ]' || true
check "minCount lowered to 2: two of its pods are bound together, on the two nodes" \
  [ "$(k get pods pg-0 pg-1 pg-2 -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' | sort -u | wc -l)" = 2 ]
check "the PodGroup is InitiallyScheduled" wait_for 20 group_says pg True/Scheduled
check "the third, beyond minCount, waits alone (4 GPUs free) without releasing the two" \
  [ "$(k get pods pg-0 pg-1 pg-2 -o jsonpath='{.items[*].spec.nodeName}' | wc -w)" = 2 ]
k delete pod pg-0 pg-1 pg-2 --grace-period=0 --force >/dev/null 2>&1
pod_group pg-kube 2
group_pod pgk-0 default-scheduler 1 pg-kube
group_pod pgk-1 default-scheduler 1 pg-kube
wait_for 30 bound pgk-1 || true
check "kube-scheduler writes the same condition on the group it placed" \
  wait_for 20 group_says pg-kube True/Scheduled
k delete pod pgk-0 pgk-1 --grace-period=0 --force >/dev/null 2>&1

# ---- a Volcano PodGroup's minMember -------------------------------------------------------------
volcano='{"scheduling.k8s.io/group-name": "vg"}'
k create -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vg}
spec: {minMember: 2, queue: default}
YAML
pod vg-0 strata 6 '{}' "$volcano"
wait_for 30 unschedulable vg-0 || true
check "one pod of a Volcano PodGroup of minMember 2 waits for another" \
  grep -q "1 of its 2 pods exist" <<<"$(scheduled_message vg-0)"
pod vg-1 strata 6 '{}' "$volcano"
pod vg-2 strata 6 '{}' "$volcano"
wait_for 30 eval '[ "$(k get pods vg-0 vg-1 vg-2 -o jsonpath="{.items[*].spec.nodeName}" | wc -w)" = 2 ]' || true
check "minMember 2 of its 3 pods are bound together (3 x 6 GPUs do not fit 16)" \
  [ "$(k get pods vg-0 vg-1 vg-2 -o jsonpath='{.items[*].spec.nodeName}' | wc -w)" = 2 ]
pod vg-lost strata 1 '{}' '{"scheduling.k8s.io/group-name": "nope"}'
wait_for 30 unschedulable vg-lost || true
check "a pod naming a Volcano PodGroup that does not exist waits, saying so" \
  [ "$(scheduled_message vg-lost)" = "PodGroup default/nope (scheduling.volcano.sh) does not exist" ]
k delete pod vg-0 vg-1 vg-2 vg-lost --grace-period=0 --force >/dev/null 2>&1

# ---- a JobSet's replicated job: its Jobs' pods as one gang ----------------------------------------
# jobset_job INDEX: Job js-workers-INDEX of replicated job "workers" (2 Jobs) of JobSet js, as
# JobSet's controller makes it: 2 pods of 4 GPUs.
jobset_job() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "js-workers-$1",
              "labels": {"jobset.sigs.k8s.io/jobset-name": "js",
                         "jobset.sigs.k8s.io/replicatedjob-name": "workers"}},
 "spec": {"parallelism": 2, "completions": 2, "completionMode": "Indexed",
          "template": {"metadata": {"labels": {"jobset.sigs.k8s.io/jobset-name": "js",
                                               "jobset.sigs.k8s.io/replicatedjob-name": "workers"},
                                    "annotations": {"jobset.sigs.k8s.io/replicatedjob-replicas": "2",
                                                    "jobset.sigs.k8s.io/job-index": "$1"}},
                       "spec": {"schedulerName": "strata", "restartPolicy": "Never",
                                "containers": [{"name": "main", "image": "registry.example/train:1",
                                                "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}}}
JSON
}
jobset_pods() { k get pods -l jobset.sigs.k8s.io/jobset-name=js -o jsonpath='{.items[*].metadata.name}' | wc -w; }
jobset_bound() { k get pods -l jobset.sigs.k8s.io/jobset-name=js -o jsonpath='{.items[*].spec.nodeName}' | wc -w; }
jobset_job 0
wait_for 30 eval '[ "$(jobset_pods)" = 2 ]' || true
first=$(k get pods -l job-name=js-workers-0 -o jsonpath='{.items[0].metadata.name}')
wait_for 30 unschedulable "$first" || true
check "with one of its replicated job's two Jobs made, the JobSet's pods wait for the rest" \
  grep -q "2 of its 4 pods exist" <<<"$(scheduled_message "$first")"
jobset_job 1
wait_for 30 eval '[ "$(jobset_bound)" = 4 ]' || true
check "once both Jobs exist, their 4 pods of 4 GPUs are bound together" [ "$(jobset_bound)" = 4 ]
k delete job js-workers-0 js-workers-1 --cascade=foreground --wait=false >/dev/null
k delete pods -l jobset.sigs.k8s.io/jobset-name=js --grace-period=0 --force >/dev/null 2>&1
wait_for 30 eval '[ "$(jobset_pods)" = 0 ]' || true

# ---- preemption by priority, through the Eviction API, within a PodDisruptionBudget -----------
k create priorityclass low --value=10 >/dev/null
k create priorityclass high --value=1000 >/dev/null
# priority_pod NAME CLASS: 8 GPUs, labelled app=<CLASS>.
priority_pod() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "labels": {"app": "$2"}},
 "spec": {"schedulerName": "strata", "priorityClassName": "$2",
          "containers": [{"name": "main", "image": "registry.example/train:1",
                          "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}
JSON
}
priority_pod low-0 low
priority_pod low-1 low
wait_for 30 bound low-0 && wait_for 10 bound low-1 || true
k create pdb low --selector=app=low --min-available=1 >/dev/null
disruptions_allowed() { [[ $(k get pdb low -o jsonpath='{.status.disruptionsAllowed}') == "$1" ]]; }
wait_for 30 disruptions_allowed 1 || true
priority_pod high-0 high
wait_for 30 bound high-0 || true
check "a high-priority pod preempts a low-priority one and is bound" bound high-0
low_left=$(k get pods -l app=low -o name | wc -l)
check "exactly one low-priority pod was evicted" [ "$low_left" = 1 ]
wait_for 30 disruptions_allowed 0 || true
priority_pod high-1 high
sleep 12  # a cycle, and the 10 s retry of a pod still waiting
check "the disruption budget keeps the last low-priority pod" \
  [ "$(k get pods -l app=low -o name | wc -l)" = 1 ]
check "and the second high-priority pod waits" [ -z "$(node_of high-1)" ]
k delete pdb low >/dev/null
k delete pod -l 'app in (low,high)' --grace-period=0 --force >/dev/null 2>&1

# ---- Kueue's quotas, enforced by strata in place of Kueue's controller -------------------------
k create -f - >/dev/null <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: h100
          resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team-a, namespace: default}
spec: {clusterQueue: team-a}
YAML
queue='{"kueue.x-k8s.io/queue-name": "team-a"}'
pod q-0 strata 3 "$queue"
wait_for 30 bound q-0 || true
check "a pod within its ClusterQueue's quota is bound" bound q-0
pod q-1 strata 3 "$queue"
wait_for 30 unschedulable q-1 || true
check "a pod beyond the quota waits, the queue's use named (13 GPUs are free)" \
  grep -qF "queue team-a: 3/4 nvidia.com/gpu in use" <<<"$(scheduled_message q-1)"
queue_status() {
  [[ $(k get clusterqueue team-a -o jsonpath='{.status.pendingWorkloads} {.status.admittedWorkloads} {.status.flavorsUsage[0].resources[0].total} {.status.conditions[0].reason}') == "$1" ]]
}
check "the ClusterQueue's status shows 1 pending, 1 admitted, 3 GPUs in use, as Kueue writes it" \
  wait_for 20 queue_status "1 1 3 Ready"
pod q-lost strata 1 '{"kueue.x-k8s.io/queue-name": "nope"}'
wait_for 30 unschedulable q-lost || true
check "a pod naming a LocalQueue that does not exist waits, saying so" \
  [ "$(scheduled_message q-lost)" = "LocalQueue default/nope does not exist" ]
pod q-noclass strata 1 '{"kueue.x-k8s.io/queue-name": "team-a", "kueue.x-k8s.io/priority-class": "nope"}'
wait_for 30 unschedulable q-noclass || true
check "a pod naming a WorkloadPriorityClass that does not exist waits, saying so" \
  [ "$(scheduled_message q-noclass)" = "WorkloadPriorityClass nope does not exist" ]
k create -f - >/dev/null <<'YAML'
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: urgent}
value: 1000
description: ahead of the rest of the queue
YAML
pod q-2 strata 3 '{"kueue.x-k8s.io/queue-name": "team-a", "kueue.x-k8s.io/priority-class": "urgent"}'
wait_for 30 unschedulable q-2 || true
k delete pod q-0 --grace-period=0 --force >/dev/null 2>&1
wait_for 30 bound q-2 || true
check "once quota frees, the pod of the higher WorkloadPriorityClass goes first" bound q-2
check "and the older pod of the default class still waits" [ -z "$(node_of q-1)" ]
check "and the status follows: 1 pending, 1 admitted" wait_for 20 queue_status "1 1 3 Ready"
k delete pod q-1 q-2 q-lost q-noclass --grace-period=0 --force >/dev/null 2>&1

# Under churn a ClusterQueue's status is written at most once a second, with the newest figures,
# and the last figures are written even when nothing follows them.
cq_status_writes() {
  k get --raw /metrics | awk '/^apiserver_request_total[{]/ && /resource="clusterqueues"/ &&
    /subresource="status"/ && /verb="PATCH"/ {n += $NF} END {print n + 0}'
}
queue_bound() {
  k get pods -l kueue.x-k8s.io/queue-name=team-a -o jsonpath='{.items[*].spec.nodeName}' | wc -w
}
wait_for 20 queue_status "0 0 0 Ready" || true
writes_before=$(cq_status_writes)
churn_began=$(date +%s)
for i in $(seq 0 19); do pod "q-churn-$i" strata 0 "$queue"; done
wait_for 30 eval '[ "$(queue_bound)" = 20 ]' || true
check "20 pods of the queue, created one after another, are all admitted" [ "$(queue_bound)" = 20 ]
check "and the ClusterQueue's status ends with all 20 admitted" \
  wait_for 10 queue_status "0 20 0 Ready"
churn_seconds=$(($(date +%s) - churn_began + 1))
status_writes=$(($(cq_status_writes) - writes_before))
check "with at most one status write a second ($status_writes in ${churn_seconds} s, 20 admissions)" \
  [ "$status_writes" -le $((churn_seconds + 1)) ]
k delete pod -l kueue.x-k8s.io/queue-name=team-a --grace-period=0 --force >/dev/null 2>&1

# kueue_job NAME PODS GPUS [SUSPEND]: a batch/v1 Job naming LocalQueue team-a, PODS pods of GPUS
# GPUs that run for an hour (kwok's Job pods succeed after the delay their annotation gives);
# suspended, as Kueue's users make them, when SUSPEND is true.
kueue_job() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "batch/v1", "kind": "Job",
 "metadata": {"name": "$1", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
 "spec": {"parallelism": $2, "completions": $2, "suspend": ${4:-false},
          "template": {"metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "1h",
                                                    "pod-complete.stage.kwok.x-k8s.io/jitter-delay": "1h"}},
                       "spec": {"schedulerName": "strata", "restartPolicy": "Never",
                                "containers": [{"name": "main", "image": "registry.example/train:1",
                                                "resources": {"limits": {"nvidia.com/gpu": "$3"}}}]}}}}
JSON
}
job_bound() { k get pods -l "job-name=$1" -o jsonpath='{.items[*].spec.nodeName}' | wc -w; }
kueue_job kjob-a 2 2
wait_for 30 eval '[ "$(job_bound kjob-a)" = 2 ]' || true
check "a Job naming the LocalQueue is admitted whole: its 2 pods of 2 GPUs fill the quota of 4" \
  [ "$(job_bound kjob-a)" = 2 ]
check "and the ClusterQueue counts it as one admitted workload of 4 GPUs" \
  wait_for 20 queue_status "0 1 4 Ready"
kueue_job kjob-b 2 1
wait_for 30 eval '[ "$(k get pods -l job-name=kjob-b -o jsonpath="{.items[*].status.conditions[?(@.type==\"PodScheduled\")].reason}" | wc -w)" = 2 ]' || true
check "a second Job waits whole for quota (none of its pods bound, 12 GPUs free)" \
  [ "$(job_bound kjob-b)" = 0 ]
kueue_job kjob-c 2 1 true
sleep 3
check "a suspended Job, as Kueue's users make it, stays suspended while the quota is full" \
  [ "$(k get job kjob-c -o jsonpath='{.spec.suspend}')" = true ]
check "and the ClusterQueue shows both Jobs pending" wait_for 20 queue_status "2 1 4 Ready"
k delete job kjob-a kjob-b --cascade=foreground --wait=false >/dev/null
k delete pods -l 'job-name in (kjob-a,kjob-b)' --grace-period=0 --force >/dev/null 2>&1
wait_for 30 eval '[ "$(job_bound kjob-c)" = 2 ]' || true
check "once the quota frees, strata admits the suspended Job: unsuspended, its 2 pods bound" \
  [ "$(k get job kjob-c -o jsonpath='{.spec.suspend}')/$(job_bound kjob-c)" = false/2 ]
check "with Kueue's Started event on the Job" \
  wait_for 10 eval 'k get events --field-selector involvedObject.name=kjob-c,reason=Started -o jsonpath="{.items[*].message}" | grep -q "Admitted by clusterQueue team-a"'
k delete job kjob-c --cascade=foreground --wait=false >/dev/null
k delete pods -l job-name=kjob-c --grace-period=0 --force >/dev/null 2>&1

# ---- leader killed with SIGKILL: the standby takes over -----------------------------------------
holder=$(k get lease strata-scheduler -n kube-system -o jsonpath='{.spec.holderIdentity}')
leader=0
for i in 1 2; do grep -q "as $holder" "$dir/strata-$i.log" && leader=$i; done
check "the Lease names a running strata as holder" [ "$leader" != 0 ]
kill -9 "${pids[$((leader - 1))]}"
killed_at=$SECONDS
pod after-failover strata 2
wait_for 45 bound after-failover || true
check "the standby binds after the leader died (within the 15 s lease and a retry)" \
  bound after-failover
echo "took over and bound in $((SECONDS - killed_at)) s"
check "the pod was bound once" \
  [ "$(k get events --field-selector involvedObject.name=after-failover,reason=Scheduled -o name | wc -l)" = 1 ]

((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
