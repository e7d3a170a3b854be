#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# `strata kubernetes manifests | kubectl apply -f -` on a real control plane (tools/kube/cluster.sh),
# checked with kubectl as a user would:
#  - every object applies; strata's CRDs become Established;
#  - `kubectl explain` prints strata's own field descriptions (the schemas come from api's tables);
#  - server-side validation refuses a Job whose replicas is "three", naming the field, and a field
#    strata does not honour, naming it; a valid Job is stored and listed with strata's columns;
#  - every example of strata's CRD kinds passes server-side validation;
#  - the scheduler's service account may do what `strata up --kubernetes` does and no more, and
#    the Deployment's own arguments, run here with that account's token, lead, bind a pod and
#    explain one that does not fit with no request refused;
#  - the Deployment asks for 2 replicas with leader election, non-root and read-only;
#  - the aggregated roles let a namespace's editors use strata Jobs (and PyTorchJobs);
#  - the control plane's Deployment (strata up --store kubernetes --no-nodes) and its Services,
#    and its own arguments, run here with its account's token and the Secret's API tokens, lead
#    and serve with no request refused;
#  - the inventory DaemonSet's own arguments, run here with its account's token and the fake
#    NVML library, label and annotate its Node (GFD's labels, NVLink islands, MIG, GPU health,
#    the GPUs) and nothing else, and serve DCGM's figures; its account may patch nodes only.
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
dir=$(mktemp -d "${TMPDIR:-/tmp}/kube_install_test.XXXXXX")
chmod 755 "$dir"  # pods run as nobody when the test runs as root: they reach their dirs
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  "$cluster" down "$dir" >/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

kubeconfig=$("$cluster" up "$dir" --nodes 1)
k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# ---- install -------------------------------------------------------------------------------------
"$strata" kubernetes manifests --image registry.example/strata:test >"$dir/install.yaml"
check "the manifests apply" k apply -f - <"$dir/install.yaml"
crds=()
for plural in queues resourceflavors jobs services tenants; do crds+=("crd/$plural.strata.dev"); done
established() { k wait --for=condition=Established --timeout=60s "${crds[@]}" >/dev/null; }
check "strata's 5 CRDs are Established" established
again=$(k apply -f "$dir/install.yaml" 2>&1) || again+=" (failed)"
check "applying them again changes nothing" [ "$(grep -vc ' unchanged$' <<<"$again")" = 0 ]

# ---- explain -------------------------------------------------------------------------------------
# The API server publishes a new CRD's OpenAPI a moment after it is Established, and kubectl's
# discovery cache learns the short names once they are served.
wait_for 60 k explain jobs.spec.replicas --api-version=strata.dev/v1alpha1
wait_for 30 k get sjob
explained=$(k explain sjob.spec.replicas 2>&1 || true)
indent() { sed 's/^/  | /'; }
indent <<<"$explained"
check "kubectl explain prints strata's description of spec.replicas" \
  grep -qF "Pods (nodes), placed all together or not at all (default 1)." <<<"$explained"
explains() { grep -qF "$2" <<<"$(k explain "$1" --api-version=strata.dev/v1alpha1)"; }
check "kubectl explain with the group's version" \
  explains jobs.spec.template.command "The program and its first arguments."

# ---- validation ----------------------------------------------------------------------------------
job() { # NAME REPLICAS [EXTRA_SPEC_JSON]
  cat <<JSON
{"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
 "metadata": {"name": "$1", "namespace": "default"},
 "spec": {"replicas": $2, "procPerNode": 8, "queue": "research",
          "resources": {"gpu": 8, "cpu": "32", "memory": "256Gi"}${3:+, $3},
          "template": {"command": ["python", "train.py"]}}}
JSON
}
refused=$(job bad '"three"' | k apply -f - 2>&1) && refused="(accepted)"
echo "  | $refused"
check "replicas: \"three\" is refused, naming spec.replicas" \
  grep -qE 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer' \
  <<<"$refused"
