#!/usr/bin/env bash
# Gateway overhead: the same zero-latency `strata engine-sim` loaded with wrk directly, through
# nginx (a plain reverse proxy, proxy_buffering off, upstream keep-alive) and through the
# strata gateway (which parses every body and runs the endpoint picker). Prints one JSON object.
#
#   bench/gateway/overhead.sh [--strata build/release/bin/strata] [--duration 10]
#                             [--connections 32] [--threads 2] [--variant small|stream|200k]
#                             [--engine-port P]   (use a replica already listening on P)
#
# Needs nginx and wrk (Debian packages). Everything listens on 127.0.0.1.
set -euo pipefail

STRATA=build/release/bin/strata
DURATION=10
CONNECTIONS=32
THREADS=2
VARIANT=small
ENGINE_PORT=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --strata) STRATA=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --variant) VARIANT=$2; shift 2 ;;
    --engine-port) ENGINE_PORT=$2; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
for tool in nginx wrk python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed" >&2; exit 1; }
done

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Starts a command in the background, its output in a log.
start_background() {
  local log=$1; shift
  "$@" >"$log" 2>&1 &
  PIDS+=($!)
}

# Echoes the port from the "listening on ...:PORT" line of a log, once it appears.
wait_for_port() {
  for _ in $(seq 1 200); do
    if port=$(grep -oE 'listening on \S*:[0-9]+' "$1" | grep -oE '[0-9]+$'); then
      echo "$port"; return 0
    fi
    sleep 0.05
  done
  echo "error: no 'listening on' line in $1: $(cat "$1")" >&2
  exit 1
}

if [[ -z "$ENGINE_PORT" ]]; then
  start_background "$WORK/engine.log" "$STRATA" engine-sim --port 0 --model bench \
    --time-scale 0 --max-num-seqs 1024
  ENGINE_PORT=$(wait_for_port "$WORK/engine.log")
fi

cat >"$WORK/gateway.yaml" <<YAML
threads: $THREADS
limits: {maxBodyBytes: 8388608}
models:
- {name: bench, versions: [{name: v1, endpoints: ["127.0.0.1:$ENGINE_PORT"]}]}
YAML
start_background "$WORK/gateway.log" "$STRATA" gateway --listen 127.0.0.1:0 \
  --config "$WORK/gateway.yaml"
GATEWAY_PORT=$(wait_for_port "$WORK/gateway.log")

NGINX_PORT=$(free_port)
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<NGINX
worker_processes $THREADS;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx;
  proxy_temp_path $WORK/nginx;
  client_max_body_size 8m;
  client_body_buffer_size 8m;
  upstream engine { server 127.0.0.1:$ENGINE_PORT; keepalive 256; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
NGINX
nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' &
PIDS+=($!)
sleep 0.5

case "$VARIANT" in
  small) BODY='{"model":"bench","max_tokens":8,"messages":[{"role":"user","content":"Hello there, how are you?"}]}' ;;
  stream) BODY='{"model":"bench","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"Hello there, how are you?"}]}' ;;
  200k) BODY=$(python3 -c 'import json; print(json.dumps({"model":"bench","max_tokens":8,"messages":[{"role":"user","content":"lorem ipsum dolor sit amet " * 7600}]}))') ;;
  *) echo "unknown variant $VARIANT" >&2; exit 2 ;;
esac
printf '%s' "$BODY" >"$WORK/body.json"
cat >"$WORK/post.lua" <<LUA
local f = io.open("$WORK/body.json", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
function done(summary, latency, requests)
  io.write(string.format('{"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"errors":%d}\n',
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status +
    summary.errors.timeout))
end
LUA

run_wrk() {
  wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" -s "$WORK/post.lua" \
    "http://127.0.0.1:$1/v1/chat/completions" | tail -n 1
}
# Warm every path (connection pools, page cache) before measuring.
for port in "$ENGINE_PORT" "$NGINX_PORT" "$GATEWAY_PORT"; do
  wrk -t 1 -c 4 -d 1s -s "$WORK/post.lua" "http://127.0.0.1:$port/v1/chat/completions" >/dev/null
done
DIRECT=$(run_wrk "$ENGINE_PORT")
NGINX_RESULT=$(run_wrk "$NGINX_PORT")
STRATA_RESULT=$(run_wrk "$GATEWAY_PORT")
python3 - "$DIRECT" "$NGINX_RESULT" "$STRATA_RESULT" "$VARIANT" "$CONNECTIONS" "$THREADS" <<'PY'
import json, sys
direct, nginx, strata = (json.loads(a) for a in sys.argv[1:4])
print(json.dumps({
    "variant": sys.argv[4], "connections": int(sys.argv[5]), "threads": int(sys.argv[6]),
    "direct": direct, "nginx": nginx, "strata": strata,
    "strata_over_nginx_rps": round(strata["rps"] / nginx["rps"], 3) if nginx["rps"] else None,
    "strata_added_p99_ms": round(strata["p99_ms"] - direct["p99_ms"], 3),
    "nginx_added_p99_ms": round(nginx["p99_ms"] - direct["p99_ms"], 3),
}, indent=2))
PY
