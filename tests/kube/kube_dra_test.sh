#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Dynamic Resource Allocation (resource.k8s.io/v1) on a real control plane: `strata up
# --kubernetes` and the real kube-scheduler beside it allocate GPUs that hand-made ResourceSlices
# publish on two kwok nodes (as NVIDIA's DRA driver would: driver gpu.nvidia.com, productName,
# memory, and strata's NVLink island attribute), to pods whose ResourceClaimTemplates the real
# kube-controller-manager turns into ResourceClaims, checked with kubectl as a user would:
#  - a claim of 2 GPUs of >= 80Gi in one NVLink island (matchAttribute): allocated on the node
#    whose GPUs match, both devices in one island, the pod reserved and bound there, the claim's
#    delete-protection finalizer added; kube-scheduler allocates the same shape of claim the
#    same way on the same cluster;
#  - a third such claim finds no island left and waits, told "cannot allocate all claims" as
#    kube-scheduler says it; once a pod is deleted its claim is deallocated and the waiting pod
#    is placed;
#  - the scheduler's GPU count follows: a 40Gi-only node serves a claim that asks no memory;
#  - a claim strata cannot allocate (allocationMode All) waits, the field named.
# Skips (exit 77) only when tools/kube/build.sh has not built the binaries.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=checks.sh
source "$repo/tests/kube/checks.sh"
require_kube_binaries etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok

cluster=$repo/tools/kube/cluster.sh
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_dra_test.XXXXXX")
strata_pid=""
cleanup() {
  [[ -z $strata_pid ]] || kill -9 "$strata_pid" 2>/dev/null || true
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

kubeconfig=$("$cluster" up "$dir" --nodes 0 --with-kube-scheduler)
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# dra_node NAME MEMORY: a kwok node with no nvidia.com/gpu, and a ResourceSlice of 4 GPUs of
# MEMORY each, gpu-0 and gpu-1 in NVLink island 0, gpu-2 and gpu-3 in island 1.
dra_node() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "$1", "annotations": {"kwok.x-k8s.io/node": "fake"},
              "labels": {"kubernetes.io/hostname": "$1", "type": "kwok"}},
 "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"}}}
JSON
  local devices="" g
  for g in 0 1 2 3; do
    devices+="${devices:+,}{\"name\": \"gpu-$g\", \"attributes\": {
        \"type\": {\"string\": \"gpu\"}, \"productName\": {\"string\": \"NVIDIA H100 80GB HBM3\"},
        \"index\": {\"int\": $g}, \"gpu.strata.dev/nvlinkIsland\": {\"int\": $((g / 2))}},
      \"capacity\": {\"memory\": {\"value\": \"$2\"}}}"
  done
  k create -f - >/dev/null <<JSON
{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "$1-gpus"},
 "spec": {"driver": "gpu.nvidia.com", "nodeName": "$1",
          "pool": {"name": "$1", "generation": 1, "resourceSliceCount": 1},
          "devices": [$devices]}}
JSON
}
dra_node big 80Gi
dra_node small 40Gi
wait_for 60 node_ready big
wait_for 60 node_ready small

k create -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
    - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-80g-one-island}
spec:
  spec:
    devices:
      requests:
        - name: gpus
          exactly:
            deviceClassName: gpu.nvidia.com
            count: 2
            selectors:
              - cel: {expression: 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'}
      constraints:
        - matchAttribute: gpu.strata.dev/nvlinkIsland
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: every-gpu}
spec:
  spec:
    devices:
      requests:
        - name: gpus
          exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}
YAML

"$strata" up --kubernetes --kubeconfig "$kubeconfig" --leader-elect=false >"$dir/strata.log" 2>&1 &
strata_pid=$!
disown "$strata_pid"

# claim_pod NAME SCHEDULER TEMPLATE: a pod whose claim "gpus" is made from TEMPLATE.
claim_pod() {
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1"},
 "spec": {"schedulerName": "$2",
          "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "$3"}],
          "containers": [{"name": "main", "image": "registry.example/train:1",
                          "resources": {"claims": [{"name": "gpus"}]}}]}}
JSON
}
node_of() { k get pod "$1" -o jsonpath='{.spec.nodeName}'; }
bound() { [[ -n $(node_of "$1") ]]; }
scheduled_message() {
  k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
}
claim_of() { k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
# devices POD: the allocated devices of POD's claim, "pool/device" each.
devices() {
  k get resourceclaim "$(claim_of "$1")" \
    -o jsonpath='{range .status.allocation.devices.results[*]}{.pool}/{.device} {end}'
}
# one_island POD: its two devices are gpu-0 and gpu-1, or gpu-2 and gpu-3, of one node.
one_island() {
  local d
  d=$(devices "$1" | tr ' ' '\n' | sed -n 's#.*/gpu-##p' | sort | tr -d '\n')
  [[ $d == 01 || $d == 23 ]]
}

claim_pod train-strata strata two-80g-one-island
wait_for 60 bound train-strata || true
check "strata binds the pod of a 2 x 80Gi claim to the 80Gi node" [ "$(node_of train-strata)" = big ]
check "its claim holds two devices of that node, in one NVLink island" one_island train-strata
check "the claim is reserved for the pod" \
  [ "$(k get resourceclaim "$(claim_of train-strata)" -o jsonpath='{.status.reservedFor[0].name}')" = train-strata ]
check "the claim carries the delete-protection finalizer" \
  grep -q resource.kubernetes.io/delete-protection \
  <<<"$(k get resourceclaim "$(claim_of train-strata)" -o jsonpath='{.metadata.finalizers}')"
check "the allocation names the node, as kube-scheduler writes it" \
  [ "$(k get resourceclaim "$(claim_of train-strata)" -o jsonpath='{.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]}')" = big ]

claim_pod train-kube default-scheduler two-80g-one-island
wait_for 60 bound train-kube || true
check "kube-scheduler places the same claim on the same node, in the other island" \
  [ "$(node_of train-kube)" = big ]
check "its devices are one island too, none of strata's" one_island train-kube
check "no device is allocated twice" \
  [ "$( (devices train-strata; devices train-kube) | tr ' ' '\n' | sed '/^$/d' | sort | uniq -d | wc -l)" = 0 ]

claim_pod train-wait strata two-80g-one-island
wait_for 60 eval '[[ $(scheduled_message train-wait) == *"cannot allocate all claims"* ]]' || true
check "a third 2 x 80Gi claim waits, in kube-scheduler's words" \
  grep -q "0/2 nodes are available: 2 cannot allocate all claims" <<<"$(scheduled_message train-wait)"
k delete pod train-strata --grace-period=0 --force >/dev/null 2>&1
wait_for 90 bound train-wait || true
check "once a pod is gone its claim is deallocated and the waiting pod is placed" \
  [ "$(node_of train-wait)" = big ]
check "in one island" one_island train-wait

claim_pod small-job strata one-gpu
wait_for 60 bound small-job || true
check "a claim of one GPU with no memory asked is placed (either node)" bound small-job

claim_pod every strata every-gpu
wait_for 60 eval '[[ -n $(scheduled_message every) ]]' || true
check "a claim strata cannot allocate waits, the field named" \
  grep -q "allocationMode: only ExactCount is supported" <<<"$(scheduled_message every)"

echo "--- strata"; tail -5 "$dir/strata.log"
((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