refused=$(job negative -1 | k apply -f - 2>&1) && refused="(accepted)"
check "replicas: -1 is refused" grep -q 'spec.replicas: Invalid value: -1' <<<"$refused"
refused=$(job late 1 '"runtimeLimit": "an hour"' | k apply -f - 2>&1) && refused="(accepted)"
check "a duration strata cannot read is refused" grep -q 'spec.runtimeLimit' <<<"$refused"
refused=$(job typo 1 '"replica": 2' | k apply -f - 2>&1) && refused="(accepted)"
check "an unknown field is refused, not pruned" grep -q 'unknown field "spec.replica"' <<<"$refused"
refused=$(job evict 1 '"tolerations": [{"key": "k", "tolerationSeconds": 30}]' |
  k apply -f - 2>&1) && refused="(accepted)"
echo "  | $refused"
check "a field strata does not honour is refused, naming it" \
  grep -q 'spec.tolerations\[0\].tolerationSeconds.*not supported by strata' <<<"$refused"

accepted() { "$@" | k apply -f - >/dev/null; }
check "a valid Job is accepted" accepted job train 4
listed=$(k get sjob train --no-headers)
header=$(k get jobs.strata.dev)
indent <<<"$header"
check "kubectl get shows strata's columns" \
  [ "$(awk 'NR == 1 { print $1, $2, $3, $4, $5, $6, $7 }' <<<"$header")" \
  = "NAME REPLICAS GPUS/POD QUEUE PHASE RESTARTS AGE" ]
check "and the Job's values in them" [ "$(awk '{ print $1, $2, $3, $4 }' <<<"$listed")" \
  = "train 4 8 research" ]
batch_jobs() { [[ $(k get jobs 2>&1) == "No resources found in default namespace." ]]; }
check "kubectl get jobs still means batch Jobs" batch_jobs
in_category() { [[ $(k get strata -o name) == *job.strata.dev/train* ]]; }
check "kubectl get strata lists strata's objects" in_category
phase() { k get sjob train -o jsonpath='{.status.phase}'; }
status_is_a_subresource() {
  k patch sjob train --type merge -p '{"status": {"phase": "Running"}}' >/dev/null
  [[ -z $(phase) ]] || return 1
  k patch sjob train --subresource status --type merge \
    -p '{"status": {"phase": "Running", "restartCount": 1}}' >/dev/null
  [[ $(phase) == Running ]]
}
check "status is a subresource: a write to the object leaves it, one to status sets it" \
  status_is_a_subresource

# Every example of strata's kinds that are CRDs (Pods are v1 Pods on a cluster) is accepted.
k create namespace team-a >/dev/null
k create namespace team-b >/dev/null
dry_run() { k apply --dry-run=server -f "$1" >/dev/null; }
while IFS= read -r example; do
  grep -qE '^kind: (Pod|Node|Event)$' "$example" && continue
  check "the CRDs accept ${example#"$repo"/}" dry_run "$example"
done < <(grep -l 'apiVersion: strata.dev/v1alpha1' -r "$repo/examples" --include='*.yaml' | sort)

# ---- RBAC ----------------------------------------------------------------------------------------
sa=system:serviceaccount:strata-system:strata
can() { [[ $(k auth can-i --as="$sa" "$@" 2>/dev/null) == yes ]]; }
cannot() { ! can "$@"; }
# may VERB GROUP RESOURCE SUBRESOURCE: a SubjectAccessReview, for kinds this cluster does not
# serve (Kueue's), which kubectl auth can-i cannot name without discovery.
may() {
  [[ $(k create -o jsonpath='{.status.allowed}' -f - <<JSON
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
 "spec": {"user": "$sa", "groups": ["system:serviceaccounts", "system:authenticated"],
          "resourceAttributes": {"verb": "$1", "group": "$2", "resource": "$3",
                                 "subresource": "$4"}}}
JSON
  ) == true ]]
}
may_not() { ! may "$@"; }
check "the scheduler may create pods/binding" can create pods/binding -n default
check "(the binding subresource itself)" can create pods --subresource=binding -n default
check "list and watch nodes" can watch nodes
check "evict pods" can create pods --subresource=eviction -A
check "patch pods/status" can patch pods --subresource=status -A
check "but not update the status of pods" cannot update pods --subresource=status -A
for kind in clusterqueues localqueues resourceflavors workloadpriorityclasses; do
  check "watch Kueue's $kind" may watch kueue.x-k8s.io "$kind" ""
