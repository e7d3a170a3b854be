#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Stock kubectl (v1.37, built by tools/kube/build.sh) and the official Kubernetes Python client
# (Debian's python3-kubernetes) against a real `strata up` on a simulated cluster (3 nodes x 8
# GPUs), each verb checked as a user would check it:
#  - apply (client-side): created with the last-applied annotation, configured when the file
#    changes (a label the file drops is removed, one `kubectl label` added is kept), unchanged
#    when it does not;
#  - label and annotate, on a strata Job and on a Node;
#  - patch of each type: merge and JSON on a Job, strategic on a Node and a Pod (env merged by
#    name); a strategic patch of a Job refused (merge is for strata's kinds, as for custom
#    resources); a stale resourceVersion is a conflict; a patch whose result is not valid is
#    refused naming the field, and changes nothing;
#  - edit, with KUBE_EDITOR a script, of a Job and of a Node;
#  - scale, which strata has no subresource for, fails saying why;
#  - delete --all; wait --for=condition (a Node's Ready, a Job's Running) and --for=jsonpath;
#  - describe node, with the node's pods (a fieldSelector on spec.nodeName and status.phase);
#  - cordon and uncordon (spec.unschedulable), and drain: it refuses a standalone pod (no
#    controller reference) without --force, as for any pod; a Job's pods name their Job as
#    controller (ownerReferences), so each is evicted (pods/eviction), the Job's whole gang
#    requeued and placed again off the drained node;
#  - namespaces: made by the first object written into them, applied, and deleted with what is
#    in them; `kubectl create namespace` (protobuf) and `kubectl run`;
#  - explain, from the OpenAPI documents generated from strata's field tables;
#  - the Python client's strategic merge patch (typed and dynamic) and merge patch, its 409 on a
#    stale resourceVersion and its 400 naming the field.
# Skips (exit 77) only when kubectl or python3-kubernetes is not there.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=strata_for_kubectl.sh
source "$repo/tests/kubectl/strata_for_kubectl.sh"
start_strata_for_kubectl kubectl_verbs_test 3x8:H100-80GB

# fails_saying TEXT COMMAND...: COMMAND fails and its output contains TEXT.

job_manifest() { # NAME PRIORITY LABELS COMMAND
  cat <<YAML
apiVersion: strata.dev/v1alpha1
kind: Job
metadata:
  name: $1
  namespace: team-a
  labels: {$3}
spec:
  replicas: 1
  priority: $2
  resources: {gpu: "8"}
  template: {command: [sh, -c, "$4"]}
YAML
}

# ---- apply ---------------------------------------------------------------------------------------
job_manifest train 1 "team: a, stage: dev" "sleep 600" >"$dir/train.yaml"
check "apply creates the Job" \
  equals "$(k apply -f "$dir/train.yaml")" "job.strata.dev/train created"
last_applied() { jp sjob train -n team-a \
  '{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}'; }
check "with the last-applied annotation" grep -q '"priority":1' <<<"$(last_applied)"
check "label adds a label" equals "$(k label sjob train -n team-a owner=ml)" \
  "job.strata.dev/train labeled"
job_manifest train 2 "team: a" "sleep 600" >"$dir/train.yaml"
check "apply of a changed file configures it" \
  equals "$(k apply -f "$dir/train.yaml")" "job.strata.dev/train configured"
check "the spec changed" equals "$(jp sjob train -n team-a '{.spec.priority}')" 2
check "the label the file dropped is gone, the one kubectl label added is kept" \
  equals "$(jp sjob train -n team-a '{.metadata.labels}')" '{"owner":"ml","team":"a"}'
check "apply of the same file changes nothing" \
  equals "$(k apply -f "$dir/train.yaml")" "job.strata.dev/train unchanged"

# ---- label, annotate -----------------------------------------------------------------------------
check "annotate" equals "$(k annotate sjob train -n team-a note=hello)" \
  "job.strata.dev/train annotated"
check "the annotation is there" equals "$(jp sjob train -n team-a '{.metadata.annotations.note}')" \
  hello
