#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Kueue on the loopback control plane of tools/kube/cluster.sh --with-kueue: a ClusterQueue of
# 8 GPUs admits one 8-GPU pod (its webhook gated the pod, Kueue lifts the gate, kube-scheduler
# binds it, kwok runs it) and holds a second one back for quota until the first is deleted.
# Also reads a ClusterQueue at v1beta1 (Kueue's conversion webhook). Skips (exit 77) only when
# tools/kube/build.sh has not built the binaries.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=checks.sh
source "$repo/tests/kube/checks.sh"
require_kube_binaries etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kueue

cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_kueue_test.XXXXXX")
cleanup() {
  "$cluster" down "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT

started=$SECONDS
kubeconfig=$("$cluster" up "$dir" --nodes 2 --gpus-per-node 8 --with-kube-scheduler --with-kueue)
echo "cluster up with Kueue in $((SECONDS - started)) s"
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }

k create -f - >/dev/null <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: h100
spec:
  nodeLabels:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: "64"
      - name: memory
        nominalQuota: 256Gi
      - name: nvidia.com/gpu
        nominalQuota: "8"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: team
  namespace: default
spec:
  clusterQueue: team
EOF

queued_pod() {
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels:
    kueue.x-k8s.io/queue-name: team
spec:
  tolerations:
  - key: kwok.x-k8s.io/node
    operator: Exists
    effect: NoSchedule
  containers:
  - name: trainer
    image: trainer:latest
    resources:
      requests:
        cpu: "1"
        memory: 1Gi
      limits:
        nvidia.com/gpu: "8"
EOF
}
pod_phase() { [ "$(k get pod "$1" -o jsonpath='{.status.phase}')" = "$2" ]; }
gated() { k get pod "$1" -o jsonpath='{.spec.schedulingGates[*].name}' | grep -q kueue.x-k8s.io/admission; }

queued_pod first | k create -f - >/dev/null
check "the first 8-GPU pod is admitted, bound and Running" wait_for 60 pod_phase first Running
queued_pod second | k create -f - >/dev/null
check "Kueue's webhook gated the second pod" gated second
waiting_for_quota() {
  k get workloads -o json | jq -e '.items[] | select(.metadata.ownerReferences[0].name == "second")
    | .status.conditions[] | select(.type == "QuotaReserved" and .status == "False"
    and (.message | contains("nvidia.com/gpu")))'
}
check "the second pod's Workload waits for GPU quota" wait_for 30 waiting_for_quota
check "the second pod is still gated" gated second
k delete pod first --wait=false >/dev/null
check "with the first pod gone, the second runs" wait_for 60 pod_phase second Running

check "a ClusterQueue reads at v1beta1 (conversion webhook)" [ "$(k get \
  clusterqueues.v1beta1.kueue.x-k8s.io team -o jsonpath='{.apiVersion}')" = kueue.x-k8s.io/v1beta1 ]

pids=$(cat "$dir"/pids/*.pid)
# shellcheck disable=SC2086 # one argument per pid
listening=$(python3 "$repo/tests/kube/listening_addresses.py" $pids)
check "every listening socket is on 127.0.0.1 (Kueue's too)" \
  [ -z "$(grep -v '^127\.0\.0\.1:' <<<"$listening")" ]

"$cluster" down "$dir"
left=""
for pid in $pids; do
  # A zombie has exited; reaping it is its new parent's business (init, or a subreaper).
  state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) || continue
  if [[ $state != Z ]]; then left+=" $pid"; fi
done
check "down leaves no process" [ -z "$left" ]

if ((failures)); then
  echo "kube_kueue_test: $failures check(s) failed; end of the logs in $dir/logs:"
  tail -n 30 "$dir"/logs/*.log || true
  exit 1
fi
echo "kube_kueue_test: all checks passed"