done
check "patch Kueue's ClusterQueue status" may patch kueue.x-k8s.io clusterqueues status
check "but not the ClusterQueues themselves" may_not patch kueue.x-k8s.io clusterqueues ""
check "renew its Lease" can update leases.coordination.k8s.io/strata-scheduler -n strata-system
check "but not create secrets" cannot create secrets -A
check "nor read them" cannot get secrets -A
check "nor update nodes" cannot update nodes
check "nor another Lease" cannot update leases.coordination.k8s.io/other -n strata-system
check "nor a Lease in kube-system" cannot create leases.coordination.k8s.io -n kube-system
check "nor strata's kinds (the store's identity has them)" cannot update jobs.strata.dev -A

# The identity of strata up --store kubernetes.
plane=system:serviceaccount:strata-system:strata-control-plane
plane_can() { [[ $(k auth can-i --as="$plane" "$@" 2>/dev/null) == yes ]]; }
plane_cannot() { ! plane_can "$@"; }
check "the store's identity may update strata Jobs' status" \
  plane_can update jobs.strata.dev --subresource=status -A
check "bind pods and update their status" plane_can create pods --subresource=binding -A
check "(update pods/status)" plane_can update pods --subresource=status -A
check "renew node Leases" plane_can update leases.coordination.k8s.io -n kube-node-lease
check "its own election Lease" \
  plane_can update leases.coordination.k8s.io/strata-control-plane -n strata-system
check "but no other Lease there" \
  plane_cannot update leases.coordination.k8s.io/other -n strata-system
check "nor one in kube-system" \
  plane_cannot update leases.coordination.k8s.io/strata-control-plane -n kube-system
# Its node agents resolve pods' env from Secrets and ConfigMaps, as kubelets do (they run with
# the plane's identity: no narrower node identity yet), so it reads them, and writes none.
check "reads Secrets for its pods' env" plane_can get secrets -A
check "but does not write them" plane_cannot create secrets -A
check "(nor change them)" plane_cannot update secrets -A

# Whoever may edit a namespace (the aggregated edit role) may run strata Jobs there.
k create rolebinding alice-edit --clusterrole=edit --user=alice -n default >/dev/null
check "a namespace's editors may create strata Jobs" \
  [ "$(k auth can-i --as=alice create jobs.strata.dev -n default)" = yes ]
# (A SubjectAccessReview: kubectl auth can-i cannot name a kind this cluster does not serve.)
alice_may_create_pytorchjobs() {
  [[ $(k create -o jsonpath='{.status.allowed}' -f - <<JSON
{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
 "spec": {"user": "alice", "groups": ["system:authenticated"],
          "resourceAttributes": {"verb": "create", "group": "kubeflow.org",
                                 "resource": "pytorchjobs", "namespace": "default"}}}
JSON
  ) == true ]]
}
check "(and Kubeflow PyTorchJobs, which strata serves with --compat-crds)" \
  wait_for 30 alice_may_create_pytorchjobs
check "but not Queues" [ "$(k auth can-i --as=alice create queues.strata.dev 2>/dev/null)" = no ]