check "label a node" equals "$(k label node sim-node-2 zone=z1)" "node/sim-node-2 labeled"
check "unlabel a node" equals "$(k label node sim-node-2 zone-)" "node/sim-node-2 unlabeled"
check "the node's label is gone" equals "$(jp node sim-node-2 '{.metadata.labels.zone}')" ""

# ---- patch ---------------------------------------------------------------------------------------
check "patch --type merge" equals \
  "$(k patch sjob train -n team-a --type merge -p '{"spec": {"maxRestarts": 3}}')" \
  "job.strata.dev/train patched"
check "patch --type json" equals \
  "$(k patch sjob train -n team-a --type json \
    -p '[{"op": "test", "path": "/spec/maxRestarts", "value": 3},
         {"op": "replace", "path": "/spec/maxRestarts", "value": 4}]')" \
  "job.strata.dev/train patched"
check "both patches are stored" equals "$(jp sjob train -n team-a '{.spec.maxRestarts}')" 4
check "a JSON patch whose test fails names the operation" fails_saying \
  'operation 0 (test "/spec/maxRestarts")' \
  k patch sjob train -n team-a --type json -p '[{"op": "test", "path": "/spec/maxRestarts", "value": 9}]'
check "patch (strategic) of a node" equals \
  "$(k patch node sim-node-2 -p '{"metadata": {"labels": {"pool": "a"}}}')" "node/sim-node-2 patched"
check "the node's label is there" equals "$(jp node sim-node-2 '{.metadata.labels.pool}')" a
check "a strategic patch of a Job is refused, saying what to use" fails_saying \
  "strategic merge patch is not supported for Job" \
  k patch sjob train -n team-a -p '{"spec": {"priority": 3}}'
version=$(jp sjob train -n team-a '{.metadata.resourceVersion}')
k patch sjob train -n team-a --type merge -p '{"spec": {"priority": 5}}' >/dev/null
check "a patch with a stale resourceVersion is a conflict" fails_saying "(Conflict)" \
  k patch sjob train -n team-a --type merge \
  -p "{\"metadata\": {\"resourceVersion\": \"$version\"}, \"spec\": {\"priority\": 6}}"
check "so is a label with a stale --resource-version" fails_saying "(Conflict)" \
  k label sjob train -n team-a extra=1 --resource-version "$version"
check "an invalid patch is refused naming the field" fails_saying "spec.replicas" \
  k patch sjob train -n team-a --type merge -p '{"spec": {"replicas": "three"}}'
check "and changed nothing" equals "$(jp sjob train -n team-a '{.spec.priority}/{.spec.replicas}')" \
  5/1

# ---- edit ----------------------------------------------------------------------------------------
cat >"$dir/editor.sh" <<'SH'
#!/bin/sh
# What a user does in the editor: one field changed, one label added.
sed -i -e 's/^  priority: 5$/  priority: 7/' -e 's/^  labels:$/  labels:\n    edited: "yes"/' "$1"
SH
chmod +x "$dir/editor.sh"
check "edit a Job" equals "$(KUBE_EDITOR=$dir/editor.sh k edit sjob train -n team-a)" \
  "job.strata.dev/train edited"
check "the edit is stored" equals \
  "$(jp sjob train -n team-a '{.spec.priority}/{.metadata.labels.edited}')" 7/yes
check "edit a Node" equals "$(KUBE_EDITOR=$dir/editor.sh k edit node sim-node-2)" \
  "node/sim-node-2 edited"
check "the node's edit is stored" equals "$(jp node sim-node-2 '{.metadata.labels.edited}')" yes

# ---- scale, wait ---------------------------------------------------------------------------------
check "scale says strata has no scale subresource, and why" fails_saying \
  "jobs have no scale subresource in strata: a Job's spec.replicas is the size of its gang" \
  k scale sjob train -n team-a --replicas 2
check "wait for a node's Ready condition" \
  k wait --for=condition=Ready node/sim-node-0 --timeout=30s
check "wait for the Job's Running condition" \
  k wait --for=condition=Running sjob/train -n team-a --timeout=60s
check "wait for a jsonpath" \
  k wait --for=jsonpath='{.status.phase}'=Running pod/train-worker-0 -n team-a --timeout=60s

