#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# GAIE InferencePools as a source of routes of strata's gateway on a real control plane
# (tools/kube/cluster.sh: kube-apiserver, etcd, kube-controller-manager, kwok; no kube-scheduler),
# with a user's own vLLM-like Deployment, whose pods strata did not make, run by strata's virtual
# kubelet (`strata agent --kubeconfig`) as a kubelet with a container runtime would:
#  - the InferencePool CRD (testdata/kube/inferencepool-crd.yaml, a minimal one of our own) is
#    installed, InferenceObjective's is not (strata says so once and goes on);
#  - strata up --store kubernetes runs as the ServiceAccount of `strata kubernetes manifests`,
#    whose RBAC lets it watch InferencePools;
#  - a Deployment of 2 pods (kube-controller-manager's ReplicaSet makes them, bound to the
#    agent's Node) whose container command is `strata engine-sim --model tiny-pool` at
#    $(POD_IP) (env valueFrom status.podIP), with a readiness probe, and a pool selecting them;
#    the agent runs each pod's command as a local process at an IP of its own from its
#    --pod-cidr 127.0.100.0/24 (loopback addresses), probes it there, and reports Running,
#    podIP, Ready and the container's status, so the ReplicaSet counts them ready; `kubectl
#    logs` reads the engine's output from the agent; strata's control plane leaves the pods
#    alone (they are not its own);
#  - chat completions for tiny-pool (the model the pods' command serves, read through
#    api::VllmServedModelNames) through strata's gateway are answered by both pods, whose
#    metrics the gateway scrapes;
#  - scaled down, the ReplicaSet deletes a pod: the agent stops its engine and deletes the pod
#    for good (as a kubelet ends a graceful deletion), and the gateway stops sending it
#    requests, every one answered;
#  - the last pod deleted: the ReplicaSet's replacement runs at an IP of its own and takes the
#    requests;
#  - a pod with no command (an image's entrypoint only) fails, naming its container;
#  - a pod asking nvidia.com/gpu gets the agent's GPU, reported in allocatedResourcesStatus; a
#    second finds none free and fails with the kubelet's UnexpectedAdmissionError;
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
agent_pid=""
cleanup() {
  # Pods still running when the agent stops are fenced: their processes end within its
  # --fence-after (the test deletes them first when it gets to its end).
  [[ -z $agent_pid ]] || stop_gracefully "$agent_pid"
  [[ -z $up_pid ]] || stop_gracefully "$up_pid"
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

kubeconfig=$("$cluster" up "$dir" --nodes 1)
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

# strata's virtual kubelet: it runs whatever pod is bound to its Node.
"$strata" agent --kubeconfig "$plane_kubeconfig" --name agent-node --address 127.0.0.1 \
  --pod-cidr 127.0.100.0/24 --simulate 1x1:H100-80GB,prefix=agent --data-dir "$dir/agent" \
  >"$dir/agent.log" 2>&1 &
agent_pid=$!
check "strata agent --kubeconfig joins as a Ready v1 Node" wait_for 30 node_ready agent-node

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
      nodeName: agent-node
      containers:
      - name: engine
        image: registry.example/strata:test
        command: [$strata, engine-sim]
        args: [--model, tiny-pool, --host, \$(POD_IP), --port, "8000", --time-scale, "0"]
        env:
        - name: POD_IP
          valueFrom: {fieldRef: {fieldPath: status.podIP}}
        ports: [{containerPort: 8000}]
        readinessProbe: {httpGet: {path: /health, port: 8000}, periodSeconds: 1}
---
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: chat-pool, namespace: team-a}
spec:
  selector: {matchLabels: {app: chat-engine}}
  targetPorts: [{number: 8000}]
  endpointPickerRef: {name: unused-picker, port: {number: 9002}}
YAML

