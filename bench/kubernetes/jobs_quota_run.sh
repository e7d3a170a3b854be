#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Kueue's own kind of work, side by side on the same real control plane (tools/kube/cluster.sh),
# one fresh cluster per system: JOBS batch/v1 Jobs, suspended and labelled
# kueue.x-k8s.io/queue-name as Kueue's users write them, in 10 ClusterQueues of 2 cohorts
# (cq-0..cq-4 in cohort a, cq-5..cq-9 in cohort b), NOMINAL GPUs of nominal quota each and no
# borrowing limit, so that a queue with more work borrows what its cohort-mates leave; the
# Jobs go to queue i with weight 1 + i mod 5 (each cohort has light and heavy queues), each of
# MIN..MAX pods of 1 GPU that run RUNTIME_MIN..RUNTIME_MAX seconds (job_load, seeded).
#   kueue   Kueue v0.17.0's manager (its webhooks and batch/Job integration) admits and
#           unsuspends each Job; kube-scheduler v1.37 binds its pods;
#   strata  `strata up --kubernetes` with Kueue's CRDs and no Kueue controller: admits,
#           unsuspends and binds.
# The queues exist first; the start is the first Job's creation. Measured from one watch of the
# namespace's pods (pod_load bound-log, by the pods' bench.strata.dev/queue label) and
# share_over_time.py: seconds until every Job's pods had all been bound, the GPUs in use on
# average (utilisation), each queue's mean GPUs, Jain's index of GPUs / nominal quota over the
# queues still waiting (1 is even), the most GPUs each cohort ever held (quota: 5 x NOMINAL);
# and the deciders' CPU seconds (utime + stime, strata or Kueue + kube-scheduler), beside the
# control plane's (etcd, kube-apiserver, kube-controller-manager, kwok) over the same span; and
# where a Job's time went, mean seconds per stage (job_round_trip.py); and the API server's writes
# over the same span, by resource (api_writes.py); and the namespace's events by component and
# reason (occurrences: each Event's count, as recorders fold repeats into one Event).
# --keep-logs DIR keeps the control plane's logs and the API server's /metrics before and after.
# --job-syncs: kube-controller-manager's concurrent Job syncs (Kubernetes' default 5), the same
# for both systems.
#
#   bench/kubernetes/jobs_quota_run.sh [--nodes 50] [--gpus-per-node 8] [--jobs 2000]
#       [--nominal 40] [--min-pods 1] [--max-pods 4] [--runtime-min 5] [--runtime-max 15]
#       [--seed 1] [--systems "kueue strata"] [--timeout 1800] [--build build/release]
#       [--job-syncs 5] [--keep-logs DIR]
# Prints one JSON line per system and a table; figures go into bench/kubernetes/RESULTS.md.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=deciders.sh
source "$repo/bench/kubernetes/deciders.sh"
nodes=50 gpus=8 jobs=2000 nominal=40 min_pods=1 max_pods=4 runtime_min=5 runtime_max=15 seed=1
systems="kueue strata" timeout=1800 build=$repo/build/release keep_logs="" job_syncs=5
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --gpus-per-node) gpus=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --nominal) nominal=$2; shift 2 ;;
    --min-pods) min_pods=$2; shift 2 ;;
    --max-pods) max_pods=$2; shift 2 ;;
    --runtime-min) runtime_min=$2; shift 2 ;;
    --runtime-max) runtime_max=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep-logs) keep_logs=$2; shift 2 ;;
    --job-syncs) job_syncs=$2; shift 2 ;;
    *) echo "jobs_quota_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
die() { echo "jobs_quota_run.sh: $*" >&2; exit 2; }
((10 * nominal <= nodes * gpus)) || die "10 x $nominal GPUs of quota exceed the cluster's $((nodes * gpus))"
strata=$build/bin/strata
for binary in "$strata" "$build/bench/kubernetes/pod_load" "$build/bench/kubernetes/job_load"; do
  [[ -x $binary ]] || die "$binary is not built (make build)"
done
cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_jobs_quota.XXXXXX")
strata_pid="" logger=""
cleanup() {
  for pid in $strata_pid $logger; do kill -9 "$pid" 2>/dev/null || true; done
  "$cluster" down "$dir/cluster" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

queue_names=() weights="" nominal_json="{}" cohort_json="{}"
for i in 0 1 2 3 4 5 6 7 8 9; do
  queue_names+=("cq-$i")
  weights+="${weights:+,}cq-$i:$((1 + i % 5))"
  cohort=$([[ $i -lt 5 ]] && echo a || echo b)
  nominal_json=$(jq -c --arg q "cq-$i" --argjson n "$nominal" '. + {($q): $n}' <<<"$nominal_json")
  cohort_json=$(jq -c --arg q "cq-$i" --arg c "$cohort" '. + {($q): $c}' <<<"$cohort_json")
done
queues() {
  cat <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec:
  nodeLabels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
EOF
  local q cohort
  for q in "${queue_names[@]}"; do
    cohort=$(jq -r --arg q "$q" '.[$q]' <<<"$cohort_json")
    cat <<EOF
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: $q}
spec:
  cohortName: $cohort
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: "1000"}
      - {name: memory, nominalQuota: 4000Gi}
      - {name: nvidia.com/gpu, nominalQuota: "$nominal"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: $q, namespace: bench}
spec: {clusterQueue: $q}
EOF
  done
}