# ---- get: the server's tables, as kubectl prints them ---------------------------------------------
header() { k get "$@" | head -1 | tr -s ' '; }
row() { k get "$@" --no-headers | tr -s ' '; }
# matches REGEX TEXT: a line of TEXT matches REGEX.
matches() { grep -q "$1" <<<"$2" || { echo "  no line matches '$1' in: $2"; return 1; }; }
check "get nodes shows each node's GPUs" equals "$(header nodes)" "NAME STATUS GPUS RACK AGE"
check "with their readiness and models" matches "^sim-node-0 Ready 8x H100-80GB " \
  "$(row nodes)"
check "get pods shows phase, restarts, node and GPUs" equals "$(header pods -n team-a)" \
  "NAME PHASE RESTARTS NODE GPUS AGE"
check "the worker's row" matches "^train-worker-0 Running 0 sim-node-[0-9] 0-7 " \
  "$(row pods -n team-a)"
check "get jobs shows readiness, GPUs and queue (none named)" matches "^train Running 1/1 0 1x8 - " \
  "$(row sjob -n team-a)"
check "-A puts the namespace first" matches "^team-a train-worker-0 Running " \
  "$(row pods -A)"
check "--sort-by reads the objects the rows carry" equals \
  "$(k get nodes --sort-by=.metadata.name -o name | head -1)" "node/sim-node-0"
check "-o wide and --show-kind" matches "^pod/train-worker-0 " \
  "$(k get pods -n team-a -o wide --show-kind --no-headers)"
# get -w: the current rows, then a row per change (a label here), until kubectl is stopped.
timeout 20 "$KUBE_BIN_DIR/kubectl" --kubeconfig "$dir/kubeconfig" --cache-dir "$dir/kube-cache" \
  get pods -n team-a -w --no-headers >"$dir/watch.out" 2>&1 &
watcher=$!
watched() { grep -q "^train-worker-0 " "$dir/watch.out"; }
wait_for 10 watched
k label pod train-worker-0 -n team-a watched=yes >/dev/null
relabelled() { (($(grep -c "^train-worker-0 " "$dir/watch.out") >= 2)); }
check "get -w prints the pod's row, then again when it changes" wait_for 10 relabelled
kill "$watcher" 2>/dev/null || true

# ---- pods as Kubernetes' v1 Pods, delete --all ------------------------------------------------------
cat >"$dir/probe.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: team-b}
spec:
  containers:
    - name: main
      image: busybox
      command: [sleep, "600"]
      env: [{name: A, value: "1"}]
YAML
k apply -f "$dir/probe.yaml" >/dev/null
check "a pod reads as Kubernetes' v1 Pod" equals \
  "$(jp pod probe -n team-b '{.spec.containers[0].name} {.spec.containers[0].env[*].name}')" "main A"
check "wait for the pod to run" \
  k wait --for=jsonpath='{.status.phase}'=Running pod/probe -n team-b --timeout=60s
check "with its container's state" matches "running" \
  "$(jp pod probe -n team-b '{.status.containerStatuses[0].state}')"
check "describe pod shows its container" matches "^    Command:" "$(k describe pod probe -n team-b)"
check "patch a pod's labels (strategic)" equals \
  "$(k patch pod probe -n team-b -p '{"metadata": {"labels": {"tier": "gold"}}}')" \
  "pod/probe patched"
check "the label is stored" equals "$(jp pod probe -n team-b '{.metadata.labels.tier}')" gold
check "a patch of a pod's spec is refused, naming the field" fails_saying \
  "spec.containers[0].env[1]: a pod's spec does not change once it is created" \
  k patch pod probe -n team-b -p '{"spec": {"containers": [{"name": "main", "env": [{"name": "B", "value": "2"}]}]}}'
check "applying the same v1 Pod file again" matches "^pod/probe \\(unchanged\\|configured\\)" \
  "$(k apply -f "$dir/probe.yaml")"
for name in one two; do job_manifest "$name" 1 "" "sleep 600" | sed 's/team-a/team-b/' |
  k apply -f - >/dev/null; done
deleted() { echo "job.strata.dev \"$1\" deleted from team-b namespace"; }
check "delete --all" equals "$(k delete sjob --all -n team-b | sort)" "$(deleted one; deleted two)"
check "nothing left" equals "$(k get sjob -n team-b -o name)" ""

