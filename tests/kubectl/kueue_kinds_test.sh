#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Kueue's kinds through stock kubectl (v1.37, built by tools/kube/build.sh) against a real
# `strata up` on a simulated cluster (issue 20: users' manifests and tools work unchanged):
#  - kubectl apply -f of Kueue's setup (a ResourceFlavor, a ClusterQueue with resourceGroups and
#    a cohort, a LocalQueue) creates them at kueue.x-k8s.io; re-applying is unchanged;
#  - kubectl api-resources lists them with Kueue's short names; kubectl get clusterqueues,
#    localqueues, resourceflavors shows Kueue's columns (-o wide too); -o yaml the Kueue document;
#  - kubectl apply -f and strata apply -f of the same setup store the same native Queue;
#  - a batch/v1 Job labelled kueue.x-k8s.io/queue-name is admitted through the LocalQueue: the
#    ClusterQueue's and the LocalQueue's admitted counts move (kubectl wait --for=jsonpath on
#    both), a Job over the quota is counted pending (kubectl get -w lq shows the row change);
#    kubectl get all lists the Job once, as job.batch;
#  - the Python client's CustomObjectsApi lists clusterqueues;
#  - kubectl delete removes the LocalQueue, the ClusterQueue and the flavor;
#  - the same setup at kueue.x-k8s.io/v1beta1 (cohort, not cohortName) applies, re-applies
#    unchanged, is served at both versions and stores the same native Queue;
#  - a WorkloadPriorityClass applied once (kubectl get wpc, Kueue's VALUE column) gives Jobs
#    applied later its value; a Job naming a missing class is refused; deleting the class leaves
#    the Jobs their priority; strata apply -f does the same;
#  - a Cohort with quota of its own is served (kubectl get cohorts); a ClusterQueue without GPU
#    quota in it borrows the cohort's 2 GPUs and no more.
# Skips (exit 77) only when kubectl or python3-kubernetes is not there.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=strata_for_kubectl.sh
source "$repo/tests/kubectl/strata_for_kubectl.sh"
start_strata_for_kubectl kueue_kinds_test 2x8:H100-80GB
# row ARGS...: the table kubectl get prints, without its header, columns joined by one space.
row() { k get "$@" --no-headers | tr -s ' ' | cut -d' ' -f1-5; }
header() { k get "$@" | head -1 | tr -s ' '; }

cat >"$dir/setup.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
      - name: memory
        nominalQuota: 36Gi
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: team-a
  name: user-queue
spec:
  clusterQueue: cluster-queue
YAML

check "kubectl apply -f of Kueue's setup" equals "$(k apply -f "$dir/setup.yaml")" \
  "$(printf '%s\n' "resourceflavor.kueue.x-k8s.io/default-flavor created" \
    "clusterqueue.kueue.x-k8s.io/cluster-queue created" \
    "localqueue.kueue.x-k8s.io/user-queue created")"
check "kubectl apply of the same setup is unchanged" equals "$(k apply -f "$dir/setup.yaml")" \
  "$(printf '%s\n' "resourceflavor.kueue.x-k8s.io/default-flavor unchanged" \
    "clusterqueue.kueue.x-k8s.io/cluster-queue unchanged" \
    "localqueue.kueue.x-k8s.io/user-queue unchanged")"
resources=$(k api-resources --api-group=kueue.x-k8s.io --no-headers | tr -s ' ')
check "kubectl api-resources: clusterqueues (cq)" has \
  "clusterqueues cq kueue.x-k8s.io/v1beta2 false ClusterQueue" "$resources"
check "kubectl api-resources: localqueues (lq)" has \
  "localqueues lq kueue.x-k8s.io/v1beta2 true LocalQueue" "$resources"
check "kubectl api-resources: resourceflavors (rf)" has \
  "resourceflavors flavor,flavors,rf kueue.x-k8s.io/v1beta2 false ResourceFlavor" "$resources"

check "kubectl get clusterqueues: Kueue's columns" equals "$(header clusterqueues)" \
  "NAME COHORT PENDING WORKLOADS AGE"
