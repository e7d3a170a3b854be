#!/usr/bin/env bash
# strata gateway in front of llm-d-inference-sim, the vLLM-API simulator the llm-d project
# writes (docs/engines.md): three replicas as real processes on loopback, one of them reporting a
# busy engine through its --fake-metrics. Checks that the gateway scrapes their vLLM metrics and
# routes by them (the busy replica draws no request), streams their SSE chat completions with
# usage and counts the tokens, passes their errors through as they are, and loses no request while
# a replica drains (SIGTERM: its stream finishes, its 503s go to the other replicas).
#
# llm-d-inference-sim comes from $LLM_D_INFERENCE_SIM or PATH. The Go module proxy this project
# builds from refuses github.com/llm-d/* (403, docs/engines.md), so nothing here installs it:
# without it the test is skipped (77).
set -uo pipefail
strata=${STRATA_BIN:?the strata binary}
sim=${LLM_D_INFERENCE_SIM:-$(command -v llm-d-inference-sim || true)}
if [[ -z $sim || ! -x $sim ]]; then
  echo "SKIP: no llm-d-inference-sim (set LLM_D_INFERENCE_SIM); the Go module proxy refuses"
  echo "github.com/llm-d/llm-d-inference-sim (403), so make deps cannot build it"
  exit 77
fi

failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/llm_d_sim_test.XXXXXX")
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

# llm-d-inference-sim takes a --port and does not report one: free ports, asked of the kernel.
read -r -a ports < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
# replica-0 reports a saturated engine; replica-1 serves slowly, so that its stream outlasts the
# drain below; replica-2 is quick. POD_NAME makes each answer carry x-inference-pod.
start_replica() {
  local i=$1
  shift
  POD_NAME=replica-$i POD_NAMESPACE=test "$sim" --port "${ports[$i]}" --model llama-test \
    --mode echo --time-to-first-token 10ms "$@" >"$dir/replica-$i.log" 2>&1 &
  pids+=($!)
  eval "replica_pid_$i=$!"
}
start_replica 0 --inter-token-latency 5ms \
  --fake-metrics '{"running-requests":40,"waiting-requests":30,"kv-cache-usage":0.95}'
start_replica 1 --inter-token-latency 50ms
start_replica 2 --inter-token-latency 5ms
for i in 0 1 2; do
  wait_for 30 curl -sf "http://127.0.0.1:${ports[$i]}/health" ||
    { cat "$dir/replica-$i.log"; echo "FAILED: replica-$i did not start"; exit 1; }
done

cat >"$dir/gateway.yaml" <<EOF
scrapeIntervalMs: 100
models:
  - name: llama-test
    versions:
      - name: v1
        endpoints: ["127.0.0.1:${ports[0]}", "127.0.0.1:${ports[1]}", "127.0.0.1:${ports[2]}"]
EOF
"$strata" gateway --listen 127.0.0.1:0 --config "$dir/gateway.yaml" >"$dir/gateway.log" 2>&1 &
pids+=($!)
wait_for 30 grep -q 'listening on' "$dir/gateway.log" || { cat "$dir/gateway.log"; exit 1; }
gateway=$(sed -n 's|^strata gateway listening on \(http://[^ ]*\)$|\1|p' "$dir/gateway.log")
metrics() { curl -sf "$gateway/metrics"; }
# series NAME LABELS: the value of one series on the gateway's /metrics, 0 when absent.
series() { metrics | awk -v s="$1{$2}" '$1 == s { print $2; found = 1 } END { if (!found) print 0 }'; }
completion() {
  curl -s -D "$dir/head" -o "$dir/body" -w '%{http_code}' "$gateway/v1/completions" "$@" \
    -H 'content-type: application/json' -d '{"model":"llama-test","prompt":"a b c","max_tokens":3}'
}
served_by() { tr -d '\r' <"$dir/head" | awk -F': ' 'tolower($1) == "x-inference-pod" { print $2 }'; }

# ---- the gateway reads their vLLM metrics --------------------------------------------------------
scraped() {
  local i
  for i in 0 1 2; do
    (($(series strata_gateway_scrapes_total "endpoint=\"127.0.0.1:${ports[$i]}\",result=\"ok\"") > 0)) ||
      return 1
  done
}
check "the gateway scrapes every replica's /metrics" wait_for 30 scraped
check "and finds each page a reading (vllm:num_requests_*, vllm:kv_cache_usage_perc)" [ \
  "$(metrics | grep -c '^strata_gateway_endpoint_up{.*} 1$')" = 3 ]

# ---- it routes by them ---------------------------------------------------------------------------
: >"$dir/served"
for _ in $(seq 1 20); do
  [[ $(completion) == 200 ]] && served_by >>"$dir/served"
