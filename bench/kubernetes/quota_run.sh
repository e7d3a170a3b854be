#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Kueue's ClusterQueue quotas, enforced by strata alone against Kueue + kube-scheduler, on the same
# real control plane (tools/kube/cluster.sh: etcd, kube-apiserver, kube-controller-manager,
# kwok), one fresh cluster per system:
#   NODES kwok nodes x GPUS GPUs; ClusterQueues a and b in cohort "bench" (flavor h100, quotas in
#   cpu, memory and nvidia.com/gpu; GPU nominal NOMINAL_A and NOMINAL_B, b lends at most
#   LENDING_B), a LocalQueue each; PODS pods of 1 GPU labelled kueue.x-k8s.io/queue-name, PODS_B
#   of them for b, the rest for a. The pods are created first, while the queues do not exist
#   (Kueue's webhook gates them and its controller makes their Workloads; strata sees them wait
#   for their LocalQueue); the start is the creation of the queues. b asks for less than its
#   guaranteed share (NOMINAL_B - LENDING_B), so exactly one outcome is right: b gets PODS_B,
#   a gets NOMINAL_A + LENDING_B (its nominal plus what b may lend), the rest wait.
#   Measured, from a watch of the namespace's pods (pod_load bound-log):
#   - fill: seconds from the start until every admissible pod is bound;
#   - GPUs bound per queue at the end (after SETTLE more seconds), against the expected;
#   - over: the most GPUs a queue ever held beyond its nominal quota plus what the other queue
#     could lend it at that moment (pods being deleted still count): must be 0;
#   - refill: the bound pods of a deleted at once (one DeleteCollection, grace period 0), then
#     seconds until a's waiting pods are bound in their place;
#   - CPU seconds (utime + stime from /proc) of the deciding processes, strata or kube-scheduler
#     + Kueue's manager, from the start to the end of the refill, and since they started.
#   strata runs as in run.sh (`strata up --kubernetes`, API client QPS/burst 5000), with Kueue's
#   CRDs installed and no Kueue controller; kube-scheduler with QPS/burst 5000 as in run.sh,
#   Kueue's manager as tools/kube/lib/kueue.sh configures it (QPS 500, burst 1000).
#
#   bench/kubernetes/quota_run.sh [--nodes 50] [--gpus-per-node 8] [--pods 600] [--pods-b 40]
#       [--nominal-a 160] [--nominal-b 80] [--lending-b 20] [--systems "kueue strata"]
#       [--timeout 300] [--settle 10] [--build build/release] [--keep-logs DIR] [--contested]
# --contested lets b ask for more than its guaranteed share: then the queues contend for the
# same lendable GPUs, no single outcome is right, and "fill" waits for each queue at its
# nominal quota (which neither system promises without reclaimWithinCohort); what each
# system binds per queue is the figure.
# --keep-logs copies each system's watch log (DIR/SYSTEM.bound.log) and component logs there.
# Prints one JSON line per system and a table; figures go into bench/kubernetes/RESULTS.md.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=deciders.sh
source "$repo/bench/kubernetes/deciders.sh"
nodes=50 gpus=8 pods=600 pods_b=40 nominal_a=160 nominal_b=80 lending_b=20
systems="kueue strata" timeout=300 settle=10 build=$repo/build/release keep_logs="" contested=0
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --gpus-per-node) gpus=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --pods-b) pods_b=$2; shift 2 ;;
    --nominal-a) nominal_a=$2; shift 2 ;;
    --nominal-b) nominal_b=$2; shift 2 ;;
    --lending-b) lending_b=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --settle) settle=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep-logs) keep_logs=$2; shift 2 ;;
    --contested) contested=1; shift ;;
    *) echo "quota_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
die() { echo "quota_run.sh: $*" >&2; exit 2; }
pods_a=$((pods - pods_b))
expect_a=$((nominal_a + lending_b)) expect_b=$pods_b
((lending_b <= nominal_b)) || die "--lending-b exceeds b's nominal quota"
if ((contested)); then
  expect_a=$nominal_a expect_b=$nominal_b
  ((pods_b > nominal_b)) || die "--contested: b's $pods_b pods must be more than its quota"
else
  ((pods_b <= nominal_b - lending_b)) ||
    die "b's $pods_b pods must fit its guaranteed $((nominal_b - lending_b)) GPUs (one right outcome)"
fi
((pods_a > expect_a)) || die "a's $pods_a pods must be more than its quota admits ($expect_a)"
((nominal_a + nominal_b < nodes * gpus)) || die "the quotas must be below the cluster's GPUs"
strata=$build/bin/strata
load=$build/bench/kubernetes/pod_load
for binary in "$strata" "$load"; do
  [[ -x $binary ]] || die "$binary is not built (make build)"
