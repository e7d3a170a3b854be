#!/usr/bin/env bash
# Quota and fairness on the Microsoft Philly trace: replays a window of the trace under the
# three queue policies (strata, fifo, strict) and prints them side by side.
# Usage: bench/philly/run.sh [PHILLY_CSV] [GPUS] [FROM_DAY] [DAYS]
# Needs the strata binary in build/release/bin (make build) or $STRATA_BIN.
set -euo pipefail
trace=${1:-../shared/data/philly/philly.csv}
gpus=${2:-384}
from_day=${3:-21}
days=${4:-7}
strata=${STRATA_BIN:-build/release/bin/strata}
[[ -x "$strata" ]] || { echo "run.sh: no strata binary at $strata (make build)" >&2; exit 1; }
[[ -r "$trace" ]] || { echo "run.sh: cannot read trace $trace" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for policy in strata fifo strict; do
  "$strata" sim philly --trace "$trace" --gpus "$gpus" --policy "$policy" \
    --from-day "$from_day" --days "$days" -o json > "$out/$policy.json"
done
python3 - "$out" <<'PY'
import json, sys
runs = {p: json.load(open(f"{sys.argv[1]}/{p}.json")) for p in ("strata", "fifo", "strict")}
r0 = runs["strata"]
print(f"window: days {r0['from_day']}..{r0['from_day'] + r0['days']}, {r0['gpus']} GPUs, "
      f"{r0['jobs']} jobs, {r0['gpu_hours']} GPU-hours")
rows = [("utilisation %", lambda r: f"{100 * r['utilisation']:.1f}"),
        ("queueing mean s", lambda r: f"{r['queueing']['mean_s']:.0f}"),
        ("queueing p50 s", lambda r: f"{r['queueing']['p50_s']:.0f}"),
        ("queueing p95 s", lambda r: f"{r['queueing']['p95_s']:.0f}"),
        ("JCT mean s", lambda r: f"{r['jct']['mean_s']:.0f}"),
        ("JCT p95 s", lambda r: f"{r['jct']['p95_s']:.0f}"),
        ("preemptions", lambda r: str(r["preemptions"])),
        ("lost GPU-hours", lambda r: f"{r['lost_gpu_hours']:.1f}"),
        ("lost % of GPU-hours", lambda r: f"{100 * r['lost_fraction']:.3f}"),
        ("never placed", lambda r: str(r["unfinished_jobs"])),
        ("replay run time s", lambda r: f"{r['run_time_s']:.1f}")]
print(f"| {'':24} | {'strata':>10} | {'fifo':>10} | {'strict':>10} |")
print(f"|{'-' * 26}|{'-' * 12}|{'-' * 12}|{'-' * 12}|")
for name, cell in rows:
    print(f"| {name:24} | " + " | ".join(f"{cell(runs[p]):>10}" for p in runs) + " |")
print("\nqueueing delay p95 s per queue (quota GPUs under strata/strict)")
print(f"| {'queue':8} | {'quota':>7} | {'jobs':>6} | {'strata':>8} | {'fifo':>8} | {'strict':>8} |")
for name, q in sorted(r0["queues"].items(), key=lambda kv: kv[1]["quota_gpus"]):
    cells = [f"{runs[p]['queues'].get(name, {}).get('queueing', {}).get('p95_s', 0):>8.0f}"
             for p in runs]
    print(f"| {name:8} | {q['quota_gpus']:>7.1f} | {q['queueing']['jobs']:>6} | "
          + " | ".join(cells) + " |")
PY