done
check "20 completions answered, each naming its replica" [ "$(wc -l <"$dir/served")" = 20 ]
check "the replica reporting 40 running and 30 waiting draws none of them" \
  bash -c "! grep -qx replica-0 '$dir/served'"
check "the idle replicas share them" bash -c \
  "grep -qx replica-1 '$dir/served' && grep -qx replica-2 '$dir/served'"

# ---- streams pass through, with usage, and are accounted -----------------------------------------
before=$(series strata_gateway_tokens_total 'model="llama-test",tenant="-",kind="completion"')
curl -sN "$gateway/v1/chat/completions" -H 'content-type: application/json' -d '{"model":"llama-test",
  "messages":[{"role":"user","content":"one two three four"}],"max_tokens":10,"stream":true,
  "stream_options":{"include_usage":true}}' >"$dir/stream"
check "the SSE stream ends with data: [DONE]" [ "$(grep '^data: ' "$dir/stream" | tail -1)" = 'data: [DONE]' ]
check "its chunks carry the echoed words" bash -c \
  "grep -o '\"content\":\"[^\"]*\"' '$dir/stream' | tr -d '\\n' | grep -q 'one.*two.*three.*four'"
usage=$(grep '"usage":{' "$dir/stream" | python3 -c '
import json, sys
print(json.loads(sys.stdin.readline()[len("data: "):])["usage"]["completion_tokens"])')
check "the usage chunk counts the completion ($usage tokens)" [ "${usage:-0}" -gt 0 ]
after=$(series strata_gateway_tokens_total 'model="llama-test",tenant="-",kind="completion"')
check "the gateway counts the same tokens from the stream's usage" \
  [ "$((${after%.*} - ${before%.*}))" = "$usage" ]

# ---- errors pass through as they are -------------------------------------------------------------
code=$(completion -H 'X-Return-Error: 429')
check "a replica's 429 reaches the client as 429" [ "$code" = 429 ]
check "with the replica's body, untouched" grep -q \
  '^{"error":{"message":"Simulated error triggered by X-Return-Error header (code 429)","type":"RateLimitError","param":null,"code":429}}$' \
  "$dir/body"
# Valid to the gateway, too long for the replica's context (--max-model-len, 1024 by default).
code=$(curl -s -o "$dir/body" -w '%{http_code}' "$gateway/v1/chat/completions" \
  -H 'content-type: application/json' \
  -d '{"model":"llama-test","messages":[{"role":"user","content":"x"}],"max_tokens":5000}')
check "a request the replica refuses is its 400" [ "$code" = 400 ]
check "in its words and shape" grep -q \
  '^{"error":{"message":"This model.s maximum context length is 1024 tokens.*","type":"BadRequestError","param":null,"code":400}}$' \
  "$dir/body"

# ---- a replica drains: its stream finishes, its refusals go elsewhere ----------------------------
prompt=$(python3 -c 'print(" ".join(f"w{i}" for i in range(40)))')
curl -sN "http://127.0.0.1:${ports[1]}/v1/completions" -H 'content-type: application/json' \
  -d "{\"model\":\"llama-test\",\"prompt\":\"$prompt\",\"max_tokens\":100,\"stream\":true}" \
  >"$dir/long-stream" &
stream_pid=$!
wait_for 30 grep -q '^data: {' "$dir/long-stream"
# shellcheck disable=SC2154 # set by start_replica
kill -TERM "$replica_pid_1"
wait_for 10 grep -q 'Shutdown signal received' "$dir/replica-1.log"
# Round-robin: the picker sends the draining replica its share, which it answers 503.
sed -i '1i policy: round-robin' "$dir/gateway.yaml"
"$strata" gateway --listen 127.0.0.1:0 --config "$dir/gateway.yaml" >"$dir/gateway2.log" 2>&1 &
pids+=($!)
wait_for 30 grep -q 'listening on' "$dir/gateway2.log"
gateway=$(sed -n 's|^strata gateway listening on \(http://[^ ]*\)$|\1|p' "$dir/gateway2.log")
codes=""
for _ in $(seq 1 9); do codes+="$(completion) "; done
check "no request is refused while a replica drains ($codes)" [ "$codes" = "$(printf '200 %.0s' {1..9})" ]
check "the draining replica's 503 was retried elsewhere" \
  [ "$(series strata_gateway_retries_total 'model="llama-test"')" -ge 1 ]
wait "$stream_pid"
check "its own stream ran to data: [DONE]" [ "$(grep '^data: ' "$dir/long-stream" | tail -1)" = 'data: [DONE]' ]
check "with every word" [ "$(grep -c '^data: {' "$dir/long-stream")" -ge 40 ]

echo "$failures failure(s)"
((failures == 0))
