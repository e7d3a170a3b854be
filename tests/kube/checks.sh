# What the shell tests of tests/kube share: the skip when the Kubernetes binaries are not built,
# and their check and wait helpers. Sourced after tools/kube/cache_paths.sh.
# shellcheck shell=bash

# require_kube_binaries NAME...: exit 77 (skipped) unless tools/kube/build.sh built them all.
require_kube_binaries() {
  local binary
  for binary in "$@"; do
    if [[ ! -x $KUBE_BIN_DIR/$binary ]]; then
      echo "SKIP: $KUBE_BIN_DIR/$binary is not built; run make deps (or tools/kube/build.sh)"
      exit 77
    fi
  done
}

# check WHAT COMMAND...: prints ok or FAILED; failures counts the FAILED ones.
failures=0
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
  else
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}

# wait_for SECONDS COMMAND...: COMMAND succeeds within SECONDS (polled every 0.5 s).
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# service_account_kubeconfig KUBECONFIG NAMESPACE NAME FILE: writes FILE, a kubeconfig for the
# cluster of KUBECONFIG (its CA embedded) with a token of the ServiceAccount NAMESPACE/NAME, as a
# component installed by `strata kubernetes manifests` runs.
service_account_kubeconfig() {
  local admin=$1 namespace=$2 name=$3 file=$4 server ca token
  local kubectl=("$KUBE_BIN_DIR/kubectl" --kubeconfig "$admin")
  server=$("${kubectl[@]}" config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$("${kubectl[@]}" config view --minify --raw \
    -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  token=$("${kubectl[@]}" create token "$name" -n "$namespace" --duration 2h)
  (
    umask 077
    cat >"$file" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: cluster, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: $name, user: {token: "$token"}}]
contexts: [{name: $name, context: {cluster: cluster, user: $name}}]
current-context: $name
YAML
  )
}

# The tests' kubectl is their own k(); these use it.

# node_ready NAME: the v1 Node NAME's Ready condition is True.
node_ready() {
  [ "$(k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# apply_shell_job NAMESPACE NAME REPLICAS GPUS SCRIPT: a strata Job of REPLICAS pods of GPUS
# GPUs each, whose process is `sh -c SCRIPT`.
apply_shell_job() {
  k apply -f - >/dev/null <<YAML
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: $2, namespace: $1}
spec:
  replicas: $3
  resources: {gpu: $4}
  template:
    command: [sh, -c, "$5"]
YAML
}

# stop_gracefully PID: SIGTERM, up to 30 s for the process to go, then SIGKILL.
stop_gracefully() {
  kill -TERM "$1" 2>/dev/null || true
  for _ in {1..60}; do kill -0 "$1" 2>/dev/null || return 0; sleep 0.5; done
  kill -9 "$1" 2>/dev/null || true
}

# install_strata FILE: `strata kubernetes manifests --compat-crds` ($strata) applied with k, its CRDs
# established, and FILE a kubeconfig (of the cluster at $kubeconfig) for the ServiceAccount the
# manifests make for strata up --store kubernetes, whose RBAC is then all it has.
install_strata() {
  "$strata" kubernetes manifests --image registry.example/strata:test --compat-crds |
    k apply -f - >/dev/null
  k wait --for condition=established --timeout=60s crd/jobs.strata.dev \
    crd/pytorchjobs.kubeflow.org >/dev/null
  service_account_kubeconfig "$kubeconfig" strata-system strata-control-plane "$1"
}
