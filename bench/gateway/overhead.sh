#!/usr/bin/env bash
# Gateway overhead: the same zero-latency `strata engine-sim` loaded with wrk directly, through
# nginx (a plain reverse proxy, proxy_buffering off, upstream keep-alive) and through the
# strata gateway (which parses every body and runs the endpoint picker), side by side in one
# run. Each of --runs rounds loads the three paths back to back (the order rotates between
# rounds); the JSON printed at the end holds every round and the medians. Each path's figures
# include the CPU time its proxy (or, for the direct path, the engine) spent per request.
#
#   bench/gateway/overhead.sh [--strata build/release/bin/strata] [--duration 10]
#                             [--connections 32] [--threads 2] [--workers W]
#                             [--variant small|stream|200k]
#                             [--runs 3] [--paced] [--rate R]
#                             [--engine-port P]   (use a replica already listening on P)
#                             [--syscalls] [--baseline OTHER_STRATA]
#
# --paced adds, after the peak rounds, rounds at half of strata's median peak req/s (or at
# --rate R): every connection waits an exponentially distributed pause between requests, so
# arrivals are close to Poisson at that rate and the latency percentiles are those of a
# half-loaded proxy, not of a saturated one.
#
# --syscalls adds, per path, the system calls and context switches per request of the proxy
# (of the engine for the direct path), counted by `perf stat` on kernel tracepoints during the
# wrk run ("syscalls_per_request" in each path's JSON; needs perf and tracefs).
#
# --baseline adds a fourth path: a second strata gateway from another build (the code before a
# change, say), loaded in the same rounds, so that a before/after comparison shares the
# engine, the machine's moment and the rotation ("baseline" in each round's JSON, and
# "strata_over_baseline_rps" / "_cpu_per_request" in the summary).
#
# --threads sets wrk's threads, and unless --workers says otherwise, nginx's worker processes
# and the strata gateway's event loops too.
#
# Needs nginx and wrk (Debian packages). Everything listens on 127.0.0.1.
set -euo pipefail

STRATA=build/release/bin/strata
DURATION=10
CONNECTIONS=32
THREADS=2
WORKERS=
VARIANT=small
RUNS=3
PACED=0
RATE=
ENGINE_PORT=
SYSCALLS=0
BASELINE=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) STRATA=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --variant) VARIANT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --paced) PACED=1; shift ;;
    --rate) PACED=1; RATE=$2; shift 2 ;;
    --engine-port) ENGINE_PORT=$2; shift 2 ;;
    --syscalls) SYSCALLS=1; shift ;;
    --baseline) BASELINE=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
WORKERS=${WORKERS:-$THREADS}
for tool in nginx wrk python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 1; }
done

# shellcheck source=bench/gateway/proxies.sh
source "$(dirname "$0")/proxies.sh"

# Starts a command in the background, its output in a log.
start_background() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  PIDS+=($!)
}

ENGINE_PID=
if [[ -z "$ENGINE_PORT" ]]; then
  start_background "$WORK/engine.log" "$STRATA" engine-sim --port 0 --model bench \
    --time-scale 0 --max-num-seqs 1024
  ENGINE_PID=${PIDS[-1]}
  ENGINE_PORT=$(wait_for_port "$WORK/engine.log")
fi

cat >"$WORK/gateway.yaml" <<YAML
threads: $WORKERS
limits: {maxBodyBytes: 8388608}
models:
- {name: bench, versions: [{name: v1, endpoints: ["127.0.0.1:$ENGINE_PORT"]}]}
YAML
start_background "$WORK/gateway.log" "$STRATA" gateway --listen 127.0.0.1:0 \
  --config "$WORK/gateway.yaml"
GATEWAY_PID=${PIDS[-1]}
GATEWAY_PORT=$(wait_for_port "$WORK/gateway.log")
PATH_NAMES=(direct nginx strata)
if [[ -n "$BASELINE" ]]; then
  start_background "$WORK/baseline.log" "$BASELINE" gateway --listen 127.0.0.1:0 \
    --config "$WORK/gateway.yaml"
  BASELINE_PID=${PIDS[-1]}
  BASELINE_PORT=$(wait_for_port "$WORK/baseline.log")
  PATH_NAMES+=(baseline)
fi

NGINX_PORT=$(free_port)
write_nginx_conf "$WORKERS" "$NGINX_PORT" "$ENGINE_PORT"
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' &
NGINX_PID=$!
PIDS+=("$NGINX_PID")
sleep 0.5
NGINX_WORKERS=$(pgrep -P "$NGINX_PID" | tr '\n' ' ')

