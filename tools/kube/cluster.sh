#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# A real Kubernetes control plane on loopback for strata's tests and benchmarks: etcd,
# kube-apiserver (TLS, RBAC), kube-controller-manager and kwok's simulated GPU nodes, optionally
# kube-scheduler and Kueue. The binaries come from tools/kube/build.sh. Everything listens on
# 127.0.0.1 on free ports; state, certificates and logs stay in DIR.
#
# Usage:
#   cluster.sh up DIR [options]    start; prints the admin kubeconfig's path on its last line
#   cluster.sh down DIR            stop everything `up` started in DIR (idempotent)
#   cluster.sh status DIR          which of DIR's processes run
#   cluster.sh start-kube-scheduler DIR [--qps Q] [--burst B]
#                                  start kube-scheduler on DIR's running cluster (benchmarks
#                                  start it once their pods exist); its API client's limits
#                                  default to 500 / 1000
#   cluster.sh install-kueue-quota-crds DIR
#                                  create Kueue's quota CRDs (ClusterQueue, LocalQueue,
#                                  ResourceFlavor, WorkloadPriorityClass) without its controller,
#                                  for strata to enforce, and wait until they are served
# Options of `up`:
#   --nodes N                 kwok nodes kwok-node-0..N-1 (default 3)
#   --gpus-per-node G         nvidia.com/gpu capacity and allocatable of each node (default 8)
#   --nodes-per-rack R        nodes per topology.strata.dev/rack (default 4)
#   --racks-per-block B       racks per topology.strata.dev/block (default 2)
#   --gpu-product NAME        nvidia.com/gpu.product (default NVIDIA-H100-80GB-HBM3)
#   --gpu-memory-mib M        nvidia.com/gpu.memory (default 81559)
#   --with-kube-scheduler     run the real kube-scheduler (schedulerName default-scheduler)
#   --with-kueue              install Kueue's CRDs and webhooks and run its manager
#   --feature-gates LIST      passed to kube-apiserver, kube-controller-manager, kube-scheduler
#   --runtime-config LIST     passed to kube-apiserver (e.g. resource.k8s.io/v1beta2=true)
#   --timeout SECONDS         how long `up` may take (default 120)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cache_paths.sh"
# shellcheck source=lib/processes.sh
source "$KUBE_TOOLS_DIR/lib/processes.sh"
# shellcheck source=lib/pki.sh
source "$KUBE_TOOLS_DIR/lib/pki.sh"
# shellcheck source=lib/nodes.sh
source "$KUBE_TOOLS_DIR/lib/nodes.sh"
# shellcheck source=lib/kueue.sh
source "$KUBE_TOOLS_DIR/lib/kueue.sh"

readonly SERVICE_CIDR=10.96.0.0/16
readonly SERVICE_IP=10.96.0.1
readonly POD_CIDR=10.244.0.1/16
readonly MARKER=.strata-kube-cluster
# Stopped in this order: clients before the API server, the API server before etcd.
readonly PROCESSES=(kueue kwok kube-scheduler kube-controller-manager kube-apiserver etcd)

usage() {
  awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2
  exit 2
}

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

# ---- down / status ---------------------------------------------------------------------------

cmd_down() {
  local dir=$1 name
  [[ -d $dir ]] || return 0
  for name in "${PROCESSES[@]}"; do
    stop_process "$dir" "$name"
  done
}

cmd_status() {
  local dir=$1 name any=1
  for name in "${PROCESSES[@]}"; do
    if process_alive "$dir" "$name"; then
      echo "$name running (pid $(cat "$dir/pids/$name.pid"))"
      any=0
    fi
  done
  return $any
}

# ---- up ----------------------------------------------------------------------------------------

# prepare_dir DIR: an empty DIR, or one a stopped cluster left (its state is wiped).
prepare_dir() {
  local dir=$1 name
  mkdir -p "$dir"
  for name in "${PROCESSES[@]}"; do
    if process_alive "$dir" "$name"; then
      die "$dir has a running cluster ($name); run: $0 down $dir"
    fi
  done
  if [[ ! -f $dir/$MARKER ]] && [[ -n $(ls -A "$dir") ]]; then
    die "$dir is not empty and holds no cluster; give an empty or new directory"
  fi
  rm -rf "${dir:?}"/{etcd,pki,logs,pids,kueue,kubeconfig,cluster.env,kwok.yaml,scheduler.yaml}
  touch "$dir/$MARKER"
}

require_binaries() {
  local name
  for name in "$@"; do
    [[ -x $KUBE_BIN_DIR/$name ]] ||
      die "$KUBE_BIN_DIR/$name is not built; run tools/kube/build.sh (or make deps)"
  done
}

