#!/usr/bin/env bash
# Reproduces bench/autoscale/RESULTS.md: every policy at both cold starts on the Azure 2023
# conversation trace, in virtual time. Usage: bench/autoscale/run.sh [TRACE] [STRATA_BINARY]
set -euo pipefail
trace=${1:-../shared/data/llm/azure2023_AzureLLMInferenceTrace_conv.csv}
strata=${2:-build/release/bin/strata}
printf '| cold start | policy | SLO attainment (TTFT <= 2 s) | GPU-hours | x static-peak | scale up/down | held by gateway | TTFT p99 (s) |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for cold in 82s 294s; do
  peak_hours=""
  # "strata-learned": capacity learned from misses alone (--target-busy-share 0), what the live
  # platform runs while its gateway does not report busy time; "strata-tokens": strata planning
  # in prompt tokens (--plan-in-prompt-tokens). Both for comparison.
  for policy in static-peak strata strata-learned strata-tokens kpa keda; do
    flags=(--policy "$policy")
    [[ $policy == strata-learned ]] && flags=(--policy strata --target-busy-share 0)
    [[ $policy == strata-tokens ]] && flags=(--policy strata --plan-in-prompt-tokens)
    json=$("$strata" sim autoscale --trace "$trace" --format azure --cold-start "$cold" \
      --profile 8b-h100 "${flags[@]}" -o json)
    python3 - "$cold" "$policy" "$peak_hours" <<PY
import json, sys
r = json.loads('''$json''')
cold, policy, peak = sys.argv[1], sys.argv[2], sys.argv[3]
ratio = f"{r['gpu_hours'] / float(peak):.2f}" if peak else "1.00"
print(f"| {cold} | {policy} | {r['slo_attainment']*100:.2f} % | {r['gpu_hours']:.2f} | {ratio} | "
      f"{r['scale_events']['up']}/{r['scale_events']['down']} | "
      f"{r['scale_up_queueing']['held_by_gateway']} | {r['ttft_seconds']['p99']:.2f} |")
PY
    if [[ $policy == static-peak ]]; then
      peak_hours=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['gpu_hours'])" "$json")
    fi
  done
done
# With SPREAD=1: strata at headroom 0, 0.005, 0.01, 0.015 and 0.02 at each cold start, to show
# how far a tiny change of input moves its result (the median is the figure to quote).
if [[ ${SPREAD:-0} == 1 ]]; then
  printf '\n| cold start | headroom | SLO attainment | GPU-hours |\n|---|---|---|---|\n'
  for cold in 82s 294s; do
    for headroom in 0 0.005 0.01 0.015 0.02; do
      "$strata" sim autoscale --trace "$trace" --format azure --cold-start "$cold" \
        --profile 8b-h100 --policy strata --headroom "$headroom" -o json |
        python3 -c "import json, sys; r = json.load(sys.stdin); print(f\"| $cold | $headroom | {r['slo_attainment']*100:.2f} % | {r['gpu_hours']:.2f} |\")"
    done
  done
fi
# With SWEEP=1: strata's SLO attainment and GPU-hours against its headroom parameter.
if [[ ${SWEEP:-0} == 1 ]]; then
  printf '\n| cold start | headroom | SLO attainment | GPU-hours |\n|---|---|---|---|\n'
  for cold in 82s 294s; do
    for headroom in 0 0.1 0.2 0.3 0.5 0.75; do
      "$strata" sim autoscale --trace "$trace" --format azure --cold-start "$cold" \
        --profile 8b-h100 --policy strata --headroom "$headroom" -o json |
        python3 -c "import json, sys; r = json.load(sys.stdin); print(f\"| $cold | $headroom | {r['slo_attainment']*100:.2f} % | {r['gpu_hours']:.2f} |\")"
    done
  done
fi
