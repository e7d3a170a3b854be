#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GAIE InferencePools as a source of routes of strata's gateway on a real control plane
# (tools/kube/cluster.sh: kube-apiserver, etcd, kube-controller-manager, kwok; no kube-scheduler),
# with a user's own vLLM-like Deployment, whose pods strata did not make:
#  - the InferencePool CRD (testdata/kube/inferencepool-crd.yaml, a minimal one of our own) is
#    installed, InferenceObjective's is not (strata says so once and goes on);
#  - strata up --store kubernetes runs as the ServiceAccount of `strata kubernetes manifests`,
#    whose RBAC lets it watch InferencePools;
#  - a Deployment of 2 pods (kube-controller-manager's ReplicaSet makes them; kwok runs them on
#    its node and gives each an IP from --pod-cidr 127.0.100.0/24, a loopback address) whose
#    container command is `strata engine-sim --model tiny-pool`, and a pool selecting them;
#    kwok runs no process, so this test stands in for the container runtime: for each pod kwok
#    reports Ready it starts the pod's command (engine-sim, speaking vLLM's API) at the pod's
#    IP and target port, as a kubelet would;
#  - chat completions for tiny-pool (the model the pods' command serves, read through
#    api::VllmServedModelNames) through strata's gateway are answered by both pods, whose
#    metrics the gateway scrapes;
#  - one pod deleted: the gateway stops sending it requests (its engine, left running, sees no
#    more), and the ReplicaSet's replacement takes its share;
#  - the pool deleted: the model is gone (404).
# Skips (exit 77) only when tools/kube/build.sh has not built the binaries.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=checks.sh
source "$repo/tests/kube/checks.sh"
require_kube_binaries etcd kube-apiserver kube-controller-manager kubectl kwok

cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_inference_pool_test.XXXXXX")
up_pid=""
declare -A engine_pids=()  # pod name -> the pid of the engine this test runs for it
cleanup() {
  local pid
  for pid in "${engine_pids[@]}"; do
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  [[ -z $up_pid ]] || stop_gracefully "$up_pid"
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

kubeconfig=$("$cluster" up "$dir" --nodes 1 --pod-cidr 127.0.100.1/24)
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }

plane_kubeconfig=$dir/control-plane.kubeconfig
install_strata "$plane_kubeconfig"
k apply -f "$repo/testdata/kube/inferencepool-crd.yaml" >/dev/null
k wait --for condition=established --timeout=60s \
  crd/inferencepools.inference.networking.k8s.io >/dev/null
check "strata's account may watch InferencePools" \
  [ "$(k auth can-i watch inferencepools.inference.networking.k8s.io \
    --as system:serviceaccount:strata-system:strata-control-plane 2>/dev/null || true)" = yes ]

"$strata" up --store kubernetes --kubeconfig "$plane_kubeconfig" --no-nodes \
  --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
  --leader-elect-resource-namespace strata-system --data-dir "$dir/data" >"$dir/up.log" 2>&1 &
up_pid=$!
if ! wait_for 60 grep -q "gateway listening" "$dir/up.log"; then
  echo "FAILED: strata up --store kubernetes did not start:"
  cat "$dir/up.log"
  exit 1
fi
check "its gateway routes InferencePools" grep -q "models from Services and InferencePools" \
  "$dir/up.log"
gateway=$(grep -oE 'gateway listening on http://[0-9.:]+' "$dir/up.log" | cut -d' ' -f4)

k create namespace team-a >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat-engine, namespace: team-a}
spec:
  replicas: 2
  selector: {matchLabels: {app: chat-engine}}
  template:
    metadata: {labels: {app: chat-engine}}
    spec:
      nodeName: kwok-node-0
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      containers:
      - name: engine
        image: registry.example/strata:test
        command: [$strata, engine-sim]
        args: [--model, tiny-pool, --host, \$(POD_IP), --port, "8000", --time-scale, "0"]
        env:
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        ports: [{containerPort: 8000}]
---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: chat-pool, namespace: team-a}
spec:
  selector: {matchLabels: {app: chat-engine}}
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: unused-picker, port: {number: 9002}}
YAML