start_etcd() {
  local dir=$1 client=$2 peer=$3
  # --unsafe-no-fsync: the data dies with the test; fsync would only slow the API server down.
  start_process "$dir" etcd "$KUBE_BIN_DIR/etcd" \
    --name=node0 --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$client" --advertise-client-urls="http://127.0.0.1:$client" \
    --listen-peer-urls="http://127.0.0.1:$peer" --initial-advertise-peer-urls="http://127.0.0.1:$peer" \
    --initial-cluster="node0=http://127.0.0.1:$peer" \
    --listen-metrics-urls="" --unsafe-no-fsync --quota-backend-bytes=8589934592 \
    --auto-compaction-retention=1 --log-level=warn
}

start_apiserver() {
  local dir=$1 port=$2 etcd_port=$3 pki=$1/pki
  # shellcheck disable=SC2054 # the commas are inside flag values
  local args=(
    --bind-address=127.0.0.1 --secure-port="$port" --advertise-address=127.0.0.1
    # The "kubernetes" Service's endpoints cannot be a loopback address; nothing in a kwok
    # cluster dials it, so the API server does not publish them.
    --endpoint-reconciler-type=none
    --etcd-servers="http://127.0.0.1:$etcd_port"
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key"
    --client-ca-file="$pki/ca.crt"
    # How it reaches kubelets (kubectl logs): strata's node agents check this certificate.
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt"
    --kubelet-client-key="$pki/apiserver-kubelet-client.key"
    --requestheader-client-ca-file="$pki/front-proxy-ca.crt"
    --requestheader-allowed-names=front-proxy-client
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group
    --requestheader-extra-headers-prefix=X-Remote-Extra-
    --proxy-client-cert-file="$pki/front-proxy-client.crt"
    --proxy-client-key-file="$pki/front-proxy-client.key"
    --service-account-issuer=https://kubernetes.default.svc.cluster.local
    --service-account-key-file="$pki/service-account.pub"
    --service-account-signing-key-file="$pki/service-account.key"
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction
    --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=true
  )
  [[ -z $FEATURE_GATES ]] || args+=(--feature-gates="$FEATURE_GATES")
  [[ -z $RUNTIME_CONFIG ]] || args+=(--runtime-config="$RUNTIME_CONFIG")
  start_process "$dir" kube-apiserver "$KUBE_BIN_DIR/kube-apiserver" "${args[@]}"
}

# COMPONENT_ARGS: what kube-controller-manager and kube-scheduler share: their identity for the
# delegated authentication of their /healthz and /metrics server, which serves loopback only.
component_args() {
  local kubeconfig=$1 port=$2 pki=$3
  COMPONENT_ARGS=(
    --authentication-kubeconfig="$kubeconfig" --authorization-kubeconfig="$kubeconfig"
    --bind-address=127.0.0.1 --secure-port="$port"
    --tls-cert-file="$pki/loopback-serving.crt" --tls-private-key-file="$pki/loopback-serving.key"
  )
  [[ -z $FEATURE_GATES ]] || COMPONENT_ARGS+=(--feature-gates="$FEATURE_GATES")
}

start_controller_manager() {
  local dir=$1 port=$2 pki=$1/pki
  component_args "$pki/controller-manager.kubeconfig" "$port" "$pki"
  # Each controller acts as its own service account (as kubeadm runs it), signed with the
  # key whose public half the API server verifies; every controller runs, the garbage
  # collector included.
  start_process "$dir" kube-controller-manager "$KUBE_BIN_DIR/kube-controller-manager" \
    --kubeconfig="$pki/controller-manager.kubeconfig" "${COMPONENT_ARGS[@]}" \
    --leader-elect=false --controllers='*' --use-service-account-credentials=true \
    --service-account-private-key-file="$pki/service-account.key" --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --kube-api-qps=500 --kube-api-burst=1000
}

# start_scheduler DIR PORT [QPS BURST]
start_scheduler() {
  local dir=$1 port=$2 pki=$1/pki qps=${3:-500} burst=${4:-1000}
  cat >"$dir/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $pki/scheduler.kubeconfig
  qps: $qps
  burst: $burst
leaderElection:
  leaderElect: false
EOF
  component_args "$pki/scheduler.kubeconfig" "$port" "$pki"
  start_process "$dir" kube-scheduler "$KUBE_BIN_DIR/kube-scheduler" \
    --config="$dir/scheduler.yaml" "${COMPONENT_ARGS[@]}"
}