check "kubectl get cq -o wide: the strategy and admitted workloads too" equals \
  "$(header cq -o wide)" "NAME COHORT STRATEGY PENDING WORKLOADS ADMITTED WORKLOADS AGE"
check "kubectl get cq: its row" has "cluster-queue research 0 " "$(row cq)"
check "kubectl get localqueues: Kueue's columns" equals "$(header localqueues -n team-a)" \
  "NAME CLUSTERQUEUE PENDING WORKLOADS ADMITTED WORKLOADS AGE"
check "kubectl get lq: its row" has "user-queue cluster-queue 0 0" "$(row lq -n team-a)"
check "kubectl get rf: the flavor, with no warning of strata's own" equals "$(k get rf -o name 2>&1)" \
  "resourceflavor.kueue.x-k8s.io/default-flavor"
check "kubectl get clusterqueues,localqueues,resourceflavors" equals \
  "$(k get clusterqueues,localqueues,resourceflavors -A -o name)" \
  "$(printf '%s\n' clusterqueue.kueue.x-k8s.io/cluster-queue \
    localqueue.kueue.x-k8s.io/user-queue resourceflavor.kueue.x-k8s.io/default-flavor)"
yaml=$(k get cq cluster-queue -o yaml)
check "kubectl get -o yaml: the Kueue document" has "apiVersion: kueue.x-k8s.io/v1beta2" "$yaml"
check "kubectl get -o yaml: its quota as written" has "nominalQuota: 36Gi" "$yaml"
check "kubectl get -o yaml: condition Active" equals \
  "$(jp cq cluster-queue '{.status.conditions[0].type}={.status.conditions[0].status}')" \
  "Active=True"

native() { # the native Queue as strata.dev serves it, without what the server or kubectl set
  k get queues.strata.dev cluster-queue -o json | "$python" -c '
import json, sys
o = json.load(sys.stdin)
m = o["metadata"]
for f in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
    m.pop(f, None)
a = m.get("annotations", {})
a.pop("kubectl.kubernetes.io/last-applied-configuration", None)
a.pop("strata.dev/local-queues", None)
o.pop("status", None)
print(json.dumps(o, sort_keys=True, indent=1))
'
}
by_kubectl=$(native)
check "kubectl delete lq" equals "$(k delete lq user-queue -n team-a)" \
  "localqueue.kueue.x-k8s.io \"user-queue\" deleted from team-a namespace"
check "kubectl delete cq" equals "$(k delete cq cluster-queue)" \
  "clusterqueue.kueue.x-k8s.io \"cluster-queue\" deleted"
check "kubectl delete rf" equals "$(k delete rf default-flavor)" \
  "resourceflavor.kueue.x-k8s.io \"default-flavor\" deleted"
check "they are gone" equals "$(k get cq,lq,rf -A -o name)" ""
check "strata apply -f of the same setup" "$strata" apply -f "$dir/setup.yaml" --server "$STRATA_API"
same_native() {
  local by_strata
  by_strata=$(native)
  [[ $by_kubectl == "$by_strata" ]] || { diff <(echo "$by_kubectl") <(echo "$by_strata") | head; return 1; }
  has '"strata.dev/source"' "$by_strata" && has '"localQueues"' "$by_strata"
}
check "kubectl apply -f and strata apply -f store the same native Queue" same_native
check "the LocalQueue strata applied is served" equals "$(k get lq -n team-a -o name)" \
  localqueue.kueue.x-k8s.io/user-queue

# A batch/v1 Job submitted to the LocalQueue, as Kueue's users do: suspended until admitted.
job() { # NAME GPUS PARALLELISM: a Job of PARALLELISM pods that wait for $dir/release
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  parallelism: $3
  completions: $3
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: [sh, -c, "while [ ! -e $dir/release ]; do sleep 0.2; done"]
        resources:
          requests: {cpu: 1, memory: 200Mi}
          limits: {nvidia.com/gpu: $2}
YAML
}
job sample 1 1 >"$dir/sample.yaml"
check "kubectl apply -f of a Job labelled with the LocalQueue" equals \
  "$(k apply -f "$dir/sample.yaml")" "job.batch/sample created"
