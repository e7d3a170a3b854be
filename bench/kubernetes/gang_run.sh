#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Gangs on a real control plane (tools/kube/cluster.sh: etcd, kube-apiserver,
# kube-controller-manager, kwok), one fresh cluster per system:
#   kube-scheduler       v1.37's default profile, plain pods: it sees no gang;
#   kube-scheduler-gang  the same with the Workload API (feature gate GenericWorkload): each
#                        gang a PodGroup with a gang policy (minCount = its size), placed by
#                        kube-scheduler's gang scheduling;
#   strata               `strata up --kubernetes` on the same PodGroups.
# The scheduler runs first; gang_load then makes GANGS gangs of MIN..MAX pods of GPUS_PER_POD GPUs
# (seeded), deletes each gang RUNTIME_MIN..RUNTIME_MAX seconds after all its pods are bound, and
# reports: gangs placed, seconds until the last was placed, a gang's wait (p50, p90), and the
# GPU-seconds held by bound pods of gangs not yet whole (what a gang-unaware scheduler wastes;
# it must be 0 for gang schedulers). CPU: the scheduler's utime + stime from /proc at the end.
# Both API clients unthrottled (QPS/burst 5000) as in run.sh.
#
#   bench/kubernetes/gang_run.sh [--nodes 125] [--gpus-per-node 8] [--gangs 500] [--min-pods 8]
#       [--max-pods 32] [--gpus-per-pod 1] [--runtime-min 10] [--runtime-max 30] [--seed 1]
#       [--interleave] [--workers 32] [--timeout 1200]
#       [--systems "kube-scheduler kube-scheduler-gang strata"] [--build build/release]
#       [--strata-flags "..."] [--strata-log-level LEVEL] [--keep-log FILE]   (FILE: strata's log)
#   bench/kubernetes/gang_run.sh --seed-deadlock
#       the seed's deadlock: 6 nodes x 8 GPUs, two teams' gangs of 4 pods x 8 GPUs created one
#       at a time, interleaved (a-0, b-0, a-1, ...), each running 20 s once whole; 120 s timeout.
# Prints one JSON line per system and a table; figures go into bench/kubernetes/RESULTS.md.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=deciders.sh
source "$repo/bench/kubernetes/deciders.sh"
nodes=125 gpus=8 gangs=500 min_pods=8 max_pods=32 gpus_per_pod=1 runtime_min=10 runtime_max=30
seed=1 interleave=() workers=32 timeout=1200 systems="kube-scheduler kube-scheduler-gang strata"
build=$repo/build/release strata_flags=() keep_log="" log_level=info
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --gpus-per-node) gpus=$2; shift 2 ;;
    --gangs) gangs=$2; shift 2 ;;
    --min-pods) min_pods=$2; shift 2 ;;
    --max-pods) max_pods=$2; shift 2 ;;
    --gpus-per-pod) gpus_per_pod=$2; shift 2 ;;
    --runtime-min) runtime_min=$2; shift 2 ;;
    --runtime-max) runtime_max=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --interleave) interleave=(--interleave); shift ;;
    --workers) workers=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --strata-flags) read -ra strata_flags <<<"$2"; shift 2 ;;
    --keep-log) keep_log=$2; shift 2 ;;
    --strata-log-level) log_level=$2; shift 2 ;;
    --seed-deadlock)
      nodes=6 gangs=2 min_pods=4 max_pods=4 gpus_per_pod=8 runtime_min=20 runtime_max=20
      interleave=(--interleave) workers=1 timeout=120
      shift ;;
    *) echo "gang_run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
((max_pods * gpus_per_pod <= nodes * gpus)) ||
  { echo "gang_run.sh: a gang of $max_pods x $gpus_per_pod GPUs does not fit the cluster" >&2; exit 2; }
strata=$build/bin/strata
load=$build/bench/kubernetes/gang_load
for binary in "$strata" "$load"; do
  [[ -x $binary ]] || { echo "gang_run.sh: $binary is not built (make build)" >&2; exit 1; }