# ---- the Deployment ------------------------------------------------------------------------------
deployment=$(k get deployment strata-scheduler -n strata-system -o json)
check "the scheduler's Deployment asks for 2 replicas" [ "$(jq .spec.replicas <<<"$deployment")" = 2 ]
container=$(jq '.spec.template.spec.containers[0]' <<<"$deployment")
check "running strata up --kubernetes with leader election on a Lease in strata-system" \
  [ "$(jq -r '.args | join(" ")' <<<"$container")" = "up --kubernetes --scheduler-name=strata \
--leader-elect=true --leader-elect-resource-namespace=strata-system \
--leader-elect-resource-name=strata-scheduler" ]
check "as the strata service account" \
  [ "$(jq -r .spec.template.spec.serviceAccountName <<<"$deployment")" = strata ]
check "non-root, read-only, no privilege escalation, with requests" [ "$(jq -c '[.securityContext |
  .runAsNonRoot, .readOnlyRootFilesystem, .allowPrivilegeEscalation], .resources.requests' \
  <<<"$container" | tr -d '\n')" = '[true,true,false]{"cpu":"100m","memory":"128Mi"}' ]

# Its ReplicaSet's pods pass the namespace's Pod Security admission ("restricted"): they exist
# (Pending: no kube-scheduler runs here).
scheduler_pods() {
  [[ $(k get pods -n strata-system -l app.kubernetes.io/name=strata-scheduler -o name | wc -l) == 2 ]]
}
check "its 2 pods are admitted under Pod Security restricted" wait_for 60 scheduler_pods

# ---- the scheduler with exactly those rights ----------------------------------------------------
# The Deployment's own arguments, run here with its service account's token: every request
# `strata up --kubernetes` makes must be allowed (nothing in its log is forbidden).
mapfile -t args < <(jq -r '.args[]' <<<"$container")
sa_kubeconfig=$dir/strata-sa.kubeconfig
service_account_kubeconfig "$kubeconfig" strata-system strata "$sa_kubeconfig"
"$strata" "${args[@]}" --kubeconfig "$sa_kubeconfig" >"$dir/strata.log" 2>&1 &
scheduler=$!
pids+=("$scheduler")
probe() { # NAME GPUS
  k create -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "$1", "namespace": "default"},
 "spec": {"schedulerName": "strata", "tolerations": [{"operator": "Exists"}],
          "containers": [{"name": "main", "image": "registry.example/probe:1",
                          "resources": {"limits": {"nvidia.com/gpu": "$2"}}}]}}