# ready_pods: "name ip" of each pod of the Deployment that kwok reports Running and Ready.
ready_pods() {
  k get pods -n team-a -l app=chat-engine -o jsonpath='{range .items[*]}{.metadata.name} {.status.podIP} {.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk '$3 == "Running" && $4 == "True" && NF == 4 {print $1, $2}'
}
# start_engines: the container runtime kwok lacks: each ready pod's command at its IP, and again
# if it exited (kwok hands a deleted pod's IP to the next pod, whose engine may start before the
# deleted one's has let go of the port).
start_engines() {
  local name ip
  while read -r name ip; do
    [[ -n $name ]] || continue
    if [[ -n ${engine_pids[$name]:-} ]] && kill -0 "${engine_pids[$name]}" 2>/dev/null; then
      continue
    fi
    "$strata" engine-sim --model tiny-pool --host "$ip" --port 8000 --time-scale 0 \
      >"$dir/engine-$name.log" 2>&1 &
    engine_pids[$name]=$!
    echo "engine for pod $name at $ip (pid $!)" | tee -a "$dir/engines.txt"
  done < <(ready_pods)
}
two_ready() { [ "$(ready_pods | wc -l)" = 2 ]; }
check "kwok runs the Deployment's two pods at loopback IPs" wait_for 60 two_ready
check "(from the pod CIDR)" grep -q "^[^ ]* 127\.0\.100\." <<<"$(ready_pods)"
start_engines
# stop_engine POD: what a kubelet does when POD is deleted: its container stops.
stop_engine() {
  [[ -n ${engine_pids[$1]:-} ]] || return 0
  kill -9 "${engine_pids[$1]}" 2>/dev/null || true
  wait "${engine_pids[$1]}" 2>/dev/null || true
}
# engine_ip POD: the address this test serves POD's engine at.
engine_ip() { awk -v p="$1" '$1 == p {print $2}' <<<"$(ready_pods)"; }
first_pod=$(ready_pods | head -n1 | cut -d' ' -f1)
first_ip=$(engine_ip "$first_pod")
# served IP: the prompt tokens the engine at IP has taken (vLLM's counter), 0 when unreachable.
served() {
  curl -s -m 5 "http://$1:8000/metrics" 2>/dev/null |
    awk '/^vllm:prompt_tokens_total/ {sum += $NF} END {printf "%d\n", sum}'
}
# chat N: N chat completions for tiny-pool through the gateway, 4 at a time, distinct prompts;
# prints how many were answered with 200.
chat() {
  local i
  {
    for ((i = 0; i < $1; i++)); do
      curl -s -m 30 -o /dev/null -w '%{http_code}\n' "$gateway/v1/chat/completions" \
        -H 'content-type: application/json' \
        -d "{\"model\": \"tiny-pool\", \"max_tokens\": 4, \"messages\": [{\"role\": \"user\", \"content\": \"question $RANDOM $i about pools\"}]}" &
      if (((i + 1) % 4 == 0)); then wait; fi
    done
    wait  # the subshell's own curls only
  } | grep -c '^200$' || true
}
routed() { [ "$(chat 1)" = 1 ]; }
check "the gateway answers chat completions for the model the pods serve" wait_for 60 routed
engines_up() { [ -n "$(served "$first_ip")" ] && curl -sf -m 5 "http://$first_ip:8000/health"; }
check "(each engine listens at its pod's IP)" wait_for 30 engines_up
both_served() {
  chat 8 >/dev/null
  local ip
  for ip in $(ready_pods | cut -d' ' -f2); do
    (($(served "$ip") > 0)) || return 1
  done
}
check "both pods serve the pool's requests" wait_for 60 both_served
scraped() {
  grep -qE "^strata_gateway_scrapes_total\{.*endpoint=\"$first_ip:8000\".*\} [1-9]" \
    <<<"$(curl -s -m 10 "$gateway/metrics")"
}
check "the gateway reads the pods' engine metrics like any replica's" wait_for 30 scraped

# A pod leaves the pool: the ReplicaSet deletes one when the Deployment scales down. Its engine
# is left running here, so only the routes can keep requests from it.
k scale deployment -n team-a chat-engine --replicas=1 >/dev/null
one_ready() { [ "$(ready_pods | wc -l)" = 1 ]; }
check "scaled to one, one pod is left" wait_for 60 one_ready
kept_pod=$(ready_pods | cut -d' ' -f1)
gone_pod=$(for name in "${!engine_pids[@]}"; do [[ $name == "$kept_pod" ]] || echo "$name"; done)
# engines.txt lines: "engine for pod NAME at IP (pid PID)"
gone_ip=$(awk -v p="$gone_pod" '$4 == p {print $6}' "$dir/engines.txt")
check "(the pod that left had an engine: $gone_pod at $gone_ip)" [ -n "$gone_ip" ]
left_alone() {
  local before
  before=$(served "$gone_ip")
  [ "$(chat 8)" = 8 ] && [ "$(served "$gone_ip")" = "$before" ]
}
check "the pod that left gets no more requests, and every one is answered" wait_for 30 left_alone
stop_engine "$gone_pod"

# The last pod deleted: its container stops (its engine, here), the ReplicaSet replaces it, and
# the requests go to the replacement, every one answered.
k delete pod -n team-a "$kept_pod" --wait=false >/dev/null
stop_engine "$kept_pod"
replaced() {
  start_engines >/dev/null
  [ "$(ready_pods | wc -l)" = 1 ] && ! grep -q "^$kept_pod " <<<"$(ready_pods)"
}
check "the ReplicaSet replaces the deleted pod" wait_for 60 replaced
replacement_ip=$(ready_pods | cut -d' ' -f2)
replacement_serves() {
  local before
  before=$(served "$replacement_ip")
  [ "$(chat 8)" = 8 ] && (($(served "$replacement_ip") > before))
}
check "the routes follow: its replacement answers every request" wait_for 60 replacement_serves

k delete inferencepool -n team-a chat-pool >/dev/null
not_found() {
  [ "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$gateway/v1/chat/completions" \
    -H 'content-type: application/json' \
    -d '{"model": "tiny-pool", "messages": [{"role": "user", "content": "hi"}]}')" = 404 ]
}
check "the pool deleted, the model is gone (404)" wait_for 30 not_found
check "strata said once that the cluster has no InferenceObjectives" \
  [ "$(grep -c "no InferenceObjectives on this cluster" "$dir/up.log")" = 1 ]

if ((failures > 0)); then
  echo "--- strata up"
  tail -n 60 "$dir/up.log"
  k get pods -A -o wide
  k get inferencepools -A -o yaml || true
  exit 1
fi
echo "kube_inference_pool_test: all checks passed"
