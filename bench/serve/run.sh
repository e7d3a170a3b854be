#!/usr/bin/env bash
# Routing quality in virtual time: the Mooncake conversation trace and the Inference Extension's
# prefix-cache workloads, every policy side by side, through `strata sim serve`.
#
#   bench/serve/run.sh DATA_DIR [mooncake|prefix|azure|all]
#
# DATA_DIR holds llm/mooncake_conversation_trace.jsonl, llm/prefix-workloads/ and
# llm/azure2023_AzureLLMInferenceTrace_conv.csv (the shared data directory). `azure` checks how
# the picker balances a trace without shared prefixes, against least-request. Environment: STRATA (default build/release/bin/strata), OFFLOAD_GIB (host KV
# tier per engine for the Mooncake runs; default 200).
set -euo pipefail

data=${1:?usage: run.sh DATA_DIR [mooncake|prefix|azure|all]}
which=${2:-all}
root=$(cd "$(dirname "$0")/../.." && pwd)
strata=${STRATA:-$root/build/release/bin/strata}
offload=${OFFLOAD_GIB:-200}
[[ -x $strata ]] || { echo "run.sh: no strata binary at $strata (set STRATA)" >&2; exit 2; }

if [[ $which == mooncake || $which == all ]]; then
  for gib in 0 "$offload"; do
    echo "== mooncake, 8 replicas, rate scale 0.33, host KV tier ${gib} GiB per engine"
    "$strata" sim serve --trace "$data/llm/mooncake_conversation_trace.jsonl" --format mooncake \
      --replicas 8 --rate-scale 0.33 --kv-offload-gib "$gib" \
      --policy strata,round-robin,least-request,epp-default,prefix-only
  done
fi

if [[ $which == prefix || $which == all ]]; then
  for workload in "$data"/llm/prefix-workloads/*-values.yaml; do
    for scale in 0.1 0.2; do
      echo "== $(basename "$workload" -values.yaml), 8 replicas, rate scale $scale"
      "$strata" sim serve --trace "$workload" --format shared-prefix --replicas 8 \
        --rate-scale "$scale" \
        --policy strata,random,least-request,round-robin,epp-default,prefix-only
    done
  done
fi

if [[ $which == azure || $which == all ]]; then
  for replicas in 4 5 6; do
    echo "== azure 2023 conversation trace, $replicas replicas"
    "$strata" sim serve --trace "$data/llm/azure2023_AzureLLMInferenceTrace_conv.csv" \
      --format azure --replicas "$replicas" --policy strata,least-request
  done
fi
