#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The loopback Kubernetes control plane of tools/kube/cluster.sh, checked as a user would with
# the built kubectl: 3 kwok nodes x 8 GPUs Ready with their labels, a pod bound by the real
# kube-scheduler and Running, one asking for too many GPUs refused in kube-scheduler's words,
# RBAC on, the garbage collector at work, every socket on 127.0.0.1, and nothing left after
# `down`. Skips (exit 77) only when tools/kube/build.sh has not built the binaries.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=checks.sh
source "$repo/tests/kube/checks.sh"
require_kube_binaries etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok

cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_cluster_test.XXXXXX")
cleanup() {
  "$cluster" down "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT

started=$SECONDS
kubeconfig=$("$cluster" up "$dir" --nodes 3 --gpus-per-node 8 --with-kube-scheduler)
echo "cluster up in $((SECONDS - started)) s; kubeconfig $kubeconfig"
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# ---- versions: kubectl refuses a skewed server, so both must say the pin ------------------------
versions=$(k version -o json)
check "kubectl and the API server are $KUBE_VERSION" \
  [ "$(jq -r '.clientVersion.gitVersion + " " + .serverVersion.gitVersion' <<<"$versions")" \
  = "$KUBE_VERSION $KUBE_VERSION" ]

# ---- nodes ---------------------------------------------------------------------------------------
nodes=$(k get nodes -o json)
check "3 nodes" [ "$(jq '.items | length' <<<"$nodes")" = 3 ]
check "every node Ready" [ "$(jq '[.items[] | select(.status.conditions[] |
  select(.type == "Ready" and .status == "True"))] | length' <<<"$nodes")" = 3 ]
check "nvidia.com/gpu: 8 allocatable and capacity on every node" [ "$(jq '[.items[] |
  select(.status.allocatable["nvidia.com/gpu"] == "8" and .status.capacity["nvidia.com/gpu"] == "8")]
  | length' <<<"$nodes")" = 3 ]
check "node names kwok-node-0..2" [ "$(jq -r '[.items[].metadata.name] | sort | join(",")' \
  <<<"$nodes")" = "kwok-node-0,kwok-node-1,kwok-node-2" ]
node0=$(jq '.items[] | select(.metadata.name == "kwok-node-0")' <<<"$nodes")
label() { jq -r --arg key "$1" '.metadata.labels[$key] // "(none)"' <<<"$node0"; }
check "GPU Feature Discovery labels" [ "$(label nvidia.com/gpu.product) $(label nvidia.com/gpu.memory) \
$(label nvidia.com/gpu.count)" = "NVIDIA-H100-80GB-HBM3 81559 8" ]
check "topology labels" [ "$(label topology.strata.dev/block) $(label topology.strata.dev/rack) \
$(label kubernetes.io/hostname)" = "block-0 rack-0 kwok-node-0" ]
check "kwok's annotation and taint" [ "$(jq -r '.metadata.annotations["kwok.x-k8s.io/node"] + " " +
  (.spec.taints[] | select(.key == "kwok.x-k8s.io/node") | .value + ":" + .effect)' <<<"$node0")" \
  = "fake fake:NoSchedule" ]

# ---- a pod bound by kube-scheduler and run by kwok ----------------------------------------------
gpu_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  tolerations:
  - key: kwok.x-k8s.io/node
    operator: Exists
    effect: NoSchedule
  containers:
  - name: trainer
    image: trainer:latest
    resources:
      limits:
        nvidia.com/gpu: "$2"
EOF
}
gpu_pod trainer 8 | k create -f - >/dev/null
pod_phase() { [ "$(k get pod "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }
check "a pod asking for 8 GPUs is Running" wait_for 60 pod_phase trainer Running
pod=$(k get pod trainer -o json)
check "bound to a kwok node by default-scheduler" [ "$(jq -r '.spec.nodeName | startswith("kwok-node-")' \
  <<<"$pod")" = true ]
check "a Scheduled event from default-scheduler" wait_for 20 bash -c \
  "'$KUBE_BIN_DIR/kubectl' --kubeconfig '$kubeconfig' get events \
   --field-selector involvedObject.name=trainer,reason=Scheduled -o json |
   jq -e '.items[] | select(.reportingComponent == \"default-scheduler\" or
     .source.component == \"default-scheduler\")'"

gpu_pod too-big 9 | k create -f - >/dev/null
unschedulable() {
  k get pod too-big -o json | jq -e '.status.conditions[] | select(.type == "PodScheduled" and
    .reason == "Unschedulable" and (.message | contains("Insufficient nvidia.com/gpu")))'
}
check "a pod asking for 9 GPUs is Unschedulable: Insufficient nvidia.com/gpu" wait_for 30 unschedulable

# ---- RBAC ----------------------------------------------------------------------------------------
forbidden() { ! "$@" >/dev/null 2>"$dir/stderr" && grep -q Forbidden "$dir/stderr"; }
check "system:anonymous may not list pods" forbidden k --as=system:anonymous get pods
check "an unprivileged user may not list pods" forbidden k --as=alice get pods
check "a request without a client certificate is refused" [ "$(curl -s -o /dev/null -w '%{http_code}' \
  --cacert "$dir/pki/ca.crt" "$(k config view -o jsonpath='{.clusters[0].cluster.server}')/api/v1/pods")" \
  = 403 ]

# ---- the garbage collector deletes a dependent whose owner is gone --------------------------------
k create configmap owner >/dev/null
owner_uid=$(k get configmap owner -o jsonpath='{.metadata.uid}')
k create -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  ownerReferences:
  - apiVersion: v1
    kind: ConfigMap
    name: owner
    uid: $owner_uid
EOF
k delete configmap owner >/dev/null
check "the garbage collector deletes the dependent" wait_for 60 bash -c \
  "! '$KUBE_BIN_DIR/kubectl' --kubeconfig '$kubeconfig' get configmap dependent"

# ---- every socket on loopback ------------------------------------------------------------------
pids=$(cat "$dir"/pids/*.pid)
# shellcheck disable=SC2086 # one argument per pid
listening=$(python3 "$repo/tests/kube/listening_addresses.py" $pids)
echo "listening: $(tr '\n' ' ' <<<"$listening")"
check "the processes listen" [ -n "$listening" ]
check "every listening socket is on 127.0.0.1" [ -z "$(grep -v '^127\.0\.0\.1:' <<<"$listening")" ]

# ---- down leaves nothing ------------------------------------------------------------------------
started=$SECONDS
"$cluster" down "$dir"
echo "cluster down in $((SECONDS - started)) s"
left=""
for pid in $pids; do
  # A zombie has exited; reaping it is its new parent's business (init, or a subreaper).
  state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) || continue
  if [[ $state != Z ]]; then left+=" $pid"; fi
done
check "down leaves no process" [ -z "$left" ]
check "down again is a no-op" "$cluster" down "$dir"

if ((failures)); then
  echo "kube_cluster_test: $failures check(s) failed; logs were in $dir/logs:"
  tail -n 30 "$dir"/logs/*.log || true
  exit 1
fi
echo "kube_cluster_test: all checks passed"