check "the ClusterQueue admits it" k wait --for=jsonpath='{.status.admittedWorkloads}'=1 \
  cq/cluster-queue --timeout=60s
lq_row() { [[ $(row lq -n team-a) == "$1"* ]]; }
check "kubectl wait --for=jsonpath on the LocalQueue" equals \
  "$(k wait --for=jsonpath='{.status.admittedWorkloads}'=1 lq/user-queue -n team-a --timeout=60s)" \
  "localqueue.kueue.x-k8s.io/user-queue condition met"
check "the LocalQueue counts it admitted" wait_for 30 lq_row "user-queue cluster-queue 0 1"
# kubectl get -w lq: the LocalQueue's row again as a Job over the quota makes it count one
# pending.
k get lq -n team-a -w --output-watch-events --no-headers >"$dir/watch.txt" 2>&1 &
watch_pid=$!
watched() { grep -q "$1" "$dir/watch.txt"; }
check "kubectl get -w lq: the current row" wait_for 30 watched "^ADDED *user-queue"
job big 8 2 >"$dir/big.yaml"
check "a Job over the quota" equals "$(k apply -f "$dir/big.yaml")" "job.batch/big created"
check "kubectl get -w lq: its row with the pending Job" wait_for 30 watched \
  "^MODIFIED *user-queue *cluster-queue *1 *1"
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
check "is counted pending by the ClusterQueue" k wait \
  --for=jsonpath='{.status.pendingWorkloads}'=1 cq/cluster-queue --timeout=60s
check "and by the LocalQueue" wait_for 30 lq_row "user-queue cluster-queue 1 1"
check "kubectl get all lists each Job once, as job.batch" equals \
  "$(k get all -n team-a -o name | grep -c '^job')" 2
check "kubectl get all: no strata.dev Job" lacks "job.strata.dev" "$(k get all -n team-a -o name)"
touch "$dir/release"
check "the admitted Job completes" equals \
  "$(k wait --for=condition=complete job/sample -n team-a --timeout=60s)" \
  "job.batch/sample condition met"
check "kubectl delete job big" equals "$(k delete job big -n team-a)" \
  "job.batch \"big\" deleted from team-a namespace"
check "the counts go back" k wait --for=jsonpath='{.status.pendingWorkloads}'=0 \
  cq/cluster-queue --timeout=60s
check "the LocalQueue's too" wait_for 30 lq_row "user-queue cluster-queue 0 0"

check "the Python client's CustomObjectsApi lists clusterqueues" equals "$("$python" -c '
import sys
from kubernetes import client
c = client.Configuration()
c.host = sys.argv[1]
c.api_key = {"authorization": sys.argv[2]}
c.api_key_prefix = {"authorization": "Bearer"}
api = client.CustomObjectsApi(client.ApiClient(c))
listed = api.list_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues")
local = api.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "team-a", "localqueues")
print(",".join([o["metadata"]["name"] for o in listed["items"] + local["items"]]))
' "$STRATA_API" "$STRATA_ADMIN_TOKEN")" "cluster-queue,user-queue"

check "kubectl delete lq" equals "$(k delete lq user-queue -n team-a)" \
  "localqueue.kueue.x-k8s.io \"user-queue\" deleted from team-a namespace"
check "it is gone" equals "$(k get lq -n team-a -o name)" ""
check "its ClusterQueue stays" equals "$(k get cq -o name)" "clusterqueue.kueue.x-k8s.io/cluster-queue"

# The same setup as Kueue's v1beta1 users write it (`cohort`, not `cohortName`): Kueue's CRDs
# serve both versions, so kubectl maps it, and it is the same native Queue.
k delete cq cluster-queue >/dev/null && k delete rf default-flavor >/dev/null
sed -e 's|kueue.x-k8s.io/v1beta2|kueue.x-k8s.io/v1beta1|' -e 's|cohortName:|cohort:|' \
  "$dir/setup.yaml" >"$dir/setup-v1beta1.yaml"
