#!/usr/bin/env bash
# device_run_test: tests/device/run.sh where no GPU is. It skips (exit 0) without nvidia-smi; with
# FakeNvidiaSmi and the fake NVML library, which describe the same 8-GPU machine, every step runs
# (strata node inventory, strata up with a GPU pod, the DCGM readings) and passes; and its checks
# fail, naming the GPU, when nvidia-smi's word differs from strata's.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${STRATA:?the strata binary}" "${STRATA_FAKE_NVML:?the fake NVML library}"
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/device_run_test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# Pods run as nobody when the test runs as root: they must reach FakeNvidiaSmi.
chmod 755 "$dir"
cp "$here/fake_nvidia_smi.py" "$dir/nvidia-smi"
chmod 755 "$dir/nvidia-smi"

NVIDIA_SMI=$dir/no-such-nvidia-smi bash "$here/run.sh" "$dir/skipped" >"$dir/skip.out" 2>&1
check "without nvidia-smi it exits 0" [ $? = 0 ]
check "saying it skipped" grep -q '^SKIP: no nvidia-smi' "$dir/skip.out"

NVIDIA_SMI=$dir/nvidia-smi STRATA_NVML_LIBRARY=$STRATA_FAKE_NVML timeout 100 \
  bash "$here/run.sh" "$dir/results" >"$dir/run.out" 2>&1
rc=$?
check "with a GPU (fake) every step passes" [ $rc = 0 ]
[[ $rc = 0 ]] || cat "$dir/run.out"
results=$dir/results/results.txt
check "no check failed" bash -c "! grep -q '^FAIL' '$results'"
for step in inventory up-pod dcgm; do
  check "step $step ran checks" grep -q "^PASS $step: " "$results"
done
check "a field nvidia-smi refuses is named, not compared" \
  grep -q '^INFO dcgm: nvidia-smi refused memory.reserved: Field "memory.reserved"' "$results"
check "the pod saw its GPU" grep -q '^PASS up-pod: nvidia-smi -L -i \$CUDA_VISIBLE_DEVICES' "$results"
check "the last line counts the checks and names the GPU" \
  grep -Eq '^[0-9]+ passed, 0 failed on 8 x NVIDIA H100 80GB HBM3' <(tail -1 "$results")

# The checks fail when nvidia-smi disagrees: another UUID for GPU 3, 1000 MiB less free on GPU 1.
sed 's/^3, \(.*\), GPU-fake-3,/3, \1, GPU-other-3,/' "$dir/results/query-gpu.csv" >"$dir/query-gpu.csv"
python3 "$here/device_checks.py" inventory "$dir/results/inventory.json" "$dir/query-gpu.csv" \
  "$dir/results/nvidia-smi-q.txt" "$dir/results/topo-p2p-nvlink.txt" >"$dir/inventory.out"
check "a different UUID fails the inventory" [ $? = 1 ]
check "naming the GPU and both UUIDs" \
  grep -q '^FAIL inventory: GPU 3 UUID: strata GPU-fake-3, nvidia-smi GPU-other-3' "$dir/inventory.out"
cp -r "$dir/results/readings" "$dir/readings"
sed -i 's/^GPU-fake-1, 80535$/GPU-fake-1, 79535/' "$dir/readings/memory.free.csv"
python3 "$here/device_checks.py" dcgm "$dir/results/metrics.txt" "$dir/readings" >"$dir/dcgm.out"
check "a different free memory fails the DCGM step" [ $? = 1 ]
check "naming the GPU and the family" \
  grep -q '^FAIL dcgm: GPU-fake-1 DCGM_FI_DEV_FB_FREE: strata 80535, nvidia-smi memory.free 79535' \
  "$dir/dcgm.out"
# NVLink: GPUs 3 and 4 joined by nvidia-smi but not by strata.
sed 's/^\( GPU3\t\(\S*\t\)\{4\}\)NS/\1OK/' "$dir/results/topo-p2p-nvlink.txt" >"$dir/p2p.txt"
python3 "$here/device_checks.py" inventory "$dir/results/inventory.json" \
  "$dir/results/query-gpu.csv" "$dir/results/nvidia-smi-q.txt" "$dir/p2p.txt" >"$dir/p2p.out"
check "another NVLink grouping fails the inventory" \
  grep -q '^FAIL inventory: NVLink islands: strata {0,1,2,3} {4,5,6,7}, nvidia-smi topo -p2p n {0,1,2,3,4,5,6,7}' \
  "$dir/p2p.out"

echo "$failures failure(s)"
((failures == 0))
