#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `strata up --store kubernetes`: strata's own control plane (scheduler, job controller, node
# controller, and a node agent that runs pods as processes) keeping its state on a real
# control plane (tools/kube/cluster.sh: kube-apiserver, etcd, kube-controller-manager, kwok; no
# kube-scheduler), checked with kubectl as a user would:
#  - installed with `strata kubernetes manifests | kubectl apply -f -`, and run with the token of
#    the ServiceAccount those manifests make for it (least privilege: nothing else to do);
#  - its simulated nodes are v1 Nodes with nvidia.com/gpu, GPU Feature Discovery's labels and a
#    Ready condition and a Lease in kube-node-lease renewed every beat (the status written only
#    when it changes or is 5 min old, as a kubelet's), beside kwok's node;
#  - a strata Job applied with kubectl runs as v1 Pods that kubectl lists: schedulerName strata,
#    bound to strata's nodes (not the tainted kwok node), owned by the Job, run to Succeeded by
#    the agent, the Job Succeeded in `kubectl get sjob`; `kubectl logs` (and -f) reads a pod's
#    log through the API server from the agent's kubelet endpoint (the pod's IP is its node's), which admits only
#    certificates the cluster's CA signed and callers a SubjectAccessReview allows;
#  - a Kubeflow PyTorchJob applied with kubectl (strata's CRD for it, --compat-crds), 2 x 2
#    workers of examples/workers/allreduce.py (rendezvous over TCP, checkpoints), runs as a strata
#    Job the PyTorchJob owns, its status in Kubeflow's conditions: one worker killed with SIGKILL
#    restarts the whole group, which resumes from its checkpoint and succeeds; deleting the
#    PyTorchJob deletes the Job and its pods; what strata does not honour is refused at apply;
#  - stopped and started again, strata up adopts what is there: the nodes are registered again,
#    no pod is made twice;
#  - a Job whose environment reads the cluster's Secret (secretKeyRef) and ConfigMap
#    (configMapKeyRef) runs on strata's node agent with their values; strata's RBAC reads them
#    and writes neither;
#  - deleting the Job with kubectl deletes its pods;
#  - a Kubeflow PyTorchJob given to `strata apply` becomes a strata Job on the cluster and runs;
#    `strata get` and `strata delete` with --kubeconfig work on the cluster with no server;
#  - /metrics and the dashboard as on SQLite;
#  - the plane's own nodes carry the NoSchedule taint strata.dev/strata-pods-only (its agent runs
#    no one else's pods), and strata's pods are placed there all the same;
#  - `strata agent --kubeconfig` joins as a virtual kubelet (Node, Lease, kubelet endpoint) with
#    a node's own credentials, from the kubelet's TLS bootstrap (a bootstrap token; its request
#    approved by kube-controller-manager): system:node:NAME, refused another node; a 3 x 4-GPU Job
#    spans it and the plane's nodes, and kubectl logs reads its pod there;
#  - a TP=2 strata Service applied with kubectl gets a replica: a v1 Pod of two GPUs (engine-sim
#    on the simulated GPUs), Ready once its engine is; strata's gateway answers a chat completion
#    for its model from it, and under a burst of the official openai client's streams it scales
#    up to a second replica and back down, with no stream lost.
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
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_store_up_test.XXXXXX")
chmod 755 "$dir"  # pods run as nobody when the test runs as root: they reach their dirs
up_pid=""
agent_pid=""
cleanup() {
  [[ -z $agent_pid ]] || kill -9 "$agent_pid" 2>/dev/null || true
  # SIGTERM: strata up stops its pods' processes (engine-sim replicas among them) as it goes.
  [[ -z $up_pid ]] || stop_gracefully "$up_pid"
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

kubeconfig=$("$cluster" up "$dir" --nodes 1)
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# strata up runs as the install's ServiceAccount strata-control-plane: its RBAC is all it has.
plane_kubeconfig=$dir/control-plane.kubeconfig
install_strata "$plane_kubeconfig"

# start_up LOG: strata up on the cluster's state, in the background; waits for its API.
start_up() {
  "$strata" up --store kubernetes --kubeconfig "$plane_kubeconfig" --simulate 2x4:H100-80GB \
    --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 --sim-startup-delay 1 \
    --first-master-port 31500 --leader-elect-resource-namespace strata-system \
    --data-dir "$dir/data" >"$1" 2>&1 &
  up_pid=$!
  if ! wait_for 60 grep -q "API listening" "$1"; then
    echo "FAILED: strata up --store kubernetes did not start:"
    cat "$1"
    exit 1
  fi
}
stop_up() {
  kill -TERM "$up_pid"
  wait "$up_pid" || true
  up_pid=""
}
start_up "$dir/up.log"
check "strata up says where its state is" grep -q "store on the Kubernetes API at https://127.0.0.1:" "$dir/up.log"

strata_nodes=$(k get nodes -l strata.dev/simulated=true -o jsonpath='{.items[*].metadata.name}')
check "its two simulated nodes are v1 Nodes" [ "$(wc -w <<<"$strata_nodes")" = 2 ]
first_node=${strata_nodes%% *}
check "with 4 GPUs allocatable" \
  [ "$(k get node "$first_node" -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')" = 4 ]
check "and GPU Feature Discovery's product label" \
  [ -n "$(k get node "$first_node" -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.product}')" ]
check "and the taint that keeps others' pods off (its agent runs strata's pods only)" \
  [ "$(k get node "$first_node" -o jsonpath='{.spec.taints[?(@.key=="strata.dev/strata-pods-only")].effect}')" = NoSchedule ]
heartbeat() {
  k get node "$first_node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}'
}
renewed() { k get lease -n kube-node-lease "$first_node" -o jsonpath='{.spec.renewTime}'; }
check "Ready" node_ready "$first_node"
beat=$(heartbeat)
renewal=$(renewed)
lease_holder() { k get lease -n kube-node-lease "$first_node" -o jsonpath='{.spec.holderIdentity}'; }
check "and whose Lease in kube-node-lease it holds, as a kubelet" [ "$(lease_holder)" = "$first_node" ]
check "(owned by the Node)" [ "$(k get lease -n kube-node-lease "$first_node" \
  -o jsonpath='{.metadata.ownerReferences[0].kind}')" = Node ]
advanced() { [ "$(renewed)" != "$renewal" ]; }
check "it renews the Lease every beat" wait_for 30 advanced
check "(and writes the Node's status only when it changes or is 5 min old, as a kubelet)" \
  [ "$(heartbeat)" = "$beat" ]

k create namespace team-a >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: hello
  namespace: team-a
spec:
  replicas: 2
  resources: {gpu: 2}
  template:
    command: [sh, -c, "echo node $PET_NODE_RANK of $PET_NNODES, master $MASTER_ADDR; sleep 3"]
YAML
pods() { k get pods -n team-a -l strata.dev/job-name=hello -o jsonpath='{.items[*].metadata.name}'; }
two_pods() { [ "$(pods | wc -w)" = 2 ]; }
check "the Job's two pods are v1 Pods kubectl lists" wait_for 60 two_pods
pod=$(pods | cut -d' ' -f1)
check "with schedulerName strata" \
  [ "$(k get pod -n team-a "$pod" -o jsonpath='{.spec.schedulerName}')" = strata ]
check "owned by the Job" \
  [ "$(k get pod -n team-a "$pod" -o jsonpath='{.metadata.ownerReferences[0].kind}')" = Job ]
bound_to_strata() {
  local node
  for p in $(pods); do
    node=$(k get pod -n team-a "$p" -o jsonpath='{.spec.nodeName}')
    [[ " $strata_nodes " == *" $node "* ]] || return 1
  done
}
check "bound to strata's nodes, not the tainted kwok node" wait_for 60 bound_to_strata
job_phase() { k get sjob -n team-a hello -o jsonpath='{.status.phase}'; }
succeeded() { [ "$(job_phase)" = Succeeded ]; }
check "the Job runs to Succeeded" wait_for 120 succeeded
check "and its pods too" \
  [ "$(k get pod -n team-a "$pod" -o jsonpath='{.status.phase}')" = Succeeded ]
check "the pod's exit code is in its container status" [ "$(k get pod -n team-a "$pod" \
  -o jsonpath='{.status.containerStatuses[0].state.terminated.exitCode}')" = 0 ]
check "its IP is its node's (kubectl get pods -o wide)" \
  [ "$(k get pod -n team-a "$pod" -o jsonpath='{.status.podIP}')" = 127.0.0.1 ]
check "kubectl get sjob shows the phase column" grep -q Succeeded <<<"$(k get sjob -n team-a)"
logs=$(cat "$dir"/data/pods/*/logs/*.log 2>/dev/null || true)
check "each pod ran with torchrun's environment" \
  grep -q "node 1 of 2, master 127.0.0.1" <<<"$logs"
check "(node 0 too)" grep -q "node 0 of 2, master 127.0.0.1" <<<"$logs"
# kubectl logs: the API server reaches the pod's node at its kubelet endpoint (the agent's).
check "kubectl logs reads a pod's log through the API server" \
  grep -q "of 2, master 127.0.0.1" <<<"$(k logs -n team-a "$pod" 2>&1)"
check "(and follows it to the pod's end)" \
  grep -q "of 2, master 127.0.0.1" <<<"$(timeout 60 "$KUBE_BIN_DIR/kubectl" --kubeconfig \
    "$kubeconfig" logs -f -n team-a "$pod" 2>&1)"
kubelet_port=$(k get node "$first_node" -o jsonpath='{.status.daemonEndpoints.kubeletEndpoint.Port}')
check "the node advertises its kubelet endpoint" [ "$(k get node "$first_node" \
  -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')" = 127.0.0.1 ]
kubelet_logs() {
  curl -sk -m 10 -o /dev/null -w '%{http_code}' "$@" \
    "https://127.0.0.1:$kubelet_port/containerLogs/team-a/$pod/main"
}
check "which refuses a client without a certificate the cluster's CA signed" \
  [ "$(kubelet_logs || true)" = 000 ]
check "answers 403 to one the API server does not allow nodes/proxy" \
  [ "$(kubelet_logs --cert "$dir/pki/controller-manager.crt" --key "$dir/pki/controller-manager.key")" = 403 ]
kubelet_client=(--cert "$dir/pki/apiserver-kubelet-client.crt" --key "$dir/pki/apiserver-kubelet-client.key")
check "and 200 to the API server's kubelet client" [ "$(kubelet_logs "${kubelet_client[@]}")" = 200 ]
traversal=$(curl -sk -m 10 -o /dev/null -w '%{http_code}' "${kubelet_client[@]}" \
  "https://127.0.0.1:$kubelet_port/containerLogs/team-a/..%2F..%2Fetc/main")
check "(no file for a pod name that climbs out of its directory: $traversal)" \
  grep -qxE '40[034]' <<<"$traversal"

# A pod's environment from the cluster's own Secret and ConfigMap (strata reads them; users write
# them with kubectl): the agent resolves secretKeyRef and configMapKeyRef as a kubelet does.
k create secret generic creds -n team-a --from-literal=token=s3cret-from-kube >/dev/null
k create configmap settings -n team-a --from-literal=GREETING=hello-from-kube >/dev/null
k apply -f - >/dev/null <<'YAML'
apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: reader
  namespace: team-a
spec:
  replicas: 1
  resources: {gpu: 1}
  template:
    command: [sh, -c, "echo token=$TOKEN greeting=$GREETING"]
    env:
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: creds, key: token}}
    - name: GREETING
      valueFrom: {configMapKeyRef: {name: settings, key: GREETING}}
YAML
reader_done() { [ "$(k get sjob -n team-a reader -o jsonpath='{.status.phase}')" = Succeeded ]; }
check "a Job whose env reads a Secret and a ConfigMap runs to Succeeded" wait_for 120 reader_done
reader_pod=$(k get pods -n team-a -l strata.dev/job-name=reader -o jsonpath='{.items[0].metadata.name}')
check "with the Secret's and the ConfigMap's values" \
  grep -q "token=s3cret-from-kube greeting=hello-from-kube" <<<"$(k logs -n team-a "$reader_pod" 2>&1)"
check "strata may read Secrets, never write them" \
  [ "$(k auth can-i create secrets --as system:serviceaccount:strata-system:strata-control-plane \
    -n team-a 2>/dev/null || true)" = no ]
check "(404 for what a kubelet serves that it does not: exec, metrics)" \
  [ "$(curl -sk -m 10 -o /dev/null -w '%{http_code}' "${kubelet_client[@]}" \
    "https://127.0.0.1:$kubelet_port/exec/team-a/$pod/main?command=sh")" = 404 ]
# Hostile input: plain HTTP, a 64 KiB header, then a well-formed request still answered.
curl -s -m 10 -o /dev/null "http://127.0.0.1:$kubelet_port/containerLogs/team-a/$pod/main" || true
curl -sk -m 10 -o /dev/null "${kubelet_client[@]}" -H "X-Pad: $(head -c 65536 /dev/zero | tr '\0' a)" \
  "https://127.0.0.1:$kubelet_port/containerLogs/team-a/$pod/main" || true
check "after plain HTTP and an oversized header it still serves" \
  [ "$(kubelet_logs "${kubelet_client[@]}")" = 200 ]
events=$(k get events -n team-a -o jsonpath='{range .items[*]}{.source.component}/{.reason} {end}')
check "strata's events are v1 Events kubectl lists" grep -q "strata/" <<<"$events"
# workers RANK: the pids of the live allreduce workers of the Job "resilient" with that RANK.
workers() {
  local proc env
  for proc in /proc/[0-9]*; do
    env=$({ tr '\0' '\n' <"$proc/environ"; } 2>/dev/null) || continue
    grep -qx "RANK=$1" <<<"$env" &&
      grep -q "STRATA_CHECKPOINT_DIR=$dir/data/checkpoints/team-a/resilient" <<<"$env" &&
      echo "${proc#/proc/}"
  done
  return 0  # the last process looked at is no reason to fail
}
# The 2 x 2 job as a Kubeflow PyTorchJob applied with kubectl: strata's CRD for the kind
# (--compat-crds) serves it, and strata runs it as a strata Job that it owns.
pytorch_replica() {
  cat <<YAML
    $1:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: python:3-slim
              command: [python3, $repo/examples/workers/allreduce.py]
              args: [--steps, "400", --checkpoint-every, "5", --step-sleep, "0.05", --timeout, "20"]
              resources: {limits: {nvidia.com/gpu: 1}}
YAML
}
{
  cat <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: resilient, namespace: team-a}
spec:
  nprocPerNode: "2"
  runPolicy: {backoffLimit: 3}
  pytorchReplicaSpecs:
YAML
  pytorch_replica Master
  pytorch_replica Worker
} >"$dir/resilient.yaml"
check "kubectl apply -f of a Kubeflow PyTorchJob" k apply -f "$dir/resilient.yaml" --output name
sed 's/runPolicy: {backoffLimit: 3}/elasticPolicy: {rdzvBackend: etcd}/; s/name: resilient/name: refused/' \
  "$dir/resilient.yaml" >"$dir/refused.yaml"
refusal=$(k apply -f "$dir/refused.yaml" 2>&1 || true)
check "(the API server refuses what strata does not honour, naming the field)" \
  grep -q "spec.elasticPolicy.rdzvBackend: .*not supported by strata" <<<"$refusal" ||
  echo "$refusal"
check "(and accepts the repository's example PyTorchJobs)" k apply --dry-run=server -o name \
  -f "$repo/examples/resnet50-train/pytorchjob.yaml" -f "$repo/examples/demo/allreduce-pytorchjob.yaml"
owned_by_ptj() {
  [ "$(k get sjob -n team-a resilient -o jsonpath='{.metadata.ownerReferences[0].kind}')" = PyTorchJob ]
}
check "runs as a strata Job that the PyTorchJob owns" wait_for 30 owned_by_ptj
ptj_state() { k get pytorchjob -n team-a resilient -o jsonpath='{.status.conditions[-1:].type}'; }
ptj_running() { [ "$(ptj_state)" = Running ]; }
check "whose status says Running, as Kubeflow's operator would" wait_for 60 ptj_running
checkpointed() { [ -n "$(k get sjob -n team-a resilient -o jsonpath='{.status.lastCheckpointTime}')" ]; }
check "the 2 x 2 allreduce job checkpoints" wait_for 60 checkpointed
rank3=$(workers 3)
check "its rank 3 is one live worker" [ "$(wc -w <<<"$rank3")" = 1 ]
[[ -n $rank3 ]] && kill -9 $rank3
ptj_succeeded() { [ "$(ptj_state)" = Succeeded ]; }
check "killed with SIGKILL, it restarts as a group and the PyTorchJob succeeds" \
  wait_for 120 ptj_succeeded
check "after one group restart" \
  [ "$(k get sjob -n team-a resilient -o jsonpath='{.status.restartCount}')" = 1 ]
check "(which its conditions tell)" grep -q Restarting <<<"$(k get pytorchjob -n team-a resilient \
  -o jsonpath='{.status.conditions[*].type}')"
check "kubectl get pytorchjob shows the State column" \
  grep -q "resilient *Succeeded" <<<"$(k get pytorchjob -n team-a)"
worker_logs=$(cat "$dir"/data/pods/*/logs/*.log 2>/dev/null || true)
check "resumed from its checkpoint" grep -q "(resumed from checkpoint)" <<<"$worker_logs"
check "every rank's result checked" [ "$(grep -c "result ok" <<<"$worker_logs")" -ge 4 ]
k delete pytorchjob -n team-a resilient >/dev/null
gone() {
  ! k get sjob -n team-a resilient >/dev/null 2>&1 &&
    [ -z "$(k get pods -n team-a -l strata.dev/job-name=resilient -o name)" ]
}
check "deleted, its strata Job and pods go (the garbage collector)" wait_for 60 gone
uids_before=$(k get pods -n team-a -o jsonpath='{.items[*].metadata.uid}')

stop_up
start_up "$dir/up-again.log"
check "started again, it registers its nodes again" \
  grep -q "registered 2 node(s)" "$dir/up-again.log"
sleep 3
check "and makes no pod twice" \
  [ "$(k get pods -n team-a -o jsonpath='{.items[*].metadata.uid}')" = "$uids_before" ]

k delete sjob -n team-a hello >/dev/null
no_pods() { [ -z "$(pods)" ]; }
check "deleting the Job deletes its pods" wait_for 90 no_pods

# A compatible kind through strata's own API: stored on the cluster as a strata Job.
api=$(grep -oE 'API listening on http://[0-9.:]+' "$dir/up-again.log" | cut -d' ' -f4)
cat >"$dir/pytorchjob.yaml" <<YAML
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ptj, namespace: team-a}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: python:3-slim
              command: [python3, $repo/examples/workers/allreduce.py, --steps, "10"]
              resources: {limits: {nvidia.com/gpu: 1}}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: python:3-slim
              command: [python3, $repo/examples/workers/allreduce.py, --steps, "10"]
              resources: {limits: {nvidia.com/gpu: 1}}
YAML
check "strata apply of a PyTorchJob works on the Kubernetes store" \
  "$strata" apply -f "$dir/pytorchjob.yaml" --server "$api"
ptj_done() { [ "$(k get sjob -n team-a ptj -o jsonpath='{.status.phase}')" = Succeeded ]; }
check "and kubectl sees it run to Succeeded as a strata Job" wait_for 90 ptj_done
# The CLI on the cluster itself (--kubeconfig), with no strata server in between.
cli_jobs=$("$strata" get jobs -n team-a --kubeconfig "$plane_kubeconfig" 2>&1 || true)
check "strata get --kubeconfig lists the cluster's strata Jobs" grep -q "^ptj .*Succeeded" <<<"$cli_jobs" ||
  echo "$cli_jobs"
check "strata delete --kubeconfig deletes one" \
  "$strata" delete job ptj -n team-a --kubeconfig "$plane_kubeconfig"
ptj_gone() { ! k get sjob -n team-a ptj >/dev/null 2>&1; }
check "(kubectl sees it gone)" wait_for 30 ptj_gone
metrics=$(curl -s -m 10 -H "Authorization: Bearer $(<"$dir/data/admin-token")" "$api/metrics")
check "/metrics counts the cluster's GPUs as on SQLite" \
  grep -qx 'strata_gpu_capacity_gpus{scope="node",name="sim-node-0"} 4' <<<"$metrics"
check "(and every GPU under DCGM's names)" \
  [ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{.*Hostname="sim-node-' <<<"$metrics")" = 8 ]
check "the dashboard is served" grep -qi "<html" <<<"$(curl -s -m 10 "$api/")"
# The console's data on the Kubernetes store: the history its charts open with (a sample every
# 15 s), and the cost ledger's spend over time.
admin_header="Authorization: Bearer $(<"$dir/data/admin-token")"
cluster_history() {
  curl -s -m 10 -H "$admin_header" "$api/apis/strata.dev/v1alpha1/history/cluster?window=1h"
}
has_gpu_history() { grep -q '"name":"gpus"' <<<"$(cluster_history)"; }
check "the console's cluster history is recorded from the Kubernetes store" \
  wait_for 40 has_gpu_history
cost_series=$(curl -s -m 10 -H "$admin_header" \
  "$api/apis/strata.dev/v1alpha1/cost?by=job&window=1h&step=1m")
check "and the cost ledger's spend over time, the deleted Job's included" \
  grep -q '"team-a/ptj"' <<<"$cost_series"

# strata agent --kubeconfig: a virtual kubelet that joins the cluster by itself, as a node: its
# credentials come from the kubelet's TLS bootstrap with a bootstrap token.
"$cluster" bootstrap-token "$dir" "$dir/bootstrap.kubeconfig"
"$strata" agent --kubeconfig "$dir/agent-node.kubeconfig" \
  --bootstrap-kubeconfig "$dir/bootstrap.kubeconfig" --name agent-node --address 127.0.0.1 \
  --simulate 1x4:H100-80GB,prefix=agent --data-dir "$dir/agent" >"$dir/agent.log" 2>&1 &
agent_pid=$!
check "strata agent --kubeconfig joins as a Ready v1 Node" wait_for 30 node_ready agent-node
check "and renews its Lease in kube-node-lease" wait_for 30 k get lease -n kube-node-lease agent-node
check "its certificate request was approved and signed" \
  grep -q "Approved,Issued" <<<"$(k get csr -o wide 2>&1 | grep kube-apiserver-client-kubelet)"
as_agent() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$dir/agent-node.kubeconfig" "$@"; }
check "it acts as system:node:agent-node (its kubeconfig written 0600)" \
  [ "$(as_agent auth whoami -o jsonpath='{.status.userInfo.username}')" = system:node:agent-node ] \
  && [ "$(stat -c %a "$dir/agent-node.kubeconfig")" = 600 ]
check "which may not touch another node (the Node authorizer)" \
  grep -q "Forbidden" <<<"$(as_agent label node "$first_node" stolen=yes 2>&1)"
apply_shell_job team-a wide 3 4 'echo rank $PET_NODE_RANK here'
wide_done() { [ "$(k get sjob -n team-a wide -o jsonpath='{.status.phase}')" = Succeeded ]; }
check "a Job of 3 x 4 GPUs spans the agent's node and succeeds" wait_for 90 wide_done
agent_pod=$(k get pods -n team-a -l strata.dev/job-name=wide \
  -o jsonpath='{.items[?(@.spec.nodeName=="agent-node")].metadata.name}')
check "(one pod on the agent's node)" [ -n "$agent_pod" ]
check "whose log kubectl reads from the agent" \
  grep -q "here" <<<"$(k logs -n team-a "$agent_pod" 2>&1)"
kill -TERM "$agent_pid"
wait "$agent_pid" || true
agent_pid=""

k apply -f - >/dev/null <<'YAML'
apiVersion: strata.dev/v1alpha1
kind: Service
metadata:
  name: chat
  namespace: team-a
spec:
  model: tiny-chat
  engine: {command: [vllm, serve, tiny-chat]}
  resources: {gpu: 2}
  tensorParallel: 2
  minReplicas: 1
  maxReplicas: 2
  autoscaling: {metric: concurrency, target: 4, stableWindow: 6s, panicWindow: 2s}
YAML
ready_replicas() { k get ssvc -n team-a chat -o jsonpath='{.status.readyReplicas}'; }
one_ready() { [ "$(ready_replicas)" = 1 ]; }
check "the Service's replica becomes ready" wait_for 120 one_ready
replica_pods=$(k get pods -n team-a -l strata.dev/service=chat -o jsonpath='{.items[*].metadata.name}')
check "its replica is a v1 Pod" [ "$(wc -w <<<"$replica_pods")" = 1 ]
check "holding two GPUs (TP=2)" [ "$(k get pod -n team-a "$replica_pods" \
  -o jsonpath='{.spec.containers[0].resources.limits.nvidia\.com/gpu}')" = 2 ]
check "Ready in kubectl's eyes" [ "$(k get pod -n team-a "$replica_pods" \
  -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
gateway=$(grep -oE 'gateway listening on http://[0-9.:]+' "$dir/up-again.log" | cut -d' ' -f4)
answer=$(curl -s -m 30 "$gateway/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"model": "tiny-chat", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}' ||
  true)
check "strata's gateway serves the model from it" grep -q '"choices"' <<<"$answer"

# A burst through the gateway with the official openai client (make py-deps installs it): 16
# clients streaming back to back against a target of 4 per replica.
python=${STRATA_PYTHON:-$HOME/.cache/strata-python/bin/python3}
if [[ -x $python ]] && "$python" -c 'import openai' 2>/dev/null; then
  cat >"$dir/burst.py" <<'PY'
import asyncio, json, sys, time
import openai

async def main(url, seconds):
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    until, done, errors, unfinished = time.time() + seconds, 0, [], 0
    async def one():
        nonlocal done, unfinished
        while time.time() < until:
            try:
                stream = await client.chat.completions.create(
                    model="tiny-chat", stream=True, max_tokens=48,
                    messages=[{"role": "user", "content": "hello"}])
                finish = None
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].finish_reason:
                        finish = chunk.choices[0].finish_reason
                done += 1
                unfinished += finish is None
            except Exception as error:  # every failure is reported, none retried
                errors.append(repr(error))
    await asyncio.gather(*(one() for _ in range(16)))
    print(json.dumps({"completed": done, "errors": errors[:5], "unfinished": unfinished}))

asyncio.run(main(sys.argv[1], float(sys.argv[2])))
PY
  "$python" "$dir/burst.py" "$gateway" 30 >"$dir/burst.json" 2>&1 &
  burst_pid=$!
  two_ready() { [ "$(ready_replicas)" = 2 ]; }
  check "under a burst it scales up to a second ready replica" wait_for 60 two_ready
  check "(two replica pods on the cluster)" [ "$(k get pods -n team-a -l strata.dev/service=chat \
    -o name | wc -l)" = 2 ]
  wait "$burst_pid" || true
  # burst_says EXPR: EXPR holds of the burst's summary r.
  burst_says() {
    "$python" -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if $1 else 1)" \
      "$dir/burst.json"
  }
  check "the burst completed streams" burst_says "r['completed'] > 16"
  check "with no error and no stream cut short" burst_says "not r['errors'] and not r['unfinished']"
  back_to_one() {
    [ "$(k get pods -n team-a -l strata.dev/service=chat -o name | wc -l)" = 1 ]
  }
  check "and scales back down to one replica once it is over" wait_for 120 back_to_one
else
  echo "skip: the burst (no openai client in $python; make py-deps installs it)"
fi

if ((failures > 0)); then
  echo "--- strata up"
  tail -n 40 "$dir/up.log" "$dir/up-again.log"
  k get pods -A --show-labels
  k get sjob,ssvc -A -o yaml | grep -vE '^\s+(f:|manager|operation|time|fieldsType|fieldsV1)'
  k get pods -n team-a -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.phase} {.metadata.annotations}{"\n"}{end}'
  exit 1
fi
echo "kube_store_up_test: all checks passed"