# ready_pods: "name ip" of each pod of the Deployment that the agent reports Running and Ready.
ready_pods() {
  k get pods -n team-a -l app=chat-engine -o jsonpath='{range .items[*]}{.metadata.name} {.status.podIP} {.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk '$3 == "Running" && $4 == "True" && NF == 4 {print $1, $2}'
}
two_ready() { [ "$(ready_pods | wc -l)" = 2 ]; }
check "the agent runs the Deployment's two pods, Ready" wait_for 60 two_ready
ips=$(ready_pods | cut -d' ' -f2 | sort -u)
check "(each at an IP of its own from its pod CIDR)" \
  [ "$(grep -c '^127\.0\.100\.' <<<"$ips")" = 2 ]
check "the ReplicaSet counts them ready" \
  [ "$(k get deployment -n team-a chat-engine -o jsonpath='{.status.readyReplicas}')" = 2 ]
# container: the first pod's container status, as a kubelet reports it.
container=$(k get pods -n team-a -l app=chat-engine \
  -o jsonpath='{.items[0].status.containerStatuses[0].name} {.items[0].status.containerStatuses[0].ready} {.items[0].status.containerStatuses[0].image}')
check "(its container status: name, ready, image: $container)" \
  [ "$container" = "engine true registry.example/strata:test" ]
# engine_ip POD: the address the agent serves POD's engine at.
engine_ip() { awk -v p="$1" '$1 == p {print $2}' <<<"$(ready_pods)"; }
first_pod=$(ready_pods | head -n1 | cut -d' ' -f1)
first_ip=$(engine_ip "$first_pod")
logged() { grep -q "$first_ip" <<<"$(k logs -n team-a "$first_pod" 2>&1)"; }
check "kubectl logs reads the engine's output from the agent" wait_for 30 logged
warned() {
  [ -n "$(k get events -n team-a -o name \
    --field-selector "involvedObject.name=$first_pod,reason=IgnoredFields")" ]
}
check "the agent warned that the image is ignored" wait_for 30 warned
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

# A pod leaves the pool: the ReplicaSet deletes one when the Deployment scales down (with its
# grace period); the agent stops its engine and ends the deletion, as a kubelet does.
both=$(ready_pods)
k scale deployment -n team-a chat-engine --replicas=1 >/dev/null
# pod_count: how many pods of the Deployment exist, terminating ones included.
pod_count() { k get pods -n team-a -l app=chat-engine -o name | wc -l; }
one_left() { [ "$(ready_pods | wc -l)" = 1 ] && [ "$(pod_count)" = 1 ]; }
check "scaled to one, the agent ends the other's deletion: one pod is left" wait_for 60 one_left
kept_pod=$(ready_pods | cut -d' ' -f1)
gone_ip=$(awk -v p="$kept_pod" '$1 != p {print $2}' <<<"$both")
check "(the pod that left had an IP: $gone_ip)" [ -n "$gone_ip" ]
stopped() { ! curl -s -m 2 -o /dev/null "http://$gone_ip:8000/health"; }
check "its engine was stopped" wait_for 30 stopped
check "every request is answered by the pod that is left" [ "$(chat 8)" = 8 ]

# The last pod deleted: the agent stops its engine, the ReplicaSet replaces it, and the requests
# go to the replacement, every one answered.
k delete pod -n team-a "$kept_pod" --wait=false >/dev/null
replaced() {
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

# A pod whose container has no command (its image's entrypoint only) cannot run as a process:
# it fails, naming the container, never left pending.
k run -n team-a entrypoint-only --image registry.example/server:1 --restart Never \
  --overrides '{"apiVersion": "v1", "spec": {"nodeName": "agent-node"}}' >/dev/null
failed_pod() {
  [ "$(k get pod -n team-a entrypoint-only -o jsonpath='{.status.phase} {.status.reason}')" = \
    "Failed CannotRunAsProcess" ]
}
check "a pod with no command fails (CannotRunAsProcess)" wait_for 30 failed_pod
check "(its message names the container)" grep -q 'container "entrypoint-only" has no command' \
  <<<"$(k get pod -n team-a entrypoint-only -o jsonpath='{.status.message}')"

# A batch Job's pod runs to completion: the Job controller sees it Succeeded.
k apply -f - >/dev/null <<YAML
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: team-a}
spec:
  template:
    spec:
      nodeName: agent-node
      restartPolicy: Never
      containers: [{name: step, image: busybox, command: [sh, -c, "echo step done"]}]