done
cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_gangs.XXXXXX")
scheduler_pid=""
cleanup() {
  [[ -z $scheduler_pid ]] || kill -9 "$scheduler_pid" 2>/dev/null || true
  "$cluster" down "$dir/cluster" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

results=()
for system in $systems; do
  gates=() group=podgroup scheduler=default-scheduler
  case $system in
    kube-scheduler) group=none ;;
    kube-scheduler-gang) ;;
    strata) scheduler=strata ;;
    *) echo "gang_run.sh: unknown system $system" >&2; exit 2 ;;
  esac
  [[ $group == podgroup ]] &&
    gates=(--feature-gates GenericWorkload=true --runtime-config scheduling.k8s.io/v1beta1=true)
  echo "== $system: $nodes nodes x $gpus GPUs, $gangs gangs of $min_pods-$max_pods pods x" \
    "$gpus_per_pod GPUs, ${runtime_min}-${runtime_max} s each" >&2
  kubeconfig=$("$cluster" up "$dir/cluster" --nodes "$nodes" --gpus-per-node "$gpus" \
    --timeout 900 "${gates[@]}")
  "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" create namespace bench >/dev/null
  until "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" get serviceaccount default -n bench \
    >/dev/null 2>&1; do sleep 0.5; done
  if [[ $system == strata ]]; then
    "$strata" --log-level "$log_level" up --kubernetes --kubeconfig "$kubeconfig" --leader-elect=false \
      --kube-api-qps 5000 --kube-api-burst 5000 "${strata_flags[@]}" >"$dir/strata.log" 2>&1 &
    scheduler_pid=$!
    sleep 2
  else
    "$cluster" start-kube-scheduler "$dir/cluster" --qps 5000 --burst 5000
    read -r scheduler_pid <"$dir/cluster/pids/kube-scheduler.pid"
  fi
  "$load" --kubeconfig "$kubeconfig" --namespace bench --scheduler "$scheduler" --group "$group" \
    --gangs "$gangs" --min-pods "$min_pods" --max-pods "$max_pods" --gpus-per-pod "$gpus_per_pod" \
    --runtime-min "$runtime_min" --runtime-max "$runtime_max" --seed "$seed" \
    --workers "$workers" --timeout "$timeout" "${interleave[@]}" >"$dir/load.json" ||
    echo "gang_run.sh: not every gang was placed ($system)" >&2
  cpu=$(cpu_seconds "$scheduler_pid")
  kill "$scheduler_pid" 2>/dev/null || true
  wait "$scheduler_pid" 2>/dev/null || true
  scheduler_pid=""
  [[ -z $keep_log || $system != strata ]] || cp "$dir/strata.log" "$keep_log"
  line=$(jq -c --arg s "$system" --argjson cpu "$cpu" --argjson nodes "$nodes" \
    '{system: $s, nodes: $nodes} + . + {scheduler_cpu_s: $cpu}' "$dir/load.json")
  echo "$line"
  results+=("$line")
  "$cluster" down "$dir/cluster" >/dev/null
  rm -rf "$dir/cluster"
done
printf '%s\n' "${results[@]}" | jq -rs '
  def r: . * 10 | round / 10;
  def r2: . * 100 | round / 100;
  "| system | gangs placed | all placed (s) | wait p50 / p90 (s) | GPU-s held by incomplete gangs (max GPUs at once) | longest partly bound (s) | scheduler CPU s |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  (.[] | "| \(.system) | \(.placed) of \(.gangs) | \(if .all_placed_s < 0 then "not all (\(.run_s | r) s run)" else (.all_placed_s | r) end) | \(.wait_p50_s | r) / \(.wait_p90_s | r) | \(.incomplete_gpu_s | r) (\(.max_incomplete_gpus)) | \(.longest_partial_s | r2) | \(.scheduler_cpu_s | r) |")'
