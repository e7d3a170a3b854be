#!/usr/bin/env bash
# Live check of strata's autoscaling policy inside `strata up`: a slice of an Azure LLM trace is
# replayed in real time through the platform's gateway onto a Service whose replicas are
# `strata engine-sim` processes with a start-up delay, while the Service's replica counts are
# sampled; then the same slice is replayed by `strata sim autoscale` (virtual time, the same
# policy, picker and engine model) with the cold start the platform measured, and the two are
# compared minute by minute.
#
#   bench/autoscale/live_check.sh TRACE.csv [STRATA_BINARY]
#
# Environment: FROM_MINUTE (the slice's first minute of the trace, default 24), MINUTES (its
# length, default 12), STARTUP_DELAY (engine-sim's weight loading in seconds, default 15), KEEP
# (a directory to copy the run's files to: the slice, both reports with the live per-sample
# timeline, strata up's log and `describe service`).
#
# Real time, not time-scaled: the live autoscaler's windows (10 s burst, 60 s level, 120 s trend,
# the scale-down delay) are wall-clock durations, so engines running N times faster would meet
# a policy whose windows last N times longer in their time than the simulator's. The slice runs
# for MINUTES minutes.
#
# The live service starts with the replicas `sim autoscale` starts with (what the slice's first
# minute needs): it is applied with that many as minReplicas, and once they are ready applied
# again with minReplicas 1, which gives the version a fresh policy that steps down from the
# count in place, as the simulator's does; the replay starts at once.
#
# Prints one JSON object (live, virtual time, and the minute-by-minute comparison) and a table.
set -euo pipefail

trace=${1:?usage: live_check.sh TRACE.csv [STRATA_BINARY]}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=../../tools/strata_up.sh
source "$root/tools/strata_up.sh"
strata=${2:-$root/build/release/bin/strata}
from_minute=${FROM_MINUTE:-24}
minutes=${MINUTES:-12}
startup_delay=${STARTUP_DELAY:-15}
[[ -x $strata ]] || { echo "live_check: no strata binary at $strata" >&2; exit 2; }
[[ -r $trace ]] || { echo "live_check: cannot read trace $trace" >&2; exit 2; }
strata=$(cd "$(dirname "$strata")" && pwd)/$(basename "$strata")