check "kubectl apply -f of a v1beta1 setup" equals "$(k apply -f "$dir/setup-v1beta1.yaml")" \
  "$(printf '%s\n' "resourceflavor.kueue.x-k8s.io/default-flavor created" \
    "clusterqueue.kueue.x-k8s.io/cluster-queue created" \
    "localqueue.kueue.x-k8s.io/user-queue created")"
check "kubectl apply of the same v1beta1 setup is unchanged" equals \
  "$(k apply -f "$dir/setup-v1beta1.yaml")" \
  "$(printf '%s\n' "resourceflavor.kueue.x-k8s.io/default-flavor unchanged" \
    "clusterqueue.kueue.x-k8s.io/cluster-queue unchanged" \
    "localqueue.kueue.x-k8s.io/user-queue unchanged")"
check "kubectl get at v1beta1: cohort" equals \
  "$(jp clusterqueues.v1beta1.kueue.x-k8s.io cluster-queue '{.apiVersion} {.spec.cohort}')" \
  "kueue.x-k8s.io/v1beta1 research"
check "kubectl get at v1beta2 (preferred): cohortName" equals \
  "$(jp cq cluster-queue '{.apiVersion} {.spec.cohortName}')" "kueue.x-k8s.io/v1beta2 research"
check "kubectl get lq at v1beta1" equals \
  "$(k get localqueues.v1beta1.kueue.x-k8s.io -n team-a -o name)" \
  localqueue.kueue.x-k8s.io/user-queue
check "v1beta1 and v1beta2 setups store the same native Queue" same_native
sed -i 's|cohort: research|cohort: other|' "$dir/setup-v1beta1.yaml"
check "kubectl apply of a changed v1beta1 file" equals \
  "$(k apply -f "$dir/setup-v1beta1.yaml" | grep clusterqueue)" \
  "clusterqueue.kueue.x-k8s.io/cluster-queue configured"
check "the change is served at v1beta2" equals "$(jp cq cluster-queue '{.spec.cohortName}')" other

# Kueue's WorkloadPriorityClass, applied once, and Jobs labelled with it applied later (Kueue's
# flow): stored, served with Kueue's VALUE column, and the class's value becomes the priority of
# the Jobs written after it, over their pods' own.
cat >"$dir/wpc.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: urgent
value: 10000
description: ahead of the rest
YAML
prio_job() { # NAME CLASS: a Job labelled with WorkloadPriorityClass CLASS
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: team-a
  labels: {kueue.x-k8s.io/priority-class: $2}
spec:
  template:
    spec:
      priorityClassName: sheddable
      restartPolicy: Never
      containers: [{name: main, image: busybox, command: [sh, -c, "exit 0"]}]
YAML
}
check "kubectl apply -f of a WorkloadPriorityClass" equals "$(k apply -f "$dir/wpc.yaml")" \
  "workloadpriorityclass.kueue.x-k8s.io/urgent created"
check "kubectl apply of it again is unchanged" equals "$(k apply -f "$dir/wpc.yaml")" \
  "workloadpriorityclass.kueue.x-k8s.io/urgent unchanged"
check "kubectl api-resources: workloadpriorityclasses (wpc)" has \
  "workloadpriorityclasses wpc kueue.x-k8s.io/v1beta2 false WorkloadPriorityClass" \
  "$(k api-resources --api-group=kueue.x-k8s.io --no-headers | tr -s ' ')"
check "kubectl get wpc: Kueue's columns" equals "$(header wpc)" "NAME VALUE AGE"
check "kubectl get workloadpriorityclasses: its row" has "urgent 10000 " \
  "$(row workloadpriorityclasses)"
check "kubectl get wpc -o yaml: value at the top, as Kueue's" has "value: 10000" \
  "$(k get wpc urgent -o yaml)"
prio_job later urgent >"$dir/later.yaml"
check "kubectl apply -f of a Job labelled with it, later" equals "$(k apply -f "$dir/later.yaml")" \
  "job.batch/later created"
check "the Job has the class's priority (not sheddable's)" equals \
  "$(jp jobs.strata.dev later -n team-a '{.spec.priority}')" 10000
prio_job orphan missing >"$dir/orphan.yaml"
check "a Job naming a class that does not exist is refused, naming it" fails_saying \
  'WorkloadPriorityClass "missing" does not exist' k apply -f "$dir/orphan.yaml"