# kwok, with its own node and pod lifecycle stages (from its module, see build.sh) as its
# configuration: nodes turn Ready, hold a lease, and pods bound to them run.
start_kwok() {
  local dir=$1 port=$2 pki=$1/pki f
  : >"$dir/kwok.yaml"
  for f in "$KUBE_KWOK_STAGE_DIR"/*.yaml; do
    { cat "$f"; echo "---"; } >>"$dir/kwok.yaml"
  done
  start_process "$dir" kwok "$KUBE_BIN_DIR/kwok" \
    --kubeconfig="$dir/kubeconfig" --config="$dir/kwok.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip=127.0.0.1 --node-name=kwok-controller --node-port="$port" \
    --server-address="127.0.0.1:$port" \
    --tls-cert-file="$pki/loopback-serving.crt" --tls-private-key-file="$pki/loopback-serving.key" \
    --cidr="$POD_CIDR" --node-lease-duration-seconds=40
}

kubectl_admin() {
  "$KUBE_BIN_DIR/kubectl" --kubeconfig="$CLUSTER_DIR/kubeconfig" "$@"
}

nodes_ready() {
  local want=$1 ready
  ready=$(kubectl_admin get nodes -l type=kwok \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c '^True$') || true
  [[ $ready == "$want" ]]
}

stop_after_failed_up() {
  if (($1 != 0)); then
    echo "cluster.sh: up failed; stopping what started (logs in $CLUSTER_DIR/logs)" >&2
    cmd_down "$CLUSTER_DIR"
  fi
}

cmd_up() {
  local dir=$1
  shift
  local nodes=3 gpus=8 per_rack=4 per_block=2 with_scheduler=0 with_kueue=0 timeout=120
  FEATURE_GATES="" RUNTIME_CONFIG=""
  while (($#)); do
    case $1 in
      --nodes) nodes=$2; shift 2 ;;
      --gpus-per-node) gpus=$2; shift 2 ;;
      --nodes-per-rack) per_rack=$2; shift 2 ;;
      --racks-per-block) per_block=$2; shift 2 ;;
      --gpu-product) export NODE_GPU_PRODUCT=$2; shift 2 ;;
      --gpu-memory-mib) export NODE_GPU_MEMORY_MIB=$2; shift 2 ;;
      --with-kube-scheduler) with_scheduler=1; shift ;;
      --with-kueue) with_kueue=1; shift ;;
      --feature-gates) FEATURE_GATES=$2; shift 2 ;;
      --runtime-config) RUNTIME_CONFIG=$2; shift 2 ;;
      --timeout) timeout=$2; shift 2 ;;
      *) echo "cluster.sh: unknown option $1" >&2; usage ;;
    esac
  done
  local n
  for n in "$nodes" "$gpus" "$per_rack" "$per_block" "$timeout"; do
    [[ $n =~ ^[0-9]+$ ]] || die "expected a number, got '$n'"
  done
  ((per_rack > 0 && per_block > 0)) || die "--nodes-per-rack and --racks-per-block must be > 0"

  require_binaries etcd kube-apiserver kube-controller-manager kubectl kwok
  if ((with_scheduler)); then require_binaries kube-scheduler; fi
  if ((with_kueue)); then require_kueue; fi
  prepare_dir "$dir"
  dir=$(cd "$dir" && pwd)
  CLUSTER_DIR=$dir
  local started=$SECONDS deadline=$((SECONDS + timeout))
  # Any failure from here on, however deep (set -e), stops what was started.
  trap 'stop_after_failed_up $?' EXIT

  local etcd_port etcd_peer api_port kcm_port sched_port kwok_port kueue_webhook kueue_health kueue_metrics
  read -r etcd_port etcd_peer api_port kcm_port sched_port kwok_port kueue_webhook kueue_health \
    kueue_metrics < <(free_ports 9)
  local server=https://127.0.0.1:$api_port pki=$dir/pki

  pki_make "$pki" "$SERVICE_IP"
  write_kubeconfig "$dir/kubeconfig" "$server" "$pki" admin
  write_kubeconfig "$pki/controller-manager.kubeconfig" "$server" "$pki" controller-manager
  write_kubeconfig "$pki/scheduler.kubeconfig" "$server" "$pki" scheduler

  start_etcd "$dir" "$etcd_port" "$etcd_peer"
  wait_until "$dir" etcd $((deadline - SECONDS)) "etcd health" \
    curl -fsS --max-time 2 "http://127.0.0.1:$etcd_port/health"
  start_apiserver "$dir" "$api_port" "$etcd_port"
  wait_until "$dir" kube-apiserver $((deadline - SECONDS)) "kube-apiserver /readyz" \
    curl -fsS --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "$server/readyz"

  start_controller_manager "$dir" "$kcm_port"
  start_kwok "$dir" "$kwok_port"
  if ((with_scheduler)); then start_scheduler "$dir" "$sched_port"; fi
  if ((nodes > 0)); then
    nodes_manifest "$nodes" "$gpus" "$per_rack" "$per_block" | kubectl_admin create -f - >/dev/null
  fi
  wait_until "$dir" kwok $((deadline - SECONDS)) "$nodes kwok nodes Ready" nodes_ready "$nodes"
  wait_until "$dir" kube-controller-manager $((deadline - SECONDS)) "kube-controller-manager /healthz" \
    https_ok "https://127.0.0.1:$kcm_port/healthz" "$pki/ca.crt"
  # Pods can be created once the service-account controller made the namespace's account.
  wait_until "$dir" kube-controller-manager $((deadline - SECONDS)) "the default ServiceAccount" \
    kubectl_admin get serviceaccount default --namespace default
  if ((with_scheduler)); then
    wait_until "$dir" kube-scheduler $((deadline - SECONDS)) "kube-scheduler /healthz" \
      https_ok "https://127.0.0.1:$sched_port/healthz" "$pki/ca.crt"
  fi
  if ((with_kueue)); then
    start_kueue "$dir" "$kueue_webhook" "$kueue_health" "$kueue_metrics" $((deadline - SECONDS))
  fi
  trap - EXIT

  cat >"$dir/cluster.env" <<EOF
# Written by tools/kube/cluster.sh up; source it for the cluster's addresses.
KUBECONFIG=$dir/kubeconfig
KUBECTL=$KUBE_BIN_DIR/kubectl
KUBE_APISERVER=$server
KUBE_ETCD=http://127.0.0.1:$etcd_port
KUBE_NODES=$nodes
KUBE_GPUS_PER_NODE=$gpus
KUBE_WITH_SCHEDULER=$with_scheduler
KUBE_WITH_KUEUE=$with_kueue
KUBE_FEATURE_GATES=$FEATURE_GATES
EOF
  echo "cluster.sh: up in $((SECONDS - started)) s: $nodes nodes x $gpus GPUs, API server $server," \
    "logs in $dir/logs" >&2
  echo "$dir/kubeconfig"
}

cmd_start_kube_scheduler() {
  local dir=$1 qps=500 burst=1000
  shift
  while (($#)); do
    case $1 in
      --qps) qps=$2; shift 2 ;;
      --burst) burst=$2; shift 2 ;;
      *) echo "cluster.sh: unknown option $1" >&2; usage ;;
    esac
  done
  [[ $qps =~ ^[0-9]+$ && $burst =~ ^[0-9]+$ ]] || die "--qps and --burst take whole numbers"
  require_binaries kube-scheduler
  dir=$(cd "$dir" && pwd)
  CLUSTER_DIR=$dir
  process_alive "$dir" kube-apiserver || die "no cluster runs in $dir"
  FEATURE_GATES=$(sed -n 's/^KUBE_FEATURE_GATES=//p' "$dir/cluster.env")
  ! process_alive "$dir" kube-scheduler || die "kube-scheduler already runs in $dir"
  local port
  port=$(free_ports 1)
  start_scheduler "$dir" "$port" "$qps" "$burst"
  wait_until "$dir" kube-scheduler 60 "kube-scheduler /healthz" \
    https_ok "https://127.0.0.1:$port/healthz" "$dir/pki/ca.crt"
}

cmd_install_kueue_quota_crds() {
  local dir=$1 kind crds=()
  [[ -d $KUBE_KUEUE_DIR/crds ]] || die "Kueue's CRDs are not in $KUBE_KUEUE_DIR; run tools/kube/build.sh"
  dir=$(cd "$dir" && pwd)
  CLUSTER_DIR=$dir
  process_alive "$dir" kube-apiserver || die "no cluster runs in $dir"
  for kind in clusterqueues localqueues resourceflavors workloadpriorityclasses; do
    kubectl_admin create -f "$KUBE_KUEUE_DIR/crds/kueue.x-k8s.io_$kind.yaml" >/dev/null
    crds+=("crd/$kind.kueue.x-k8s.io")
  done
  kubectl_admin wait --for=condition=Established --timeout=60s "${crds[@]}" >/dev/null
}

main() {
  (($# >= 2)) || usage
  local verb=$1 dir=$2
  shift 2
  case $verb in
    up) cmd_up "$dir" "$@" ;;
    down) (($# == 0)) || usage; cmd_down "$dir" ;;
    status) (($# == 0)) || usage; cmd_status "$dir" ;;
    start-kube-scheduler) cmd_start_kube_scheduler "$dir" "$@" ;;
    install-kueue-quota-crds) (($# == 0)) || usage; cmd_install_kueue_quota_crds "$dir" ;;
    *) usage ;;
  esac
}

main "$@"
