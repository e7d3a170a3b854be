#!/usr/bin/env bash
# strata on a real NVIDIA GPU, in one short run (a few minutes; under ten). Changes no GPU setting:
# it only reads (nvidia-smi -L, -q, --query-gpu, topo -p2p; NVML through strata) and runs one pod.
#   1 inventory  `strata node inventory -o json` (NVML) against nvidia-smi: each GPU's model,
#                memory, UUID, MIG mode, and the NVLink islands of `nvidia-smi topo -p2p n`
#   2 up-pod     `strata up` on this machine's GPUs; a Pod asking for nvidia.com/gpu: 1 prints its
#                CUDA_VISIBLE_DEVICES, nvidia-smi -L, its own GPU, and what CUDA (libcuda) sees
#   3 dcgm       the DCGM_FI_DEV_* series on strata up's /metrics against nvidia-smi --query-gpu
# On a machine without an NVIDIA GPU (no nvidia-smi, or it lists none) it says SKIP and exits 0.
#
# Usage: tests/device/run.sh [RESULTS_DIR]
#   RESULTS_DIR  where every output and results.txt go (default $OUT/device, else a new temp dir)
#   STRATA       the strata binary (default build/release/bin/strata); on a machine that cannot
#                build strata, the one tests/device/bundle.sh packed, with its libraries in lib/
#   NVIDIA_SMI   nvidia-smi to compare with (default: the one on PATH)
#   STRATA_NVML_LIBRARY  NVML for strata (default libnvidia-ml.so.1, the driver's)
# results.txt has one line per check (PASS/FAIL/INFO step: what); the exit code is 1 when any
# check failed, and the last line names the GPU (for bench/RESULTS.md).
# On a lent GPU machine, which builds nothing: tests/device/bundle.sh here, then run there
#   STRATA=build/device/strata tests/device/run.sh      (carrying build/device, 19 MiB)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
strata=${STRATA:-$repo/build/release/bin/strata}
nvml=${STRATA_NVML_LIBRARY:-libnvidia-ml.so.1}
checks=$repo/tests/device/device_checks.py
# shellcheck source=../../tools/strata_up.sh
source "$repo/tools/strata_up.sh"

step() { echo "== $* ($(date -u +%H:%M:%S))"; }

step "0 find an NVIDIA GPU"
smi=$(command -v "${NVIDIA_SMI:-nvidia-smi}" || true)
if [[ -z $smi ]]; then
  echo "SKIP: no nvidia-smi on this machine, so no NVIDIA GPU to test; nothing was run"
  exit 0
fi
if ! listing=$("$smi" -L 2>&1) || ! grep -q '^GPU [0-9]' <<<"$listing"; then
  echo "SKIP: nvidia-smi lists no GPU here ($(head -1 <<<"$listing")); nothing was run"
  exit 0
fi
echo "$listing"
for tool in python3 curl; do
  command -v "$tool" >/dev/null || { echo "FAIL: the device checks need $tool" >&2; exit 1; }