JSON
}
probe fits 1
probe too-big 9
bound() { [[ -n $(k get pod "$1" -o jsonpath='{.spec.nodeName}') ]]; }
explained() {
  [[ $(k get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}') == \
    "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." ]]
}
check "strata up --kubernetes as the service account leads on strata-system's Lease" \
  wait_for 30 grep -q "leading (lease strata-system/strata-scheduler)" "$dir/strata.log"
check "binds a pod" wait_for 30 bound fits
check "and explains one that does not fit" wait_for 30 explained too-big
kill "$scheduler"
wait "$scheduler" || true
indent <"$dir/strata.log"
nothing_forbidden() { ! grep -qiE "forbidden|HTTP 403" "$dir/strata.log"; }
check "with no request refused" nothing_forbidden

# ---- the control plane with its store on the cluster ---------------------------------------------
plane_deployment=$(k get deployment strata-control-plane -n strata-system -o json)
check "the control plane's Deployment asks for 2 replicas" \
  [ "$(jq .spec.replicas <<<"$plane_deployment")" = 2 ]
plane_container=$(jq '.spec.template.spec.containers[0]' <<<"$plane_deployment")
check "of node-less, leader-elected planes serving the API and the gateway on the pod's addresses" \
  [ "$(jq -r '.args | join(" ")' <<<"$plane_container")" = "up --store=kubernetes --no-nodes \
--leader-elect=true --leader-elect-resource-namespace=strata-system --listen=0.0.0.0:7070 --gateway-listen=0.0.0.0:8000 \
--token-file=/etc/strata/api-tokens/tokens --data-dir=/var/lib/strata" ]
check "with the API's tokens from the admin's Secret, read-only" [ "$(jq -c '[.volumes[0].secret.secretName,
  .containers[0].volumeMounts[0].readOnly]' <<<"$(jq .spec.template.spec <<<"$plane_deployment")")" \
  = '["strata-api-tokens",true]' ]
check "ready when /readyz answers" \
  [ "$(jq -r .readinessProbe.httpGet.path <<<"$plane_container")" = /readyz ]
service_port() { k get service "$1" -n strata-system -o jsonpath='{.spec.selector.app\.kubernetes\.io/name} {.spec.ports[0].port}'; }
check "the Service strata-api fronts every plane's API" \
  [ "$(service_port strata-api)" = "strata-control-plane 7070" ]
check "and strata-gateway their gateways" \
  [ "$(service_port strata-gateway)" = "strata-control-plane 8000" ]
plane_pods() {
  [[ $(k get pods -n strata-system -l app.kubernetes.io/name=strata-control-plane -o name |
    wc -l) == 2 ]]
}
check "its 2 pods are admitted under Pod Security restricted" wait_for 60 plane_pods

# The Deployment's own arguments, run here with its service account's token (the pod's paths
# and ports made this machine's): it leads, serves the API with the Secret's tokens, and makes
# no request RBAC refuses.
head -c 32 /dev/urandom | base64 >"$dir/api-tokens"
mapfile -t plane_args < <(jq -r '.args[]' <<<"$plane_container" | sed \
  -e 's|^--listen=.*|--listen=127.0.0.1:0|' -e 's|^--gateway-listen=.*|--gateway-listen=127.0.0.1:0|' \
  -e "s|^--token-file=.*|--token-file=$dir/api-tokens|" -e "s|^--data-dir=.*|--data-dir=$dir/plane|")
plane_kubeconfig=$dir/strata-control-plane.kubeconfig
service_account_kubeconfig "$kubeconfig" strata-system strata-control-plane "$plane_kubeconfig"
"$strata" "${plane_args[@]}" --kubeconfig "$plane_kubeconfig" >"$dir/plane.log" 2>&1 &
plane=$!
pids+=("$plane")
check "the control plane as its service account leads" \
  wait_for 30 grep -q "control plane: leading" "$dir/plane.log"
plane_api=$(grep -oE 'API listening on http://[0-9.:]+' "$dir/plane.log" | cut -d' ' -f4)
status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "answers /readyz" [ "$(status_of "$plane_api/readyz")" = 200 ]
jobs_url=$plane_api/apis/strata.dev/v1alpha1/namespaces/default/jobs
check "lists strata Jobs with a token of the Secret" \
  [ "$(status_of -H "Authorization: Bearer $(cat "$dir/api-tokens")" "$jobs_url")" = 200 ]
check "and refuses a write without one" \
  [ "$(status_of -X POST -H 'Content-Type: application/json' -d '{}' "$jobs_url")" = 401 ]
kill "$plane"
wait "$plane" || true
indent <"$dir/plane.log"
check "with no request refused" bash -c "! grep -qiE 'forbidden|HTTP 403' '$dir/plane.log'"

# ---- the inventory DaemonSet ---------------------------------------------------------------------
inventory_pod=$(k get daemonset strata-inventory -n strata-system -o json | jq .spec.template.spec)
check "the inventory DaemonSet runs on GPU nodes (GFD's or NFD's label), tolerating their taint" \
  [ "$(jq -c '[.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[].matchExpressions[0].key, .tolerations[0].key]' <<<"$inventory_pod")" \
  = '["nvidia.com/gpu.present","feature.node.kubernetes.io/pci-10de.present","nvidia.com/gpu"]' ]
# Its own arguments, run here with its account's token against the kwok node, NVML being the
# fake library (8 H100s in two NVLink islands, GPU 5 in MIG mode, GPU 2 with an uncorrected ECC
# error, GPU 6 with Xid 79).
node=$(k get nodes -o jsonpath='{.items[0].metadata.name}')
mapfile -t inventory_args < <(jq -r '.containers[0].args[]' <<<"$inventory_pod" | sed \
  -e "s|^--name=.*|--name=$node|" -e 's|^--metrics-listen=.*|--metrics-listen=127.0.0.1:0|')
inventory_kubeconfig=$dir/strata-inventory.kubeconfig
service_account_kubeconfig "$kubeconfig" strata-system strata-inventory "$inventory_kubeconfig"
before=$(k get node "$node" -o json | jq -c '{spec, capacity: .status.capacity}')
"$strata" "${inventory_args[@]}" --kubeconfig "$inventory_kubeconfig" \
  --nvml-library "$STRATA_FAKE_NVML" --heartbeat-interval 1 >"$dir/inventory.log" 2>&1 &
inventory=$!
pids+=("$inventory")
node_label() { k get node "$node" -o jsonpath="{.metadata.labels.${1//./\\.}}"; }
labelled() { [ "$(node_label nvidia.com/gpu.count)" = 8 ]; }
check "the inventory agent, as its service account, labels its Node" wait_for 30 labelled
check "with GPU Feature Discovery's product and memory labels" \
  [ "$(node_label nvidia.com/gpu.product) $(node_label nvidia.com/gpu.memory)" = "NVIDIA-H100-80GB-HBM3 81559" ]
check "its NVLink islands and MIG mode" \
  [ "$(node_label strata.dev/nvlink-islands) $(node_label strata.dev/mig-enabled)" = "2 true" ]
check "and the GPUs NVML finds unhealthy (Xid 79, an uncorrected ECC error)" \
  [ "$(node_label strata.dev/unhealthy-gpus)" = 2 ]
annotation() { k get node "$node" -o json | jq -r ".metadata.annotations[\"$1\"]"; }
check "each GPU's health in an annotation" [ "$(annotation strata.dev/gpu-health | jq -c \
  '[.[] | select(.healthy == false) | .reason]')" = '["1 uncorrected ECC error","Xid 79"]' ]
check "and its GPUs with islands and MIG instances, as strata's store reads a node's" \
  [ "$(annotation strata.dev/gpus | jq -c '[length, .[4].nvlinkIsland, (.[5].migInstances | length)]')" = '[8,1,2]' ]
check "the kubelet's spec and capacity untouched" \
  [ "$(k get node "$node" -o json | jq -c '{spec, capacity: .status.capacity}')" = "$before" ]
inventory_metrics=$(grep -oE 'DCGM figures on http://[0-9.:]+/metrics' "$dir/inventory.log" | cut -d' ' -f4)
check "it serves the GPUs' figures under DCGM's names" \
  [ "$(curl -s "$inventory_metrics" | grep -c "^DCGM_FI_DEV_GPU_UTIL{.*Hostname=\"$node\"")" = 8 ]
inventory_sa=system:serviceaccount:strata-system:strata-inventory
inventory_can() { [[ $(k auth can-i --as="$inventory_sa" "$@" 2>/dev/null) == yes ]]; }
inventory_cannot() { ! inventory_can "$@"; }
check "its account may patch nodes" inventory_can patch nodes
check "(and not delete them)" inventory_cannot delete nodes
check "(nor read pods)" inventory_cannot list pods -A
check "(nor secrets)" inventory_cannot get secrets -A
kill "$inventory"
wait "$inventory" || true
indent <"$dir/inventory.log"
check "with no request refused" bash -c "! grep -qiE 'forbidden|HTTP 403' '$dir/inventory.log'"

# ---- --namespace ---------------------------------------------------------------------------------
other=$("$strata" kubernetes manifests --namespace strata-other)
check "--namespace moves the namespaced objects and the Lease" [ "$(grep -c 'namespace: strata-other' \
  <<<"$other")" -ge 5 ]
usage_error() { "$strata" "$@" >/dev/null 2>&1; [[ $? == 2 ]]; }
check "a bad --namespace is a usage error" usage_error kubernetes manifests --namespace Bad_Name

((failures == 0)) || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
