#!/usr/bin/env bash
# Live check of the serving model: the start of the Mooncake trace replayed in real time through
# the real gateway onto 4 `strata engine-sim` processes (time-scaled), then the same slice in
# `strata sim serve` (virtual time, the same engine model and picker), and the difference.
#
#   bench/serve/live_check.sh TRACE.jsonl [REQUESTS] [TIME_SCALE]
#
# Environment: STRATA (the binary; default build/release/bin/strata), RATE_SCALE (default 0.165:
# 4 replicas at about the load 8 replicas get from 0.33), POLICY (default strata), OFFLOAD_GIB
# (host KV tier per engine, default 0), REPLICAS (default 4), GATEWAY_THREADS (the gateway's event
# loops; default: the gateway's own default, one per core), BYTES_PER_TOKEN (prompt text per token;
# default 4 / TIME_SCALE, see below).
set -euo pipefail

trace=${1:?usage: live_check.sh TRACE.jsonl [REQUESTS] [TIME_SCALE]}
requests=${2:-400}
time_scale=${3:-4}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
strata=${STRATA:-$root/build/release/bin/strata}
rate_scale=${RATE_SCALE:-0.165}
policy=${POLICY:-strata}
offload=${OFFLOAD_GIB:-0}
replicas=${REPLICAS:-4}
gateway_threads=${GATEWAY_THREADS:-}
# The gateway's picker prices a 64-byte block of prompt at 4 ms of prefill in real time (16
# tokens of English at the 8b-h100 profile's 250 us per token) and credits an engine's progress
# on its oldest prefill at that rate, as `sim serve`'s picker does at the engines' own rate. An
# engine-sim at time scale S prefills 16 S tokens in 4 ms: the replay writes 4 / S bytes per
# token (2 at S = 2) so that the live gateway prices the engines' prefill as the simulator does.
bytes_per_token=${BYTES_PER_TOKEN:-$(python3 -c "print(max(1, round(4 / $time_scale)))")}
[[ -x $strata ]] || { echo "live_check: no strata binary at $strata (set STRATA)" >&2; exit 2; }
[[ -r $trace ]] || { echo "live_check: cannot read trace $trace" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Waits for a process to print its "listening on ...:PORT" line; prints PORT.
port_of() {
  local log=$1 line
  for _ in $(seq 1 200); do
    line=$(grep -o 'listening on [^ ]*' "$log" | head -1 || true)
    if [[ -n $line ]]; then echo "${line##*:}"; return 0; fi
    sleep 0.05
  done
  echo "live_check: no listening line in $log:" >&2
  cat "$log" >&2
  return 1
}

endpoints=()
engine_ports=()
for i in $(seq 1 "$replicas"); do
  "$strata" engine-sim --port 0 --model llama-3-8b --time-scale "$time_scale" \
    --kv-offload-gib "$offload" >"$work/engine$i.log" 2>&1 &
  pids+=($!)
  engine_ports+=("$(port_of "$work/engine$i.log")")
  endpoints+=("\"127.0.0.1:${engine_ports[-1]}\"")
done
# The gateway scrapes every 100 ms of engine time, as the simulator's gateway does.
scrape_ms=$(python3 -c "print(max(1, round(100 / $time_scale)))")
cat >"$work/gateway.yaml" <<EOF
policy: $policy
scrapeIntervalMs: $scrape_ms
${gateway_threads:+threads: $gateway_threads}
limits: {maxBodyBytes: 16777216, upstreamTimeoutMs: 3600000, readTimeoutMs: 600000}
models:
- name: llama-3-8b
  versions:
  - {name: v1, weight: 1, endpoints: [$(IFS=,; echo "${endpoints[*]}")]}
EOF
"$strata" gateway --listen 127.0.0.1:0 --config "$work/gateway.yaml" >"$work/gateway.log" 2>&1 &
pids+=($!)
gateway_port=$(port_of "$work/gateway.log")

echo "live: $replicas engine-sims x$time_scale behind the gateway (policy $policy," \
  "${gateway_threads:-default} event loops), $requests requests at rate scale $rate_scale," \
  "$bytes_per_token bytes of prompt per token" >&2
python3 "$here/live_replay.py" --trace "$trace" --gateway "127.0.0.1:$gateway_port" \
  --rate-scale "$rate_scale" --time-scale "$time_scale" --max-requests "$requests" \
  --bytes-per-token "$bytes_per_token" >"$work/live.json"
# The engines' own view of the same run (engine lateness, as against the client's delivery
# lateness): their vllm:inter_token_latency_seconds histograms.
for port in "${engine_ports[@]}"; do
  python3 -c "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(
    'http://127.0.0.1:$port/metrics').read().decode())" >"$work/metrics-$port.txt"
done
echo "load average after the live run: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$strata" sim serve --trace "$trace" --format mooncake --replicas "$replicas" \
  --rate-scale "$rate_scale" --max-requests "$requests" --policy "$policy" \
  --kv-offload-gib "$offload" -o json >"$work/sim.json"