done
cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_quota.XXXXXX")
strata_pid="" logger=""
cleanup() {
  for pid in $strata_pid $logger; do kill -9 "$pid" 2>/dev/null || true; done
  "$cluster" down "$dir/cluster" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { echo "scale=2; ($2 - $1) / 1" | bc; }

# cluster_queue NAME GPU_QUOTA_FIELDS: a ClusterQueue of the cohort "bench" in flavor h100, and
# its LocalQueue in the namespace bench.
cluster_queue() {
  cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $1}
spec:
  cohortName: bench
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "1000"}
      - {name: memory, nominalQuota: 4000Gi}
      - {name: nvidia.com/gpu, $2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: $1, namespace: bench}
spec: {clusterQueue: $1}
EOF
}

queues() {
  cat <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
EOF
  cluster_queue a "nominalQuota: \"$nominal_a\""
  cluster_queue b "nominalQuota: \"$nominal_b\", lendingLimit: \"$lending_b\""
}

# last_state: the log's last line, or an empty state.
last_state() {
  tail -n 1 "$dir/bound.log" 2>/dev/null | grep . || echo '{"t": 0, "bound": {}, "held": {}, "ever": {}}'
}
# wait_state SECONDS JQ_FILTER: until the log's last line satisfies the filter; false on timeout.
wait_state() {
  local deadline=$((SECONDS + $1))
  until last_state | jq -e "$2" >/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
# first_time AFTER JQ_FILTER: the time of the log's first line after AFTER that satisfies it.
first_time() {
  jq -s --argjson after "$1" "[.[] | select(.t > \$after) | select($2) | .t][0] // null" \
    "$dir/bound.log"
}

results=()
declare -A deciders
for system in $systems; do
  echo "== $system: $nodes nodes x $gpus GPUs; queues a ($nominal_a GPUs) and b ($nominal_b," \
    "lends <= $lending_b) in one cohort; $pods_a + $pods_b pods of 1 GPU" >&2
  [[ $system == kueue || $system == strata ]] || die "unknown system $system (kueue, strata)"
  scheduler_name=$([[ $system == kueue ]] && echo default-scheduler || echo strata)
  # shellcheck disable=SC2046
  kubeconfig=$("$cluster" up "$dir/cluster" --nodes "$nodes" --gpus-per-node "$gpus" \
    --timeout 600 $(cluster_flags "$system"))
  k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }
  k create namespace bench >/dev/null
  until k get serviceaccount default -n bench >/dev/null 2>&1; do sleep 0.5; done
  start_quota_system "$system" "$dir/cluster" "$kubeconfig" "$strata" "$dir/strata.log"
  "$load" bound-log --kubeconfig "$kubeconfig" --namespace bench \
    --group-label kueue.x-k8s.io/queue-name >"$dir/bound.log" &
  logger=$!
  label=kueue.x-k8s.io/queue-name
  "$load" create --kubeconfig "$kubeconfig" --namespace bench --count "$pods_a" --prefix a \
    --label "$label=a" --scheduler "$scheduler_name" >&2 &
  creator=$!
  "$load" create --kubeconfig "$kubeconfig" --namespace bench --count "$pods_b" --prefix b \
    --label "$label=b" --scheduler "$scheduler_name" >&2
  wait "$creator"
  # Until the deciders have seen every pod: Kueue has made each one's Workload, strata has
  # told each one why it waits.
  waited=0
  case $system in
    kueue) seen() { k get workloads -n bench -o json | jq -e ".items | length == $pods" >/dev/null; } ;;
    strata) seen() {
      k get pods -n bench -o json | jq -e "[.items[] | select(any(.status.conditions[]?;
        .type == \"PodScheduled\" and .status == \"False\"))] | length == $pods" >/dev/null; } ;;
  esac
  until seen; do
    ((waited++ < 300)) || die "$system did not see the $pods pods within 150 s"
    sleep 0.5
  done
  cpu_before=$(deciders_cpu)
  start=$(now)
  queues | k create -f - >/dev/null
  filled=$(jq -n "{a: $expect_a, b: $expect_b}")
  full=".bound.a == $expect_a and .bound.b == $expect_b"
  if wait_state "$timeout" "$full"; then
    fill_s=$(elapsed "$start" "$(first_time "$start" "$full")")
  else
    fill_s=null
    echo "quota_run.sh: $system did not bind the admissible pods within $timeout s" >&2
  fi
  sleep "$settle"
  after_fill=$(last_state)

  # The refill: a's bound pods deleted at once; done when a is back at its quota with as many
  # pods newly bound as were deleted.
  ever_a=$(jq '.ever.a // 0' <<<"$after_fill")
  deleted=$(jq '.bound.a // 0' <<<"$after_fill")
  refill_start=$(now)
  k delete --raw "/api/v1/namespaces/bench/pods?labelSelector=$label%3Da&fieldSelector=spec.nodeName%21%3D&gracePeriodSeconds=0" >/dev/null
  refilled=".bound.a == $expect_a and (.ever.a // 0) >= $ever_a + $deleted"
  if wait_state "$timeout" "$refilled"; then
    refill_s=$(elapsed "$refill_start" "$(first_time "$refill_start" "$refilled")")
  else
    refill_s=null
    echo "quota_run.sh: $system did not refill a's quota within $timeout s" >&2
  fi
  sleep "$settle"
  cpu_after=$(deciders_cpu)
  after_refill=$(last_state)
  kill "$logger" 2>/dev/null || true
  wait "$logger" 2>/dev/null || true
  logger=""
  # The most GPUs a queue held beyond its nominal quota plus what the other could lend it then
  # (a lends without limit, b at most LENDING_B).
  over=$(jq -s --argjson na "$nominal_a" --argjson nb "$nominal_b" --argjson lb "$lending_b" '
    def pos: if . < 0 then 0 else . end;
    def cap(n; other_n; other_use; lend): n + ([lend, other_n - other_use] | min | pos);
    [.[] | (.held.a // 0) as $a | (.held.b // 0) as $b |
      {a: ($a - cap($na; $nb; $b; $lb) | pos), b: ($b - cap($nb; $na; $a; 1e18) | pos),
       cohort: ($a + $b - $na - $nb | pos)}] |
    {a: (map(.a) | max // 0), b: (map(.b) | max // 0), cohort: (map(.cohort) | max // 0)}' \
    "$dir/bound.log")
  line=$(jq -nc --arg s "$system" --argjson nodes "$nodes" --argjson gpus "$gpus" \
    --argjson pods "$pods" --argjson expected "$filled" --argjson fill "$fill_s" \
    --argjson refill "$refill_s" --argjson after_fill "$after_fill" \
    --argjson after_refill "$after_refill" --argjson over "$over" --argjson deleted "$deleted" \
    --argjson cpu_before "$cpu_before" --argjson cpu_after "$cpu_after" '
    {system: $s, nodes: $nodes, gpus: ($nodes * $gpus), pods: $pods, expected: $expected,
     fill_s: $fill, bound_after_fill: $after_fill.bound, refill_deleted: $deleted,
     refill_s: $refill, bound_after_refill: $after_refill.bound, over: $over,
     cpu_s: (([$cpu_after[]] | add) - ([$cpu_before[]] | add)),
     cpu_s_since_start: ([$cpu_after[]] | add),
     cpu_s_by_process: ($cpu_after | with_entries(.key as $k | .value -= $cpu_before[$k]))}')
  echo "$line"
  results+=("$line")
  if [[ -n $strata_pid ]]; then
    kill "$strata_pid" 2>/dev/null || true
    wait "$strata_pid" 2>/dev/null || true
    strata_pid=""
  fi
  "$cluster" down "$dir/cluster" >/dev/null
  if [[ -n $keep_logs ]]; then
    mkdir -p "$keep_logs/$system"
    cp "$dir/bound.log" "$keep_logs/$system.bound.log"
    cp "$dir"/cluster/logs/*.log "$keep_logs/$system/"
    [[ $system != strata ]] || cp "$dir/strata.log" "$keep_logs/$system/"
  fi
  rm -rf "$dir/cluster" "$dir/bound.log"
done
printf '%s\n' "${results[@]}" | jq -rs '
  def r: if . == null then "-" else . * 100 | round / 100 end;
  def q: "a \(.a // 0), b \(.b // 0)";
  "| system | fill (s) | bound after fill (expected \(.[0].expected | q)) | most GPUs over quota | refill of \(.[0].refill_deleted) (s) | bound after refill | CPU s, start to end (by process; since start) |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  (.[] | "| \(.system) | \(.fill_s | r) | \(.bound_after_fill | q) | \(.over | "a \(.a), b \(.b), cohort \(.cohort)") | \(.refill_s | r) | \(.bound_after_refill | q) | \(.cpu_s | r) (\(.cpu_s_by_process | to_entries | map("\(.key) \(.value | r)") | join(", ")); \(.cpu_s_since_start | r)) |")'