YAML
check "a batch Job's pod on the agent succeeds, and the Job completes" \
  k wait --for condition=complete --timeout=60s -n team-a job/once
check "strata's control plane left the Deployment's pods alone" \
  [ "$(ready_pods | wc -l)" = 1 ]

# GPUs, as the kubelet and NVIDIA's device plugin give them: a pod asking nvidia.com/gpu: 1 of
# the agent's one (simulated) GPU gets it in CUDA_VISIBLE_DEVICES, reported as its container's
# allocatedResourcesStatus with the GPU's UUID; a second finds none free and is rejected as the
# kubelet rejects it (UnexpectedAdmissionError), never left pending.
gpu_pod() {
  k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: team-a}
spec:
  nodeName: agent-node
  restartPolicy: Never
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04
    command: [sh, -c, 'echo "sees GPUs \$CUDA_VISIBLE_DEVICES"; exec sleep 600']
    resources: {limits: {nvidia.com/gpu: 1}}
YAML
}
gpu_pod gpu-1
gpu_allocated() {
  [ "$(k get pod -n team-a gpu-1 -o jsonpath='{.status.phase} {.status.containerStatuses[0].allocatedResourcesStatus[0].name} {.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health}')" = \
    "Running nvidia.com/gpu Healthy" ]
}
check "a pod asking nvidia.com/gpu runs, its GPU in allocatedResourcesStatus" wait_for 30 gpu_allocated
node_gpu=$(k get node agent-node -o jsonpath='{.metadata.annotations.strata\.dev/gpus}' |
  grep -oE '"uuid": ?"[^"]+"' | head -n 1 | sed -E 's/.*"([^"]+)"$/\1/')
gpu_id() {
  k get pod -n team-a gpu-1 \
    -o jsonpath='{.status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].resourceID}'
}
gpu_is_the_nodes() { [ -n "$node_gpu" ] && [ "$(gpu_id)" = "$node_gpu" ]; }
check "(the resourceID is the UUID of the node's GPU, $node_gpu)" gpu_is_the_nodes
gpu_logged() { k logs -n team-a gpu-1 | grep -q "sees GPUs 0"; }
check "(its process sees that GPU in CUDA_VISIBLE_DEVICES)" wait_for 30 gpu_logged
gpu_pod gpu-2
gpu_rejected() {
  [ "$(k get pod -n team-a gpu-2 -o jsonpath='{.status.phase} {.status.reason}')" = \
    "Failed UnexpectedAdmissionError" ]
}
check "a second finds no GPU free and is rejected (UnexpectedAdmissionError)" wait_for 30 gpu_rejected
check "(with the kubelet's message)" grep -q "Requested: 1, Available: 0, which is unexpected" \
  <<<"$(k get pod -n team-a gpu-2 -o jsonpath='{.status.message}')"
k delete pod -n team-a gpu-1 gpu-2 --wait=false >/dev/null

# The pods' processes end with their pods, before the agent stops.
k delete deployment -n team-a chat-engine >/dev/null
no_pods() { [ "$(pod_count)" = 0 ]; }
check "the Deployment deleted, the agent ends its pods" wait_for 60 no_pods

if ((failures > 0)); then
  echo "--- strata up"
  tail -n 60 "$dir/up.log"
  echo "--- strata agent"
  tail -n 60 "$dir/agent.log"
  k get pods -A -o wide
  k get inferencepools -A -o yaml || true
  exit 1
fi
echo "kube_inference_pool_test: all checks passed"