python3 - "$work/live.json" "$work/sim.json" "$work"/metrics-*.txt <<'EOF'
import json, re, sys
live = json.load(open(sys.argv[1]))
sim = json.load(open(sys.argv[2]))
# The engines' own figures, summed over engines: histograms (bucket counts, sum, count) and
# counters by metric name, and each engine's finished requests.
histograms, counters, per_engine = {}, {}, []
for path in sys.argv[3:]:
    finished = 0.0
    for line in open(path):
        m = re.match(r'([\w:]+?)(_bucket|_sum|_count|_total)?\{([^}]*)\} (\S+)$', line.strip())
        if not m or m.group(2) is None:
            continue
        name, kind, labels, value = m.group(1), m.group(2), m.group(3), float(m.group(4))
        if kind == "_total":
            counters[name] = counters.get(name, 0.0) + value
            continue
        h = histograms.setdefault(name, {"buckets": {}, "sum": 0.0, "count": 0.0})
        if kind == "_sum":
            h["sum"] += value
        elif kind == "_count":
            h["count"] += value
            if name == "vllm:e2e_request_latency_seconds":
                finished += value
        else:
            le = re.search(r'le="([^"]+)"', labels).group(1)
            le = float("inf") if le == "+Inf" else float(le)
            h["buckets"][le] = h["buckets"].get(le, 0.0) + value
    per_engine.append(int(finished))
def histogram_quantile(name, q):
    h = histograms.get(name)
    if not h or h["count"] == 0:
        return 0.0
    rank, below, lower = q * h["count"], 0.0, 0.0
    for le in sorted(h["buckets"]):
        if h["buckets"][le] >= rank:
            if le == float("inf"):
                return lower
            return lower + (le - lower) * (rank - below) / max(h["buckets"][le] - below, 1e-12)
        below, lower = h["buckets"][le], le
    return lower
def histogram_mean(name):
    h = histograms.get(name)
    return h["sum"] / h["count"] if h and h["count"] else 0.0
itl = "vllm:inter_token_latency_seconds"
lateness = "strata_engine_step_lateness_seconds"
engine_itl = {"mean": histogram_mean(itl), "p50": histogram_quantile(itl, 0.5)}
queries = counters.get("vllm:prefix_cache_queries", 0.0)
engine_hit_rate = counters.get("vllm:prefix_cache_hits", 0.0) / queries if queries else 0.0
engine_lateness = {"steps": histograms.get(lateness, {}).get("count", 0),
                   "mean": histogram_mean(lateness), "p50": histogram_quantile(lateness, 0.5),
                   "p99": histogram_quantile(lateness, 0.99)}
rows = [("TTFT p50 (s)", "ttft_seconds", "p50"), ("TTFT p90 (s)", "ttft_seconds", "p90"),
        ("TTFT p99 (s)", "ttft_seconds", "p99"), ("TPOT p50 (s)", "tpot_seconds", "p50"),
        ("TPOT p90 (s)", "tpot_seconds", "p90"), ("goodput share", "goodput_fraction", None),
        ("output tok/s", "output_tokens_per_second", None)]
worst = 0.0
print(json.dumps({"live": live, "virtual_time": sim, "engine_inter_token_seconds": engine_itl,
                  "engine_prefix_hit_rate": engine_hit_rate, "engine_requests": per_engine,
                  "engine_step_lateness_seconds": engine_lateness}, indent=2))
print("%-15s %10s %10s %8s" % ("figure", "live", "sim", "diff"))
for name, key, sub in rows:
    a = live[key][sub] if sub else live[key]
    b = sim[key][sub] if sub else sim[key]
    diff = (a - b) / b if b else 0.0
    worst = max(worst, abs(diff))
    print("%-15s %10.4f %10.4f %+7.1f%%" % (name, a, b, 100 * diff))
print("inter-token gap mean (s): virtual time %.4f, engines' own histogram %.4f (p50 %.4f), "
      "client %.4f (p50 %.4f)" % (sim["inter_token_seconds"]["mean"], engine_itl["mean"],
                                  engine_itl["p50"], live["inter_token_seconds"]["mean"],
                                  live["inter_token_seconds"]["p50"]))
print("prefix-cache hit rate: engines %.1f %%, virtual time %.1f %%; requests per engine %s"
      % (100 * engine_hit_rate, 100 * sim["prefix_hit_rate"], per_engine))
if engine_lateness["steps"]:
    print("engine step lateness (real ms): mean %.3f, p50 %.3f, p99 %.3f over %d steps"
          % (1e3 * engine_lateness["mean"], 1e3 * engine_lateness["p50"],
             1e3 * engine_lateness["p99"], engine_lateness["steps"]))
if "send_lateness_seconds" in live:
    print("client sends behind the trace (engine s): mean %.4f, max %.4f"
          % (live["send_lateness_seconds"]["mean"], live["send_lateness_seconds"]["max"]))
print("completed: live %d/%d, sim %d/%d; largest difference %.1f%% (target: within 15%%)"
      % (live["completed"], live["requests"], sim["completed"], sim["requests"], 100 * worst))
EOF