done
[[ -x $strata ]] || { echo "FAIL: no strata binary at $strata (build it, or set STRATA)" >&2; exit 1; }
# The libraries tests/device/bundle.sh packed beside the binary, for strata alone (env execs it,
# so a background strata's pid is its own).
bundled=$(dirname "$strata")/lib
strata_env=(env)
[[ ! -d $bundled ]] || strata_env+=("LD_LIBRARY_PATH=$bundled${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
run_strata=("${strata_env[@]}" "$strata")
if missing=$("${strata_env[@]}" ldd "$strata" 2>&1 | grep 'not found'); then
  echo "FAIL: $strata cannot run here, libraries missing (tests/device/bundle.sh packs them):" >&2
  echo "$missing" >&2
  exit 1
fi

results_dir=${1:-${OUT:+$OUT/device}}
[[ -n $results_dir ]] || results_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-device.XXXXXX")
mkdir -p "$results_dir"
results=$results_dir/results.txt
: >"$results"
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-device-work.XXXXXX")
# Pods run as nobody when strata runs as root: they must reach the probe script.
chmod 755 "$work"
up_pid=""
cleanup() {
  [[ -z $up_pid ]] || { kill -INT "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null; } || true
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
# record STEP COMMAND...: runs a check command, keeps its lines in results.txt, notes a failure.
record() {
  local name=$1 rc=0
  shift
  "$@" >"$results_dir/$name.checks" 2>&1 || rc=$?
  cat "$results_dir/$name.checks" | tee -a "$results"
  ((rc == 0)) || failed=1
}
echo "results in $results_dir"
"$smi" -q >"$results_dir/nvidia-smi-q.txt"
"$smi" --version >"$results_dir/nvidia-smi-version.txt" 2>&1 || true

step "1 inventory: strata node inventory against nvidia-smi"
"${run_strata[@]}" node inventory --nvml-library "$nvml" -o json >"$results_dir/inventory.json"
"${run_strata[@]}" node inventory --nvml-library "$nvml" | tee "$results_dir/inventory.txt"
if ! "$smi" --query-gpu="$(python3 "$checks" fields query)" --format=csv,noheader,nounits \
  >"$results_dir/query-gpu.csv" 2>&1; then
  echo "FAIL inventory: nvidia-smi --query-gpu: $(head -3 "$results_dir/query-gpu.csv")" |
    tee -a "$results"
  exit 1
fi
"$smi" topo -p2p n >"$results_dir/topo-p2p-nvlink.txt" 2>&1 || true
record inventory python3 "$checks" inventory "$results_dir/inventory.json" \
  "$results_dir/query-gpu.csv" "$results_dir/nvidia-smi-q.txt" "$results_dir/topo-p2p-nvlink.txt"

step "2 up-pod: strata up on this machine's GPUs, one pod with nvidia.com/gpu: 1"
# This run's own CLI credentials, so that it neither reads nor fills the user's.
export STRATA_CREDENTIALS=$work/credentials
root_pods=()
[[ $(id -u) != 0 ]] || root_pods=(--allow-root-pods)
"${run_strata[@]}" up --data-dir "$work/data" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
  --nvml-library "$nvml" --stop-grace 1 "${root_pods[@]}" >"$results_dir/up.log" 2>&1 &
up_pid=$!
if ! wait_for_strata_up "$results_dir/up.log" "$up_pid"; then
  cat "$results_dir/up.log"
  echo "FAIL up-pod: strata up did not start (its log: $results_dir/up.log)" | tee -a "$results"
  exit 1
fi
cp "$repo/tests/device/gpu_probe.sh" "$work/gpu_probe.sh"
chmod 755 "$work/gpu_probe.sh"
python3 "$checks" pod-manifest "$work/gpu_probe.sh" "$smi" >"$work/pod.json"
"${run_strata[@]}" apply -f "$work/pod.json" --server "$STRATA_API"
phase=""
for _ in $(seq 1 240); do
  phase=$("${run_strata[@]}" get pods device-probe -n default -o json --server "$STRATA_API" 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("status", {}).get("phase", ""))' ||
    true)
  [[ $phase == Succeeded || $phase == Failed ]] && break
  sleep 0.5
done
"${run_strata[@]}" describe pod device-probe -n default --server "$STRATA_API" \
  >"$results_dir/pod-describe.txt" 2>&1 || true
"${run_strata[@]}" logs pod device-probe -n default --server "$STRATA_API" >"$results_dir/pod.log" 2>&1 ||
  true
if [[ $phase == Succeeded ]]; then
  echo "PASS up-pod: the pod ran to Succeeded" | tee -a "$results"
else
  echo "FAIL up-pod: the pod ended '$phase', not Succeeded (see pod-describe.txt)" | tee -a "$results"
  failed=1
fi
record pod python3 "$checks" pod "$results_dir/inventory.json" "$results_dir/pod.log"

step "3 dcgm: strata's DCGM_FI_DEV_* readings against nvidia-smi --query-gpu"
# One nvidia-smi call per field: a field this driver does not know (memory.reserved is newer
# than some) leaves that comparison out, named, instead of failing the whole query.
read_readings() {
  local field
  rm -rf "$results_dir/readings"
  mkdir -p "$results_dir/readings"
  for field in $(python3 "$checks" fields readings | tr , ' '); do
    "$smi" --query-gpu="uuid,$field" --format=csv,noheader,nounits \
      >"$results_dir/readings/$field.csv" 2>&1 ||
      mv "$results_dir/readings/$field.csv" "$results_dir/readings/$field.refused"
  done
}
# Three tries a moment apart: an idle GPU's power and clocks drift between two reads.
for try in 1 2 3; do
  if ! curl -fsS -H "Authorization: Bearer $STRATA_ADMIN_TOKEN" "$STRATA_API/metrics" \
    >"$results_dir/metrics.txt" 2>"$results_dir/metrics.err"; then
    echo "FAIL dcgm: GET $STRATA_API/metrics: $(cat "$results_dir/metrics.err")" | tee -a "$results"
    failed=1
    break
  fi
  read_readings
  if python3 "$checks" dcgm "$results_dir/metrics.txt" "$results_dir/readings" >/dev/null 2>&1 ||
    ((try == 3)); then
    record dcgm python3 "$checks" dcgm "$results_dir/metrics.txt" "$results_dir/readings"
    break
  fi
  sleep 2
done

kill -INT "$up_pid" 2>/dev/null || true
wait "$up_pid" 2>/dev/null || true
up_pid=""
gpu=$(python3 "$checks" gpu-name "$results_dir/query-gpu.csv")
passed=$(grep -c '^PASS' "$results" || true)
failures=$(grep -c '^FAIL' "$results" || true)
echo "$passed passed, $failures failed on $gpu ($(cat "$results_dir/nvidia-smi-version.txt" |
  grep -i 'driver version' | head -1 | tr -s ' '))" | tee -a "$results"
((failed == 0 && failures == 0))
