#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Two `strata up --store kubernetes` control planes (as the install's ServiceAccount) on one real control plane
# (tools/kube/cluster.sh), each with a simulated node of 4 GPUs of its own, checked with kubectl:
#  - one holds the Lease strata-system/strata-control-plane (the install's namespace) and runs the controllers; the other
#    stands by, naming the leader, while its API, gateway and node agent serve;
#  - a 2-pod allreduce Job and a TP=2 Service run; the standby's gateway answers for the Service;
#  - the leader is killed with SIGKILL mid-run: the standby takes the Lease over; the dead plane's
#    node stops renewing its Lease, kube-controller-manager marks it Ready=Unknown, and the
#    standby's node controller fails its pods (NodeLost); the Job (group
#    restart wherever its pods were lost) and the Service (a new replica where the old one went)
#    carry on: the Job succeeds, the survivor's gateway answers, and a Job applied after the
#    kill runs too;
#  - a third plane with --no-nodes stands by and a `strata agent --kubeconfig` node joins; the
#    second leader killed, the node-less plane leads: a 4-GPU Job runs on the agent, and the
#    Service's replica (lost with the dead plane's node) comes back there, engine-sim included.
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
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_store_ha_test.XXXXXX")
chmod 755 "$dir"  # pods run as nobody when the test runs as root: they reach their dirs
declare -A plane_pid=()
agent_pid=""
# pods_of PLANE: the process groups of the pods a plane started (their working directories are
# under its data dir); a plane killed with SIGKILL leaves them running.
pods_of() {
  local proc cwd
  for proc in /proc/[0-9]*; do
    cwd=$(readlink "$proc/cwd" 2>/dev/null) || continue
    [[ $cwd == "$dir/$1/"* ]] && ps -o pgid= -p "${proc#/proc/}" 2>/dev/null
  done
  return 0
}
cleanup() {
  local name pid
  for name in "${!plane_pid[@]}"; do stop_gracefully "${plane_pid[$name]}"; done
  [[ -z $agent_pid ]] || kill -TERM "$agent_pid" 2>/dev/null || true
  for name in a b c agent; do
    for pid in $(pods_of "$name" | sort -u); do kill -9 -- "-$pid" 2>/dev/null || true; done
  done
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

kubeconfig=$("$cluster" up "$dir" --nodes 1)
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }
# strata up runs as the install's ServiceAccount strata-control-plane: its RBAC is all it has.
plane_kubeconfig=$dir/control-plane.kubeconfig
install_strata "$plane_kubeconfig"

# start_plane NAME [FLAG...]: a control plane with the node plane-NAME-0 (unless --no-nodes) and
# its data in $dir/NAME.
start_plane() {
  "$strata" up --store kubernetes --kubeconfig "$plane_kubeconfig" \
    --simulate "1x4:H100-80GB,prefix=plane-$1" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
    --sim-startup-delay 1 --first-master-port 30500 --leader-elect-resource-namespace strata-system \
    --data-dir "$dir/$1" "${@:2}" \
    >"$dir/$1.log" 2>&1 &
  plane_pid[$1]=$!
  if ! wait_for 60 grep -q "API listening" "$dir/$1.log"; then
    echo "FAILED: strata up (plane $1) did not start:"
    cat "$dir/$1.log"
    exit 1
  fi
}
identity() { sed -n 's/.*campaigning as \([^ ]*\)$/\1/p' "$dir/$1.log"; }
holder() { k get lease -n strata-system strata-control-plane -o jsonpath='{.spec.holderIdentity}'; }
leads() { [ "$(holder)" = "$(identity "$1")" ] && grep -q "control plane: leading" "$dir/$1.log"; }
gateway_of() { grep -oE 'gateway listening on http://[0-9.:]+' "$dir/$1.log" | cut -d' ' -f4; }
answers() {
  curl -s -m 10 "$(gateway_of "$1")/v1/chat/completions" -H 'content-type: application/json' \
    -d '{"model": "tiny-chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}' |
    grep -q '"choices"'
}

start_plane a
check "the first plane takes the Lease and leads" wait_for 30 leads a
start_plane b
check "the second stands by, naming the leader" \
  wait_for 30 grep -q "control plane: the leader is $(identity a)" "$dir/b.log"
check "(and does not lead)" bash -c "! grep -q 'control plane: leading' '$dir/b.log'"
check "each plane's node is a Ready v1 Node" wait_for 30 node_ready plane-a-0
check "(the standby's too)" wait_for 30 node_ready plane-b-0