check "kubectl delete wpc" equals "$(k delete wpc urgent)" \
  "workloadpriorityclass.kueue.x-k8s.io \"urgent\" deleted"
check "the Job keeps its priority" equals \
  "$(k label job later -n team-a seen=yes >/dev/null && jp jobs.strata.dev later -n team-a '{.spec.priority}')" \
  10000
check "strata apply -f of the class" "$strata" apply -f "$dir/wpc.yaml" --server "$STRATA_API"
check "kubectl get wpc: the class strata applied" has "urgent 10000 " "$(row wpc)"
prio_job second urgent >"$dir/second.yaml"
check "strata apply -f of a Job labelled with it" "$strata" apply -f "$dir/second.yaml" \
  --server "$STRATA_API"
check "it has the class's priority" equals \
  "$(jp jobs.strata.dev second -n team-a '{.spec.priority}')" 10000

# A Kueue Cohort with quota of its own (one level of Kueue's hierarchical cohorts): a
# ClusterQueue without GPU quota borrows the cohort's 2 GPUs, and no more.
cat >"$dir/cohort.yaml" <<YAML
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: shared-pool
spec:
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 8}
      - {name: memory, nominalQuota: 8Gi}
      - {name: nvidia.com/gpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: borrower
spec:
  cohortName: shared-pool
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 0}
      - {name: memory, nominalQuota: 0}
      - {name: nvidia.com/gpu, nominalQuota: 0}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: team-a
  name: borrower-queue
spec:
  clusterQueue: borrower
YAML
check "kubectl apply -f of a Cohort with quota and its ClusterQueue" equals \
  "$(k apply -f "$dir/cohort.yaml")" \
  "$(printf '%s\n' "cohort.kueue.x-k8s.io/shared-pool created" \
    "clusterqueue.kueue.x-k8s.io/borrower created" \
    "localqueue.kueue.x-k8s.io/borrower-queue created")"
check "kubectl apply of them again is unchanged" equals "$(k apply -f "$dir/cohort.yaml")" \
  "$(printf '%s\n' "cohort.kueue.x-k8s.io/shared-pool unchanged" \
    "clusterqueue.kueue.x-k8s.io/borrower unchanged" \
    "localqueue.kueue.x-k8s.io/borrower-queue unchanged")"
check "kubectl get cohorts" equals "$(k get cohorts -o name)" "cohort.kueue.x-k8s.io/shared-pool"
check "kubectl get cohorts: Kueue's columns" equals "$(header cohorts)" "NAME AGE"
check "the cohort is no ClusterQueue" lacks "shared-pool" "$(k get cq -o name)"
check "kubectl get cohort -o yaml: its quota as written" has "nominalQuota: 2" \
  "$(k get cohort shared-pool -o yaml)"
borrow_job() { # NAME GPUS: a Job in borrower-queue that waits for $dir/release-borrow
  job "$1" "$2" 1 | sed -e 's|user-queue|borrower-queue|' -e "s|$dir/release|$dir/release-borrow|"
}
borrow_job borrow-two 2 >"$dir/borrow-two.yaml"
borrow_job borrow-more 1 >"$dir/borrow-more.yaml"
check "a Job of 2 GPUs in the queue without GPU quota" equals \
  "$(k apply -f "$dir/borrow-two.yaml")" "job.batch/borrow-two created"
check "is admitted on the cohort's quota" k wait \
  --for=jsonpath='{.status.admittedWorkloads}'=1 cq/borrower --timeout=60s
check "a third GPU" equals "$(k apply -f "$dir/borrow-more.yaml")" "job.batch/borrow-more created"
check "waits: the cohort lends no more" k wait \
  --for=jsonpath='{.status.pendingWorkloads}'=1 cq/borrower --timeout=60s
check "while the first still runs" equals "$(jp cq borrower '{.status.admittedWorkloads}')" 1
touch "$dir/release-borrow"
check "once the first ends, the cohort lends to the next" k wait \
  --for=condition=complete job/borrow-more -n team-a --timeout=60s

[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
