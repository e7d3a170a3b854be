#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `kubectl apply -f` and `strata apply -f` of the same manifests give the same objects (issue 20's
# must-show), and server-side apply through stock kubectl (v1.37, built by tools/kube/build.sh)
# and the official Kubernetes Python client (Debian's python3-kubernetes), against a real
# `strata up` on a simulated cluster:
#  - one file of several kinds (a Namespace, a ConfigMap, a Secret, strata's Queue,
#    ResourceFlavor, Tenant and Job, and Kubernetes' v1 Pod, a compatible kind) applied by kubectl
#    into one namespace and by strata into another: every object reads back the same through
#    GET, but for what the server sets (uid, resourceVersion, creationTimestamp, managedFields,
#    kubectl's last-applied annotation) and the names that differ;
#  - kubectl apply --server-side: creates with managedFields of manager kubectl, a change is
#    applied, a field another manager owns is a conflict naming it and the manager, --force-
#    conflicts takes it; --dry-run=server changes nothing; a label the file drops is removed; a
#    Node (a core kind) takes a label so;
#  - kubectl apply --server-side over objects kubectl apply (client-side) made takes them over
#    without conflicts; a client-side apply after it still works;
#  - kubectl events and the Python client's EventsV1Api read events.k8s.io/v1;
#  - the Python client lists, reads, watches, creates, patches (merge and server-side apply)
#    and deletes (tests/kubectl/python_client_check.py).
# Skips (exit 77) only when kubectl or python3-kubernetes is not there.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=strata_for_kubectl.sh
source "$repo/tests/kubectl/strata_for_kubectl.sh"
start_strata_for_kubectl apply_parity_test 2x8:H100-80GB

# manifests SUFFIX: the same objects, named apart by SUFFIX (the namespace, and the
# cluster-scoped names).
manifests() {
  local s=$1
  cat <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: parity-$s, labels: {purpose: parity}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: parity-$s, labels: {app: train}}
data: {EPOCHS: "3", GREETING: hello}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: parity-$s}
type: Opaque
stringData: {token: s3cret}
---
apiVersion: strata.dev/v1alpha1
kind: ResourceFlavor
metadata: {name: h100-$s}
spec: {nodeLabels: {nvidia.com/gpu.product: H100-80GB}}
---
apiVersion: strata.dev/v1alpha1
kind: Queue
metadata: {name: research-$s}
spec:
  cohort: lab
  flavors:
  - name: h100-$s
    resources: [{name: gpu, nominal: "8"}]
---
apiVersion: strata.dev/v1alpha1
kind: Tenant
metadata: {name: acme-$s}
spec: {priorityClass: standard}
---
apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: train
  namespace: parity-$s
  labels: {team: research}
  annotations: {owner: ada}
spec:
  replicas: 1
  queue: research-$s
  priority: 3
  resources: {gpu: "64"}
  template:
    command: [sh, -c, "sleep 600"]
    env: [{name: EPOCHS, value: "3"}]
---
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: parity-$s, labels: {app: probe}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "sleep 600"]
    resources: {limits: {nvidia.com/gpu: "16"}}
    env: [{name: GREETING, valueFrom: {configMapKeyRef: {name: settings, key: GREETING}}}]
YAML
}
manifests bykubectl >"$dir/kubectl.yaml"
manifests bystrata >"$dir/strata.yaml"

check "kubectl apply -f of several kinds" has "pod/probe created" "$(k apply -f "$dir/kubectl.yaml")"
check "strata apply -f of the same" "$strata" apply -f "$dir/strata.yaml" --server "$STRATA_API"

# normalized SUFFIX KIND NAME [NAMESPACED]: the object as GET returns it, without what the server
# sets, what runs later (status, and a pod's node) and the suffix.
normalized() {
  local s=$1 kind=$2 name=$3 ns=()
  [[ ${4:-} == namespaced ]] && ns=(-n "parity-$s")
  k get "$kind" "$name-$s" "${ns[@]}" -o json 2>/dev/null ||
    k get "$kind" "$name" "${ns[@]}" -o json
}
strip() { # SUFFIX: reads an object, prints it without server-set fields, the suffix replaced
  "$python" -c '
import json, sys
o = json.load(sys.stdin)
m = o["metadata"]
for f in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"):
    m.pop(f, None)
a = m.get("annotations", {})
a.pop("kubectl.kubernetes.io/last-applied-configuration", None)
if not a:
    m.pop("annotations", None)
o.pop("status", None)
o.get("spec", {}).pop("nodeName", None)
print(json.dumps(o, sort_keys=True, indent=1).replace(sys.argv[1], "SUFFIX"))
' "$1"
}
same_object() { # KIND NAME [namespaced]
  local a b
  a=$(normalized bykubectl "$@" | strip bykubectl)
  b=$(normalized bystrata "$@" | strip bystrata)
  [[ $a == "$b" ]] || { diff <(echo "$a") <(echo "$b") | head -20; return 1; }
}
# strata's flavors are resourceflavors.strata.dev: `resourceflavor` means Kueue's, as with Kueue.
for object in "namespace parity" "resourceflavors.strata.dev h100" "queue research" "tenant acme" \
  "configmap settings namespaced" "secret creds namespaced" "sjob train namespaced" \
  "pod probe namespaced"; do
  read -r -a words <<<"$object"
  # shellcheck disable=SC2086
  check "kubectl and strata apply give the same ${words[0]}" same_object ${object}