k create namespace team-a >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: steady, namespace: team-a}
spec:
  replicas: 2
  maxRestarts: 3
  resources: {gpu: 1}
  template:
    command: [python3, $repo/examples/workers/allreduce.py]
    args: [--steps, "300", --checkpoint-every, "5", --step-sleep, "0.05", --timeout, "20"]
---
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {name: chat, namespace: team-a}
spec:
  model: tiny-chat
  engine: {command: [vllm, serve, tiny-chat]}
  resources: {gpu: 2}
  tensorParallel: 2
  minReplicas: 1
  maxReplicas: 1
YAML
job() { k get sjob -n team-a "$1" -o jsonpath="{.status.$2}"; }
checkpointed() { [ -n "$(job steady lastCheckpointTime)" ]; }
check "the Job runs and checkpoints" wait_for 90 checkpointed
one_ready() { [ "$(k get ssvc -n team-a chat -o jsonpath='{.status.readyReplicas}')" = 1 ]; }
check "the Service's replica becomes ready" wait_for 120 one_ready
check "the standby's gateway answers for it" wait_for 30 answers b
job_nodes=$(k get pods -n team-a -l strata.dev/job-name=steady -o jsonpath='{.items[*].spec.nodeName}')

kill -9 "${plane_pid[a]}"
wait "${plane_pid[a]}" 2>/dev/null || true
unset 'plane_pid[a]'
check "the leader killed with SIGKILL, the standby takes the Lease over" wait_for 45 leads b
node_lost() { ! node_ready plane-a-0; }
check "and finds the dead plane's node lost" wait_for 90 node_lost
succeeded() { [ "$(job "$1" phase)" = Succeeded ]; }
check "the Job carries on to Succeeded" wait_for 180 succeeded steady
if [[ $job_nodes == *plane-a-0* ]]; then
  check "(restarted as a group, its pods on the lost node having failed)" \
    [ "$(job steady restartCount)" -ge 1 ]
fi
replica_on_b() {
  [ "$(k get pods -n team-a -l strata.dev/service=chat \
    -o jsonpath='{.items[?(@.status.phase=="Running")].spec.nodeName}')" = plane-b-0 ] && one_ready
}
check "the Service's replica runs on the survivor's node" wait_for 150 replica_on_b
check "whose gateway answers for it" wait_for 30 answers b
apply_shell_job team-a after 1 1 'echo after the failover'
check "a Job applied after the failover runs to Succeeded" wait_for 90 succeeded after

# A plane with no node of its own, and a node that joins by itself (strata agent --kubeconfig):
# when the leader dies with its node, the controllers go on elsewhere and so do the pods.
start_plane c --no-nodes
check "a plane with --no-nodes stands by, with no node of its own" \
  grep -q "registered 0 node(s)" "$dir/c.log"
"$strata" agent --kubeconfig "$plane_kubeconfig" --name agent-node --address 127.0.0.1 \
  --simulate 1x4:H100-80GB,prefix=agent --sim-startup-delay 1 --data-dir "$dir/agent" \
  >"$dir/agent.log" 2>&1 &
agent_pid=$!
check "an agent joins as a Ready node" wait_for 30 node_ready agent-node
kill -9 "${plane_pid[b]}"
wait "${plane_pid[b]}" 2>/dev/null || true
unset 'plane_pid[b]'
check "the second leader killed, the node-less plane takes over" wait_for 45 leads c
apply_shell_job team-a final 1 4 'echo on the agent'
check "a 4-GPU Job runs on the agent's node" wait_for 90 succeeded final
replica_on_agent() {
  [ "$(k get pods -n team-a -l strata.dev/service=chat \
    -o jsonpath='{.items[?(@.status.phase=="Running")].spec.nodeName}')" = agent-node ] && one_ready
}
check "the Service's replica comes back on the agent (engine-sim there)" wait_for 180 replica_on_agent
check "and the new leader's gateway answers for it" wait_for 30 answers c

if ((failures > 0)); then
  echo "--- plane a"
  tail -n 30 "$dir/a.log"
  echo "--- plane b"
  tail -n 40 "$dir/b.log"
  echo "--- plane c"
  tail -n 30 "$dir/c.log"
  echo "--- agent"
  tail -n 20 "$dir/agent.log"
  k get nodes
  k get pods -A -o wide
  k get sjob,ssvc -A
  exit 1
fi
echo "kube_store_ha_test: all checks passed"
