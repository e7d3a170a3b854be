# Kueue on a loopback cluster, for side-by-side quota runs. Sourced by cluster.sh.
#
# Kueue's webhooks (defaulting, validation, the pod/job mutators, CRD conversion) stay on:
# without them Kueue does not suspend jobs or gate pods. Kueue manages its own certificates
# (internalCertManagement): it signs a serving certificate for kueue-webhook-service.kueue-system.svc
# and injects the CA into its webhook configurations and CRDs. The API server reaches that Service
# here as an ExternalName for 127.0.0.1 on the manager's port: it dials the loopback address and
# verifies the certificate against the Service's DNS name. The visibility API server (an aggregated
# API that would listen on all addresses and keep certificates in /visibility) is turned off.
# shellcheck shell=bash

readonly KUEUE_NAMESPACE=kueue-system
readonly KUEUE_FRAMEWORKS=(batch/job pod deployment statefulset jobset.x-k8s.io/jobset
  kubeflow.org/pytorchjob trainer.kubeflow.org/trainjob leaderworkerset.x-k8s.io/leaderworkerset)

require_kueue() {
  require_binaries kueue
  [[ -f $KUBE_KUEUE_DIR/webhooks/manifests.yaml && -d $KUBE_KUEUE_DIR/crds ]] ||
    die "Kueue's manifests are not in $KUBE_KUEUE_DIR; run tools/kube/build.sh"
}

kueue_config() {
  local dir=$1 webhook_port=$2 health_port=$3 metrics_port=$4 f
  cat <<EOF
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: $KUEUE_NAMESPACE
health:
  healthProbeBindAddress: 127.0.0.1:$health_port
metrics:
  bindAddress: 127.0.0.1:$metrics_port
webhook:
  host: 127.0.0.1
  port: $webhook_port
  certDir: $dir/kueue/certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: kueue-webhook-service
  webhookSecretName: kueue-webhook-server-cert
clientConnection:
  qps: 500
  burst: 1000
featureGates:
  VisibilityOnDemand: false
integrations:
  frameworks:
EOF
  for f in "${KUEUE_FRAMEWORKS[@]}"; do echo "  - $f"; done
}

kueue_service_objects() {
  local webhook_port=$1
  cat <<EOF
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata:
    name: $KUEUE_NAMESPACE
- apiVersion: v1
  kind: Secret
  metadata:
    name: kueue-webhook-server-cert
    namespace: $KUEUE_NAMESPACE
- apiVersion: v1
  kind: Service
  metadata:
    name: kueue-webhook-service
    namespace: $KUEUE_NAMESPACE
  spec:
    type: ExternalName
    externalName: 127.0.0.1
    ports:
    - port: $webhook_port
      protocol: TCP
EOF
}

# Kueue's cert-controller keeps the serving certificate in a Secret and waits for it to appear in
# its certificate directory, where a kubelet would mount that Secret: this copies it there.
kueue_mount_certs() {
  local certs=$1 key data
  for key in tls.crt tls.key ca.crt; do
    data=$(kubectl_admin get secret kueue-webhook-server-cert --namespace "$KUEUE_NAMESPACE" \
      -o "jsonpath={.data.${key//./\\.}}") || return 1
    [[ -n $data ]] || return 1
    base64 -d <<<"$data" >"$certs/.$key" || return 1
  done
  for key in ca.crt tls.key tls.crt; do
    mv -f "$certs/.$key" "$certs/$key"
  done
}

# A server-side dry run passes through Kueue's mutating and validating webhooks.
kueue_webhooks_answer() {
  kubectl_admin create --dry-run=server -f - <<EOF
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: strata-webhook-probe
EOF
}

# start_kueue DIR WEBHOOK_PORT HEALTH_PORT METRICS_PORT SECONDS
start_kueue() {
  local dir=$1 webhook_port=$2 health_port=$3 metrics_port=$4 seconds=$5
  local deadline=$((SECONDS + seconds))
  mkdir -p "$dir/kueue/certs"
  kueue_service_objects "$webhook_port" | kubectl_admin create -f - >/dev/null
  python3 "$KUBE_TOOLS_DIR/lib/kueue_manifests.py" "$KUBE_KUEUE_DIR" "$webhook_port" \
    >"$dir/kueue/manifests.yaml"
  kubectl_admin create -f "$dir/kueue/manifests.yaml" >/dev/null
  kubectl_admin wait --for=condition=Established --timeout=$((deadline - SECONDS))s \
    crd --all >/dev/null
  kueue_config "$dir" "$webhook_port" "$health_port" "$metrics_port" >"$dir/kueue/config.yaml"
  start_process "$dir" kueue "$KUBE_BIN_DIR/kueue" \
    --config="$dir/kueue/config.yaml" --kubeconfig="$dir/kubeconfig"
  wait_until "$dir" kueue $((deadline - SECONDS)) "Kueue's serving certificate" \
    kueue_mount_certs "$dir/kueue/certs"
  wait_until "$dir" kueue $((deadline - SECONDS)) "Kueue's /readyz" \
    curl -fsS --max-time 2 "http://127.0.0.1:$health_port/readyz"
  wait_until "$dir" kueue $((deadline - SECONDS)) "Kueue's webhooks answering" \
    kueue_webhooks_answer
}
