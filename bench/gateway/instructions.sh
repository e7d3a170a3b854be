#!/usr/bin/env bash
# User-space instructions per proxied request: the strata gateway (one event loop) and nginx
# (one worker, a plain reverse proxy as in overhead.sh) each run under valgrind's callgrind in
# front of the same zero-latency `strata engine-sim` (which runs natively), and wrk loads them in
# turn with the small chat request of overhead.sh. Instruction counts do not move with the
# machine's load, unlike CPU time on a shared VM, so a change of a few percent in the proxy's
# own work shows here when overhead.sh's rounds drown it. They leave out the kernel (system
# calls, TCP) and say nothing of cache misses or stalls: a complement to overhead.sh, not a
# replacement.
#
#   bench/gateway/instructions.sh [--strata build/release/bin/strata] [--baseline OTHER_STRATA]
#                                 [--duration 10] [--connections 8]
#
# Counted: for nginx, its worker process; for strata, the event loop's work
# (gateway::EventLoop::Loop and what it calls), so that the scrape thread, whose work follows the
# clock and not the load, is left out. Each proxy is warmed for 3 s with counting off.
# --baseline counts a second strata build the same way (the code before a change, say).
#
# Needs valgrind, nginx and wrk (Debian packages). Prints JSON.
set -euo pipefail

STRATA=build/release/bin/strata
BASELINE=
DURATION=10
CONNECTIONS=8
while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) STRATA=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
for tool in valgrind callgrind_control callgrind_annotate nginx wrk python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 1; }
done

# shellcheck source=bench/gateway/proxies.sh
source "$(dirname "$0")/proxies.sh"

"$STRATA" engine-sim --port 0 --model bench --time-scale 0 --max-num-seqs 1024 \
  >"$WORK/engine.log" 2>&1 &
PIDS+=($!)
ENGINE_PORT=$(wait_for_port "$WORK/engine.log")

cat >"$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"model":"bench","max_tokens":8,"messages":[{"role":"user","content":"Hello there, how are you?"}]}'
wrk.headers["Content-Type"] = "application/json"
LUA

# $1: name, $2: port, $3: callgrind's pid, $4: the function whose inclusive count is the
# proxy's work ("" for the whole process). Loads the proxy, then prints its JSON figures.
measure() {
  local name=$1 port=$2 pid=$3 function=$4 requests
  wrk -t 1 -c "$CONNECTIONS" -d 3s -s "$WORK/post.lua" \
    "http://127.0.0.1:$port/v1/chat/completions" >/dev/null
  callgrind_control -i on "$pid" >/dev/null 2>&1
  requests=$(wrk -t 1 -c "$CONNECTIONS" -d "${DURATION}s" -s "$WORK/post.lua" \
    "http://127.0.0.1:$port/v1/chat/completions" | awk '/requests in/ {print $1}')
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  python3 - "$name" "$requests" "$function" "$WORK/callgrind.$name".* <<'PY'
import json, re, subprocess, sys
name, requests, function, files = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
total = 0
for path in files:
    if function:
        out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", path],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*([\d,]+) ", line)
            if m and function in line:
                total = max(total, int(m.group(1).replace(",", "")))
    else:
        for line in open(path):
            if line.startswith("summary:") or line.startswith("totals:"):
                total = max(total, int(line.split()[1]))
print(json.dumps({"name": name, "requests": requests,
                  "instructions_per_request": round(total / requests) if requests else None}))
PY
}

# $1: name, $2: the strata binary.
measure_strata() {
  cat >"$WORK/$1.yaml" <<YAML
threads: 1
limits: {maxBodyBytes: 8388608}
models:
- {name: bench, versions: [{name: v1, endpoints: ["127.0.0.1:$ENGINE_PORT"]}]}
YAML
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.$1.%p" \
    "$2" gateway --listen 127.0.0.1:0 --config "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  measure "$1" "$(wait_for_port "$WORK/$1.log")" "$pid" "gateway::EventLoop::Loop()"
}

measure_nginx() {
  local port
  port=$(free_port)
  write_nginx_conf 1 "$port" "$ENGINE_PORT" off
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$WORK/callgrind.nginx.%p" \
    nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' \
    >"$WORK/nginx.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" \
      2>/dev/null && break
    sleep 0.1
  done
  measure nginx "$port" "$pid" ""
}

{
  measure_nginx
  measure_strata strata "$STRATA"
  if [[ -n "$BASELINE" ]]; then measure_strata baseline "$BASELINE"; fi
} >"$WORK/results.jsonl"

python3 - "$WORK/results.jsonl" "$(nginx -v 2>&1 | cut -d/ -f2)" "$CONNECTIONS" <<'PY'
import json, sys
rows = {r["name"]: r for r in map(json.loads, open(sys.argv[1]))}
out = {"nginx_version": sys.argv[2], "connections": int(sys.argv[3]), **rows}
per = {name: row["instructions_per_request"] for name, row in rows.items()}
out["strata_over_nginx"] = round(per["strata"] / per["nginx"], 3)
if "baseline" in per:
    out["strata_over_baseline"] = round(per["strata"] / per["baseline"], 3)
print(json.dumps(out, indent=1))
PY