results=()
declare -A deciders
for system in $systems; do
  echo "== $system: $nodes nodes x $gpus GPUs; $jobs Jobs of $min_pods-$max_pods pods x 1 GPU," \
    "${runtime_min}-${runtime_max} s; 10 ClusterQueues of $nominal GPUs in 2 cohorts" >&2
  [[ $system == kueue || $system == strata ]] || die "unknown system $system (kueue, strata)"
  scheduler_name=$([[ $system == kueue ]] && echo default-scheduler || echo strata)
  # shellcheck disable=SC2046
  kubeconfig=$("$cluster" up "$dir/cluster" --nodes "$nodes" --gpus-per-node "$gpus" \
    --timeout 600 --job-syncs "$job_syncs" $(cluster_flags "$system"))
  k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }
  k create namespace bench >/dev/null
  until k get serviceaccount default -n bench >/dev/null 2>&1; do sleep 0.5; done
  start_quota_system "$system" "$dir/cluster" "$kubeconfig" "$strata" "$dir/strata.log"
  queues | k create -f - >/dev/null
  "$build/bench/kubernetes/pod_load" bound-log --kubeconfig "$kubeconfig" --namespace bench \
    --group-label bench.strata.dev/queue >"$dir/bound.log" &
  logger=$!
  sleep 2
  cpu_before=$(deciders_cpu)
  control_before=$(control_plane_cpu "$dir/cluster")
  k get --raw /metrics >"$dir/metrics.before"
  start=$(date +%s.%N)
  "$build/bench/kubernetes/job_load" --kubeconfig "$kubeconfig" --namespace bench \
    --jobs "$jobs" --queues "$weights" --scheduler "$scheduler_name" --min-pods "$min_pods" \
    --max-pods "$max_pods" --runtime-min "$runtime_min" --runtime-max "$runtime_max" \
    --seed "$seed" >"$dir/jobs.json"
  pods=$(jq -c .pods "$dir/jobs.json")
  # Every queue's pods have all been bound at least once.
  all_done() {
    tail -n 1 "$dir/bound.log" | jq -e --argjson p "$pods" \
      '. as $s | [$p | to_entries[] | ($s.ever[.key] // 0) >= .value] | all' >/dev/null 2>&1
  }
  deadline=$((SECONDS + timeout))
  until all_done; do
    ((SECONDS < deadline)) || { echo "jobs_quota_run.sh: $system did not bind every Job's pods within $timeout s" >&2; break; }
    sleep 1
  done
  cpu_after=$(deciders_cpu)
  control_after=$(control_plane_cpu "$dir/cluster")
  k get --raw /metrics >"$dir/metrics.after"
  round_trip=$(k get jobs,pods -n bench -o json | python3 "$repo/bench/kubernetes/job_round_trip.py")
  api_writes=$(python3 "$repo/bench/kubernetes/api_writes.py" "$dir/metrics.before" "$dir/metrics.after")
  events=$(k get events -n bench -o json |
    jq -c '[.items[] | {k: "\(.source.component // .reportingComponent) \(.reason)", n: (.count // 1)}]
      | group_by(.k) | map({(.[0].k): (map(.n) | add)}) | add // {}')
  kill "$logger" 2>/dev/null || true
  wait "$logger" 2>/dev/null || true
  logger=""
  shares=$(python3 "$repo/bench/kubernetes/share_over_time.py" "$dir/bound.log" --start "$start" \
    --pods "$pods" --nominal "$nominal_json" --cohorts "$cohort_json" --gpus $((nodes * gpus)))
  line=$(jq -nc --arg s "$system" --argjson jobs "$(cat "$dir/jobs.json")" --argjson shares "$shares" \
    --argjson cpu_before "$cpu_before" --argjson cpu_after "$cpu_after" \
    --argjson control_before "$control_before" --argjson control_after "$control_after" \
    --argjson round_trip "$round_trip" --argjson api_writes "$api_writes" --argjson events "$events" \
    --argjson gpus $((nodes * gpus)) --argjson nominal "$nominal" '
    {system: $s, gpus: $gpus, nominal: $nominal, jobs: $jobs.jobs, pods: ($jobs.pods | add),
     work_gpu_s: ($jobs.gpu_s | add), create_s: $jobs.seconds} + $shares +
    {cpu_s: (([$cpu_after[]] | add) - ([$cpu_before[]] | add)),
     cpu_s_by_process: ($cpu_after | with_entries(.key as $k | .value -= $cpu_before[$k])),
     control_plane_cpu_s: ($control_after | with_entries(.key as $k | .value -= $control_before[$k])),
     job_round_trip_s: $round_trip, api_writes: $api_writes, events_by_reason: $events}')
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
    cp "$dir"/cluster/logs/*.log "$dir"/metrics.before "$dir"/metrics.after "$keep_logs/$system/"
    [[ $system != strata ]] || cp "$dir/strata.log" "$keep_logs/$system/"
  fi
  rm -rf "$dir/cluster" "$dir/bound.log"
done
printf '%s\n' "${results[@]}" | jq -rs '
  def r: if . == null then "-" else . * 100 | round / 100 end;
  "| system | Jobs (pods) | all admitted and bound (s) | ideal (s) | utilisation | Jain, waiting queues | cohorts max GPUs (quota \(.[0].nominal * 5)) | CPU s (by process) | control plane CPU s (by process) |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  (.[] | "| \(.system) | \(.jobs) (\(.pods)) | \(.all_bound_s | r) | \(.work_gpu_s / .gpus | r) | \(.utilisation | r) | \(.jain_waiting | r) | \(.cohort_max | to_entries | map("\(.key) \(.value)") | join(", ")) | \(.cpu_s | r) (\(.cpu_s_by_process | to_entries | map("\(.key) \(.value | r)") | join(", "))) | \([.control_plane_cpu_s[]] | add | r) (\(.control_plane_cpu_s | to_entries | map("\(.key) \(.value | r)") | join(", "))) |")'
