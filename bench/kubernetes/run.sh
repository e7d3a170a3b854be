#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# strata against kube-scheduler on the same real control plane (tools/kube/cluster.sh: etcd,
# kube-apiserver, kube-controller-manager, kwok), one fresh cluster per scheduler:
#   1-GPU pods: NODES kwok nodes x GPUS GPUs; PODS pods of 1 GPU created first, then the
#   scheduler starts; measured: seconds from its start until the last pod is bound, pods/s
#   between the first and the last bind, and the scheduler's CPU seconds per 1,000 pods
#   (utime + stime from /proc). Both API clients are unthrottled (QPS/burst 5000), as
#   kube-scheduler's scheduler_perf raises them.
#
#   bench/kubernetes/run.sh [--nodes 1000] [--gpus-per-node 8] [--pods 10000]
#       [--schedulers "kube-scheduler strata"] [--build build/release] [--strata-flags "..."]
# Prints one JSON line per scheduler and a table; figures go into bench/kubernetes/RESULTS.md.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=deciders.sh
source "$repo/bench/kubernetes/deciders.sh"
nodes=1000 gpus=8 pods=10000 schedulers="kube-scheduler strata" build=$repo/build/release
strata_flags=()
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --gpus-per-node) gpus=$2; shift 2 ;;
    --pods) pods=$2; shift 2 ;;
    --schedulers) schedulers=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --strata-flags) read -ra strata_flags <<<"$2"; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
((pods <= nodes * gpus)) || { echo "run.sh: $pods pods of 1 GPU do not fit $nodes x $gpus GPUs" >&2; exit 2; }
strata=$build/bin/strata
load=$build/bench/kubernetes/pod_load
for binary in "$strata" "$load"; do
  [[ -x $binary ]] || { echo "run.sh: $binary is not built (make build)" >&2; exit 1; }
done
cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench_kubernetes.XXXXXX")
scheduler_pid="" waiter=""
cleanup() {
  for pid in $scheduler_pid $waiter; do kill -9 "$pid" 2>/dev/null || true; done
  "$cluster" down "$dir/cluster" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT


results=()
for scheduler in $schedulers; do
  echo "== $scheduler: $nodes nodes x $gpus GPUs, $pods pods of 1 GPU" >&2
  kubeconfig=$("$cluster" up "$dir/cluster" --nodes "$nodes" --gpus-per-node "$gpus" \
    --timeout 900)
  "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" create namespace bench >/dev/null
  until "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" get serviceaccount default -n bench \
    >/dev/null 2>&1; do sleep 0.5; done
  name=$scheduler
  [[ $scheduler == kube-scheduler ]] && name=default-scheduler
  "$load" create --kubeconfig "$kubeconfig" --namespace bench --count "$pods" \
    --scheduler "$name" >&2
  "$load" wait --kubeconfig "$kubeconfig" --namespace bench --count "$pods" \
    >"$dir/wait.json" &
  waiter=$!
  case $scheduler in
    kube-scheduler)
      "$cluster" start-kube-scheduler "$dir/cluster" --qps 5000 --burst 5000
      read -r scheduler_pid <"$dir/cluster/pids/kube-scheduler.pid"
      ;;
    strata)
      "$strata" up --kubernetes --kubeconfig "$kubeconfig" --leader-elect=false \
        --kube-api-qps 5000 --kube-api-burst 5000 "${strata_flags[@]}" >"$dir/strata.log" 2>&1 &
      scheduler_pid=$!
      ;;
  esac
  wait "$waiter" || echo "run.sh: not every pod was bound ($scheduler)" >&2
  cpu=$(cpu_seconds "$scheduler_pid")
  kill "$scheduler_pid" 2>/dev/null || true
  wait "$scheduler_pid" 2>/dev/null || true
  scheduler_pid=""
  line=$(jq -c --arg s "$scheduler" --argjson cpu "$cpu" --argjson pods "$pods" \
    --argjson nodes "$nodes" '{scheduler: $s, nodes: $nodes, pods: $pods} + . +
      {cpu_s: $cpu, cpu_s_per_1000_pods: ($cpu * 1000 / $pods)}' "$dir/wait.json")
  echo "$line"
  results+=("$line")
  "$cluster" down "$dir/cluster" >/dev/null
  rm -rf "$dir/cluster"
done
printf '%s\n' "${results[@]}" | jq -rs '
  "| scheduler | pods bound | all bound (s) | pods/s | CPU s per 1,000 pods |",
  "| --- | --- | --- | --- | --- |",
  (.[] | "| \(.scheduler) | \(.bound) | \(.all_bound_s * 100 | round / 100) | \(.pods_per_s // 0 | round) | \(.cpu_s_per_1000_pods * 100 | round / 100) |")'