# ---- the Python client ---------------------------------------------------------------------------
check "the Python client's patches" "$python" "$repo/tests/kubectl/python_patch_check.py" \
  "$STRATA_API" "$STRATA_ADMIN_TOKEN"

# ---- describe ------------------------------------------------------------------------------------
train_node=$(jp pod train-worker-0 -n team-a '{.spec.nodeName}')
check "describe node lists the node's pods" \
  grep -q "team-a .*train-worker-0" <<<"$(k describe node "$train_node" 2>&1)"

# ---- cordon, uncordon, drain ---------------------------------------------------------------------
check "cordon" equals "$(k cordon sim-node-1)" "node/sim-node-1 cordoned"
check "the node is unschedulable" equals "$(jp node sim-node-1 '{.spec.unschedulable}')" true
check "uncordon" equals "$(k uncordon sim-node-1)" "node/sim-node-1 uncordoned"
check "the node is schedulable again" equals "$(jp node sim-node-1 '{.spec.unschedulable}')" ""

probe_node=$(jp pod probe -n team-b '{.spec.nodeName}')
check "drain refuses a node with a pod that names no controller, as for any pod" fails_saying \
  "cannot delete Pods that declare no controller" k drain "$probe_node" --timeout=60s
k uncordon "$probe_node" >/dev/null
k delete pod probe -n team-b --timeout=60s >/dev/null
check "a Job's pod names its Job as its controller" equals "$(jp pod train-worker-0 -n team-a \
  '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}')" \
  "Job/train/true"
node=$(jp pod train-worker-0 -n team-a '{.spec.nodeName}')
uid=$(jp pod train-worker-0 -n team-a '{.metadata.uid}')
check "drain evicts the node's pods, without --force since each names its controller" \
  grep -q "node/$node drained" <<<"$(k drain "$node" --timeout=90s 2>&1)"
check "the node stays cordoned" equals "$(jp node "$node" '{.spec.unschedulable}')" true
moved() {
  [[ $(jp pod train-worker-0 -n team-a '{.metadata.uid}') != "$uid" ]] &&
    [[ $(jp pod train-worker-0 -n team-a '{.spec.nodeName}') != "$node" ]] &&
    [[ $(jp pod train-worker-0 -n team-a '{.status.phase}') == Running ]]
}
check "the Job's pod runs again on another node" wait_for 60 moved
check "counting neither a restart nor a preemption" equals \
  "$(jp sjob train -n team-a '{.status.restartCount}/{.status.preemptionCount}')" /
k uncordon "$node" >/dev/null

# ---- namespaces ----------------------------------------------------------------------------------
check "get namespaces lists the namespaces objects were written into" \
  grep -q "^team-a *Active" <<<"$(k get namespaces)"
check "apply a Namespace" equals \
  "$(printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: team-c}\n' | k apply -f -)" \
  "namespace/team-c created"
# kubectl's create verbs send built-in kinds as protobuf: strata reads a Namespace (ConfigMaps
# and Secrets: config_secrets_test; other kinds get a 415 that says so: protobuf_body_test).
check "create namespace (protobuf)" equals "$(k create namespace team-d)" "namespace/team-d created"
check "kubectl run" equals "$(k run lone --image=busybox -n team-d --command -- sleep 600)" \
  "pod/lone created"
job_manifest gone 1 "" "sleep 600" | sed 's/team-a/team-c/' | k apply -f - >/dev/null
check "delete namespace" equals "$(k delete namespace team-c)" 'namespace "team-c" deleted'
check "deletes what is in it" equals "$(k get sjob -n team-c -o name)" ""
check "and nothing else" grep -q "^train " <<<"$(k get sjob -n team-a)"

# ---- explain -------------------------------------------------------------------------------------
check "explain reads strata's field descriptions" \
  grep -q "Pods (nodes)" <<<"$(k explain sjob.spec.replicas 2>&1)"

((failures == 0)) || { echo "$failures check(s) failed"; tail -20 "$dir/up.log"; exit 1; }
echo "all checks passed"
