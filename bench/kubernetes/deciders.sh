# The deciding processes of the Kubernetes benchmarks (run.sh, quota_run.sh, gang_run.sh,
# jobs_quota_run.sh): their CPU time, and the two quota systems started on a cluster.
# shellcheck shell=bash

# cpu_seconds PID: its utime + stime from /proc, in seconds.
cpu_seconds() {
  local stat fields
  read -r stat <"/proc/$1/stat"
  stat=${stat##*) }
  read -ra fields <<<"$stat"
  echo "scale=3; (${fields[11]} + ${fields[12]}) / $(getconf CLK_TCK)" | bc
}

# processes_cpu NAME PID [NAME PID ...]: {"NAME": CPU seconds} of each process.
processes_cpu() {
  local out="{}"
  while (($# >= 2)); do
    out=$(jq -c --arg n "$1" --argjson s "$(cpu_seconds "$2")" '. + {($n): $s}' <<<"$out")
    shift 2
  done
  echo "$out"
}

# deciders_cpu: {"NAME": CPU seconds} of the processes in the associative array `deciders`
# (NAME -> PID).
deciders_cpu() {
  local name args=()
  for name in "${!deciders[@]}"; do args+=("$name" "${deciders[$name]}"); done
  processes_cpu "${args[@]}"
}

# control_plane_cpu CLUSTER_DIR: {"NAME": CPU seconds} of the cluster's own processes (etcd,
# kube-apiserver, kube-controller-manager, kwok), which share the machine with the deciders.
control_plane_cpu() {
  local name pid args=()
  for name in etcd kube-apiserver kube-controller-manager kwok; do
    read -r pid <"$1/pids/$name.pid"
    args+=("$name" "$pid")
  done
  processes_cpu "${args[@]}"
}

# cluster_flags SYSTEM: `cluster.sh up` options of a quota system ("kueue" runs Kueue's manager).
cluster_flags() {
  [[ $1 == kueue ]] && echo --with-kueue || true
}

# start_quota_system SYSTEM CLUSTER_DIR KUBECONFIG STRATA LOG: the deciders of a quota run, with
# their pids in `deciders` (and strata's in `strata_pid`), API clients unthrottled as in run.sh:
#   kueue   Kueue's manager (already running: cluster.sh up --with-kueue) and kube-scheduler;
#   strata  `strata up --kubernetes` enforcing Kueue's ClusterQueues itself (Kueue's quota CRDs,
#           no Kueue controller), its output in LOG.
start_quota_system() {
  local system=$1 cluster_dir=$2 kubeconfig=$3 strata=$4 log=$5 scheduler_pid kueue_pid
  case $system in
    kueue)
      "$cluster" start-kube-scheduler "$cluster_dir" --qps 5000 --burst 5000
      read -r scheduler_pid <"$cluster_dir/pids/kube-scheduler.pid"
      read -r kueue_pid <"$cluster_dir/pids/kueue.pid"
      deciders=([kube-scheduler]=$scheduler_pid [kueue]=$kueue_pid)
      ;;
    strata)
      "$cluster" install-kueue-quota-crds "$cluster_dir"
      "$strata" up --kubernetes --kubeconfig "$kubeconfig" --leader-elect=false \
        --kube-api-qps 5000 --kube-api-burst 5000 >"$log" 2>&1 &
      strata_pid=$!
      deciders=([strata]=$strata_pid)
      ;;
    *) echo "unknown system $system (kueue, strata)" >&2; return 2 ;;
  esac
}
