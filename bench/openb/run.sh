#!/usr/bin/env bash
# Placement quality on the Alibaba openb trace: every policy on every pod-list variant, mean GPU
# allocation over seeds at 90/100/110/130 % arrived load, beside the FGD artifact's reported
# figures. Writes OUT/results.json (one line per policy x variant) and OUT/results.md.
#
# usage: bench/openb/run.sh DATA_DIR [STRATA_BINARY] [OUT_DIR] [SEEDS] [JOBS]
#   DATA_DIR       folder with openb_node_list_gpu_node.csv, openb_pod_list_*.csv and
#                  fgd_reported_alloc_mean10seeds.csv (e.g. ../shared/data/openb)
#   STRATA_BINARY  default build/release/bin/strata
#   OUT_DIR        default bench/openb/out
#   SEEDS          default 42-51 (the artifact's)
#   JOBS           parallel runs, default 2
set -euo pipefail

data_dir=${1:?usage: run.sh DATA_DIR [STRATA_BINARY] [OUT_DIR] [SEEDS] [JOBS]}
strata=${2:-build/release/bin/strata}
out_dir=${3:-bench/openb/out}
seeds=${4:-42-51}
jobs=${5:-2}
policies="random dotprod clustering packing bestfit fgd strata"

[[ -x "$strata" ]] || { echo "run.sh: no strata binary at $strata" >&2; exit 1; }
nodes="$data_dir/openb_node_list_gpu_node.csv"
[[ -r "$nodes" ]] || { echo "run.sh: cannot read $nodes" >&2; exit 1; }
mkdir -p "$out_dir/runs"

start=$(date +%s)
for pods in "$data_dir"/openb_pod_list_*.csv; do
  variant=$(basename "$pods" .csv)
  variant=${variant#openb_pod_list_}
  for policy in $policies; do
    echo "$variant $policy $pods"
  done
done | xargs -P "$jobs" -L 1 bash -c '
  set -euo pipefail
  variant=$0 policy=$1 pods=$2
  t0=$(date +%s%N)
  result=$("'"$strata"'" sim openb --nodes "'"$nodes"'" --pods "$pods" --policy "$policy" \
           --seeds "'"$seeds"'" -o json)
  t1=$(date +%s%N)
  printf "{\"variant\":\"%s\",\"seconds\":%d.%d,\"result\":%s}\n" "$variant" \
    $(( (t1 - t0) / 1000000000 )) $(( (t1 - t0) / 100000000 % 10 )) "$result" \
    > "'"$out_dir"'/runs/$variant-$policy.json"
  echo "done $variant $policy" >&2
'
elapsed=$(( $(date +%s) - start ))
cat "$out_dir"/runs/*.json > "$out_dir/results.json"
python3 "$(dirname "$0")/table.py" "$out_dir/results.json" \
  "$data_dir/fgd_reported_alloc_mean10seeds.csv" "$seeds" "$elapsed" > "$out_dir/results.md"
cat "$out_dir/results.md"