case "$VARIANT" in
  small) BODY='{"model":"bench","max_tokens":8,"messages":[{"role":"user","content":"Hello there, how are you?"}]}' ;;
  stream) BODY='{"model":"bench","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"Hello there, how are you?"}]}' ;;
  200k) BODY=$(python3 -c 'import json; print(json.dumps({"model":"bench","max_tokens":8,"messages":[{"role":"user","content":"lorem ipsum dolor sit amet " * 7600}]}))') ;;
  *) echo "unknown variant $VARIANT" >&2; exit 2 ;;
esac
printf '%s' "$BODY" >"$WORK/body.json"

# $1: the mean pause in ms between a response and the connection's next request (0: none).
write_script() {
  cat <<LUA
local f = io.open("$WORK/body.json", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
local mean_pause_ms = $1
local thread_number = 0
function setup(thread)
  thread_number = thread_number + 1
  thread:set("seed", thread_number)
end
function init(args)
  math.randomseed(os.time() * 1000 + (seed or 0))
end
if mean_pause_ms > 0 then
  function delay()
    return -math.log(1 - math.random()) * mean_pause_ms
  end
end
function done(summary, latency, requests)
  io.write(string.format('{"rps":%.1f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"errors":%d}\n',
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status +
    summary.errors.timeout))
end
LUA
}
write_script 0 >"$WORK/peak.lua"

# CPU time (user + system, in clock ticks) used so far by the processes $@ and their threads.
cpu_ticks() {
  local total=0 pid
  for pid in "$@"; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
TICKS_PER_SECOND=$(getconf CLK_TCK)

SYSCALL_NAMES=(recvfrom sendto recvmsg sendmsg read write readv writev epoll_wait epoll_pwait
  epoll_ctl timerfd_settime futex accept4 close setsockopt)
SYSCALL_EVENTS="raw_syscalls:sys_enter,context-switches"
for name in "${SYSCALL_NAMES[@]}"; do SYSCALL_EVENTS+=",syscalls:sys_enter_$name"; done

# $1: port, $2: script, then the pids whose CPU time serves the path (the proxy's, or the
# engine's for the direct path). Prints wrk's JSON line with "cpu_us_per_request" added: the
# CPU the proxy spent per request, a figure that other load on the machine barely moves; with
# --syscalls, also "syscalls_per_request".
run_wrk() {
  local port=$1 script=$2; shift 2
  local before after line perf_pid=
  : >"$WORK/perf.csv"
  if [[ "$SYSCALLS" == 1 ]]; then
    # Counts every thread of the pids; the system calls of all of them, per request.
    perf stat -x, -o "$WORK/perf.csv" -e "$SYSCALL_EVENTS" -p "$(echo "$@" | tr ' ' ',')" \
      >/dev/null 2>&1 &
    perf_pid=$!
    sleep 0.3  # perf attaches to every thread before the load starts
  fi
  before=$(cpu_ticks "$@")
  line=$(wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" -s "$script" \
    "http://127.0.0.1:$port/v1/chat/completions" | tail -n 1)
  after=$(cpu_ticks "$@")
  if [[ -n "$perf_pid" ]]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" 2>/dev/null || true
  fi
  python3 -c '
import json, sys
r = json.loads(sys.argv[1])
n = r["rps"] * float(sys.argv[2])
r["cpu_us_per_request"] = round((int(sys.argv[3]) / int(sys.argv[4])) * 1e6 / n, 1) if n else None
counts = {}
for row in open(sys.argv[5]):
    cells = row.strip().split(",")
    if len(cells) > 2 and cells[0].replace(".", "").isdigit():
        name = cells[2].split(":")[-1].replace("sys_enter_", "").replace("sys_enter", "all")
        counts[name] = round(float(cells[0]) / n, 2) if n else None
if counts:
    r["syscalls_per_request"] = counts
print(json.dumps(r))' "$line" "$DURATION" "$((after - before))" "$TICKS_PER_SECOND" "$WORK/perf.csv"
}
# One round: every path back to back, the order rotated by $2. Prints one JSON object.
run_round() {
  local script=$1 rotation=$2 ports=("$ENGINE_PORT" "$NGINX_PORT" "$GATEWAY_PORT")
  local pids=("$ENGINE_PID" "$NGINX_WORKERS" "$GATEWAY_PID") names=("${PATH_NAMES[@]}")
  if [[ -n "$BASELINE" ]]; then ports+=("$BASELINE_PORT"); pids+=("$BASELINE_PID"); fi
  local out="{\"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\""
  for ((k = 0; k < ${#names[@]}; k++)); do
    local i=$(( (k + rotation) % ${#names[@]} ))
    # shellcheck disable=SC2086  # NGINX_WORKERS holds several pids
    out+=", \"${names[$i]}\": $(run_wrk "${ports[$i]}" "$script" ${pids[$i]})"
  done
  echo "$out}"
}

# Warm every path (connection pools, page cache) before measuring.
for port in "$ENGINE_PORT" "$NGINX_PORT" "$GATEWAY_PORT" ${BASELINE:+"$BASELINE_PORT"}; do
  wrk -t 1 -c 4 -d 1s -s "$WORK/peak.lua" "http://127.0.0.1:$port/v1/chat/completions" >/dev/null
done
: >"$WORK/peak.jsonl"
for ((r = 0; r < RUNS; r++)); do run_round "$WORK/peak.lua" "$r" >>"$WORK/peak.jsonl"; done

: >"$WORK/paced.jsonl"
if [[ "$PACED" == 1 ]]; then
  if [[ -z "$RATE" ]]; then
    RATE=$(python3 -c 'import json,statistics,sys; print(round(statistics.median(json.loads(l)["strata"]["rps"] for l in open(sys.argv[1])) / 2))' "$WORK/peak.jsonl")
  fi
  # Each connection's cycle is its pause plus the (short) latency; the pause carries the rate.
  PAUSE_MS=$(python3 -c "print($CONNECTIONS * 1000.0 / $RATE)")
  write_script "$PAUSE_MS" >"$WORK/paced.lua"
  for ((r = 0; r < RUNS; r++)); do run_round "$WORK/paced.lua" "$r" >>"$WORK/paced.jsonl"; done
fi

python3 - "$WORK/peak.jsonl" "$WORK/paced.jsonl" "$VARIANT" "$CONNECTIONS" "$THREADS" \
  "${RATE:-0}" "$(nginx -v 2>&1 | cut -d/ -f2)" "$WORKERS" <<'PY'
import json, statistics, sys
peak = [json.loads(l) for l in open(sys.argv[1])]
paced = [json.loads(l) for l in open(sys.argv[2])]

def summary(rounds):
    if not rounds:
        return None
    paths = [p for p in ("direct", "nginx", "strata", "baseline") if p in rounds[0]]
    med = {path: {key: statistics.median(r[path][key] or 0 for r in rounds)
                  for key in ("rps", "p50_ms", "p90_ms", "p99_ms", "cpu_us_per_request")}
           for path in paths}

    def ratio(other, key):
        values = [r["strata"][key] / r[other][key] for r in rounds
                  if r[other][key] and r["strata"][key]]
        return round(statistics.median(values), 3) if values else None

    extra = {}
    if "baseline" in paths:
        extra = {"strata_over_baseline_rps": ratio("baseline", "rps"),
                 "strata_over_baseline_cpu_per_request": ratio("baseline", "cpu_us_per_request")}
    return {
        "rounds": rounds, "median": med,
        "strata_over_nginx_rps": ratio("nginx", "rps"),
        "strata_over_nginx_cpu_per_request": ratio("nginx", "cpu_us_per_request"),
        **extra,
        "strata_added_p50_ms": round(med["strata"]["p50_ms"] - med["direct"]["p50_ms"], 3),
        "strata_added_p99_ms": round(med["strata"]["p99_ms"] - med["direct"]["p99_ms"], 3),
        "nginx_added_p50_ms": round(med["nginx"]["p50_ms"] - med["direct"]["p50_ms"], 3),
        "nginx_added_p99_ms": round(med["nginx"]["p99_ms"] - med["direct"]["p99_ms"], 3),
        "errors": sum(r[p]["errors"] for r in rounds for p in paths),
    }

result = {"variant": sys.argv[3], "connections": int(sys.argv[4]), "threads": int(sys.argv[5]),
          "workers": int(sys.argv[8]), "nginx_version": sys.argv[7], "peak": summary(peak)}
if paced:
    result["paced"] = {"target_rps": float(sys.argv[6]), **summary(paced)}
print(json.dumps(result, indent=2))
PY