work=$(mktemp -d /tmp/strata-autoscale-live-XXXXXX)
up_pid=""
cleanup() {
  if [[ -n $up_pid ]]; then
    kill "$up_pid" 2>/dev/null || true
    wait "$up_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The slice, as a trace file of its own (both replays count time from its first request).
PYTHONDONTWRITEBYTECODE=1 python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
from azure_replay import parse_timestamp
source, start, length, out = sys.argv[2], float(sys.argv[3]) * 60, float(sys.argv[4]) * 60, sys.argv[5]
with open(source) as trace, open(out, "w") as sliced:
    first = None
    for i, line in enumerate(trace):
        if i == 0 and line.startswith("TIMESTAMP"):
            sliced.write(line)
            continue
        at = parse_timestamp(line.split(",", 1)[0])
        first = at if first is None else first
        if start <= at - first < start + length:
            sliced.write(line)
' "$here" "$trace" "$from_minute" "$minutes" "$work/slice.csv"
requests=$(($(wc -l <"$work/slice.csv") - 1))

sim() {
  "$strata" sim autoscale --trace "$work/slice.csv" --format azure --cold-start "$1" \
    --profile 8b-h100 --policy strata -o json
}
initial=$(sim "${startup_delay}s" | python3 -c 'import json, sys; print(json.load(sys.stdin)["replicas"]["initial"])')
echo "live_check: $requests requests (minutes $from_minute to $((from_minute + minutes)) of" \
  "$(basename "$trace")), $initial replicas at the start, engine start-up delay ${startup_delay}s" >&2

"$strata" up --data-dir "$work/data" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
  --simulate 4x8:H100-80GB,racks=2 >"$work/up.log" 2>&1 &
up_pid=$!
if ! wait_for_strata_up "$work/up.log" "$up_pid"; then
  echo "live_check: strata up did not start:" >&2
  cat "$work/up.log" >&2
  exit 1
fi
api=$STRATA_API gateway=${STRATA_GATEWAY#http://}
export STRATA_TOKEN=$STRATA_ADMIN_TOKEN  # for azure_replay.py and ready()

# The Service: one GPU per replica, engine-sim with the 8b-h100 profile (as the simulator's
# engine model) loading its weights for the start-up delay; strata's rate policy.
service() {
  cat >"$work/service.yaml" <<EOF
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: azure-conv, namespace: default}
spec:
  model: azure-conv
  engine:
    command: [strata, engine-sim, --model, azure-conv, --profile, 8b-h100,
              --startup-delay, ${startup_delay}s]
  resources: {cpu: "1", memory: 1Gi, gpu: 1}
  minReplicas: $1
  maxReplicas: 32
  autoscaling: {metric: rps, target: 1}
EOF
  "$strata" apply -f "$work/service.yaml" --server "$api" >/dev/null
}
ready() {
  python3 -c '
import json, os, sys, urllib.request
url = sys.argv[1] + "/apis/strata.dev/v1alpha1/namespaces/default/services/azure-conv"
request = urllib.request.Request(url, headers={"Authorization": "Bearer " + os.environ["STRATA_TOKEN"]})
versions = json.load(urllib.request.urlopen(request)).get("status", {}).get("versions") or [{}]
print(versions[0].get("readyReplicas", 0))' "$api" 2>/dev/null || echo 0
}
service "$initial"
for _ in $(seq 1 $((4 * startup_delay + 120))); do
  [[ $(ready) -ge $initial ]] && break
  sleep 0.5
done
if [[ $(ready) -lt $initial ]]; then
  echo "live_check: the service has $(ready) of $initial replicas ready:" >&2
  "$strata" describe service azure-conv --server "$api" >&2 || true
  exit 1
fi
service 1
python3 "$here/azure_replay.py" --trace "$work/slice.csv" --gateway "$gateway" --api "$api" \
  --service azure-conv --model azure-conv >"$work/live.json"
echo "live_check: load average after the live run: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$strata" describe service azure-conv --server "$api" >"$work/describe.txt" 2>&1 || true
kill "$up_pid" 2>/dev/null || true
wait "$up_pid" 2>/dev/null || true
up_pid=""

# The simulator with the cold start the platform measured (creation to readiness, mean).
cold=$(python3 -c 'import json, sys; print("%dms" % round(1000 * json.load(open(sys.argv[1]))["cold_start_seconds"]))' "$work/live.json")
sim "$cold" >"$work/sim.json"

if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  cp "$work"/slice.csv "$work"/*.json "$work"/up.log "$work"/describe.txt "$KEEP"/
fi

python3 - "$work/live.json" "$work/sim.json" "$cold" <<'EOF'
import json, sys
live = json.load(open(sys.argv[1]))
sim = json.load(open(sys.argv[2]))
rows = []
for i in range(min(len(live["minutes"]), len(sim["minutes"]))):
    a, b = live["minutes"][i], sim["minutes"][i]
    rows.append({"minute": i, "arrivals": [a["arrivals"], b["arrivals"]],
                 "late": [a["late"], b["late"]], "desired": [a["desired"], b["desired"]],
                 "ready": [round(a["replicas_ready"], 2), round(b["replicas_ready"], 2)],
                 "paid": [round(a["replicas_paid"], 2), round(b["replicas_paid"], 2)],
                 "provisioned_rate": [round(a["forecast_rate"], 2), round(b["forecast_rate"], 2)],
                 "capacity": [round(a["capacity"], 2), round(b["capacity"], 2)]})
full = [r for r in rows if r["arrivals"][1] > 0 and r["minute"] < len(rows) - 1]
summary = {
    "cold_start": sys.argv[3],
    "slo_attainment": [live["slo_attainment"], sim["slo_attainment"]],
    "gpu_hours": [live["gpu_hours"], sim["gpu_hours"]],
    "ttft_p99_seconds": [live["ttft_seconds"]["p99"], sim["ttft_seconds"]["p99"]],
    "minutes_compared": len(full),
    "minutes_desired_equal": sum(r["desired"][0] == r["desired"][1] for r in full),
    "mean_abs_ready_difference":
        sum(abs(r["ready"][0] - r["ready"][1]) for r in full) / max(1, len(full)),
    "live_errors": live["errors"],
    "send_lateness_max_seconds": live["send_lateness_seconds"]["max"],
}
live_brief = {k: v for k, v in live.items() if k != "timeline"}
print(json.dumps({"summary": summary, "minutes": rows, "live": live_brief, "virtual_time": sim},
                 indent=1))
print("minute | arrivals live/sim | late live/sim | desired live/sim | ready live/sim | "
      "provisioned req/s live/sim | capacity req/s live/sim")
for r in rows:
    print("%6d | %4d / %4d | %3d / %3d | %2d / %2d | %5.2f / %5.2f | %5.2f / %5.2f | %4.2f / %4.2f"
          % (r["minute"], *r["arrivals"], *r["late"], *r["desired"], *r["ready"],
             *r["provisioned_rate"], *r["capacity"]))
print("SLO attainment live %.2f %% / sim %.2f %%; GPU-hours live %.3f / sim %.3f; desired equal "
      "in %d of %d minutes; ready replicas differ by %.2f on average; cold start %s"
      % (100 * summary["slo_attainment"][0], 100 * summary["slo_attainment"][1],
         *summary["gpu_hours"], summary["minutes_desired_equal"], summary["minutes_compared"],
         summary["mean_abs_ready_difference"], summary["cold_start"]))
EOF