done

# ---- server-side apply ---------------------------------------------------------------------------
ssa_job() { # PRIORITY LABELS
  cat <<YAML
apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: served
  namespace: parity-bykubectl
  labels: {$2}
spec:
  replicas: 1
  queue: research-bykubectl
  priority: $1
  resources: {gpu: "64"}
  template: {command: [sh, -c, "sleep 600"]}
YAML
}
ssa() { k apply --server-side "$@"; }
check "apply --server-side creates" equals "$(ssa_job 1 "a: '1', b: '2'" | ssa -f -)" \
  "job.strata.dev/served serverside-applied"
check "its manager is kubectl, by Apply" equals \
  "$(k get sjob served -n parity-bykubectl --show-managed-fields -o jsonpath='{.metadata.managedFields[0].manager}/{.metadata.managedFields[0].operation}')" \
  "kubectl/Apply"
check "a changed file is applied" equals "$(ssa_job 2 "a: '1'" | ssa -f - >/dev/null;
  jp sjob served -n parity-bykubectl '{.spec.priority}')" 2
check "a label the file drops is removed" equals \
  "$(jp sjob served -n parity-bykubectl '{.metadata.labels}')" '{"a":"1"}'
check "a dry run changes nothing" equals "$(ssa_job 5 "a: '1'" | ssa --dry-run=server -f - >/dev/null;
  jp sjob served -n parity-bykubectl '{.spec.priority}')" 2
ssa_job 7 "a: '1'" >"$dir/ci.yaml"
check "another manager's field is a conflict naming it and its manager" fails_saying \
  'conflict with "kubectl" using strata.dev/v1alpha1: .spec.priority' \
  ssa --field-manager ci -f "$dir/ci.yaml"
check "--force-conflicts takes it" equals "$(ssa --field-manager ci --force-conflicts \
  -f "$dir/ci.yaml" >/dev/null; jp sjob served -n parity-bykubectl '{.spec.priority}')" 7

# Every kind takes it, the core group's too: a label of a Node.
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: sim-node-0, labels: {pool: ops}}\n' \
  >"$dir/node.yaml"
check "apply --server-side of a Node's label" equals \
  "$(ssa --field-manager ops -f "$dir/node.yaml" >/dev/null; jp node sim-node-0 '{.metadata.labels.pool}')" \
  ops
check "(the Node keeps its GPUs)" equals "$(jp node sim-node-0 '{.status.allocatable.nvidia\.com/gpu}')" 8

# Server-side apply over what client-side apply made: the same file, no conflict.
check "apply --server-side over kubectl apply's objects" has "pod/probe serverside-applied" \
  "$(ssa -f "$dir/kubectl.yaml" 2>&1)"
check "the ConfigMap is now kubectl's, by Apply" has "kubectl/Apply" \
  "$(k get configmap settings -n parity-bykubectl --show-managed-fields \
    -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation} {end}')"
sed -i 's/GREETING: hello/GREETING: bonjour/' "$dir/kubectl.yaml"
check "and client-side apply after it still works" has "configmap/settings configured" \
  "$(k apply -f "$dir/kubectl.yaml")"
check "with the file's value" equals "$(jp configmap settings -n parity-bykubectl '{.data.GREETING}')" \
  bonjour

# ---- events.k8s.io -------------------------------------------------------------------------------
check "discovery lists events.k8s.io" has "events.k8s.io/v1" "$(k api-versions)"
waits() { has "FailedScheduling   Job/train" "$(k "$@" -n parity-bykubectl 2>&1)"; }
check "kubectl events shows why the Job waits" waits events
check "and kubectl get of events.k8s.io's Events too" waits get events.v1.events.k8s.io

# ---- the Python client ---------------------------------------------------------------------------
check "the Python client: list, read, watch, create, patch, server-side apply, delete, events" \
  "$python" "$repo/tests/kubectl/python_client_check.py" "$STRATA_API" "$STRATA_ADMIN_TOKEN"

[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
