#!/usr/bin/env bash
# The narrated demo behind `make run`. It builds nothing: give it the strata binary (default
# build/release/bin/strata). It starts `strata up` on the simulated seed cluster (4 nodes x 8
# H100-80GB in 2 racks) in a temporary data dir, applies the manifests of this directory step by
# step, says what happens in plain sentences with what `strata get` and `strata describe` show,
# then keeps the control plane running until Ctrl-C.
#
#   examples/demo/run.sh [path/to/strata]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../../tools/strata_up.sh
source "$repo/tools/strata_up.sh"
strata=${1:-$repo/build/release/bin/strata}
if [[ ! -x $strata ]]; then
  echo "run.sh: $strata is not an executable; build it first (make build)" >&2
  exit 2
fi
strata=$(cd "$(dirname "$strata")" && pwd)/$(basename "$strata")
command -v python3 >/dev/null || { echo "run.sh: the demo's workers need python3" >&2; exit 2; }

# As root, strata runs pods as nobody: the workers' script and the strata binary (which runs the
# simulated engines) must be readable by others, which a checkout under /root is not.
if [[ $(id -u) == 0 ]] && command -v runuser >/dev/null &&
  ! runuser -u nobody -- test -r "$repo/examples/workers/allreduce.py" -a -x "$strata"; then
  echo "run.sh: run as root, strata runs pods as nobody, who cannot read $repo (a directory" \
    "above it is not searchable by others): clone the project elsewhere (e.g. /opt or /srv)," \
    "or run make run as a normal user" >&2
  exit 2
fi

data=$(mktemp -d /tmp/strata-demo-XXXXXX)
up_pid=""

# The worker processes of this demo: every process whose environment names this data dir.
demo_workers() {
  grep -lsz "STRATA_CHECKPOINT_DIR=$data/" /proc/[0-9]*/environ 2>/dev/null |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' || true
}

cleanup() {
  trap - INT TERM EXIT
  echo
  echo "Stopping strata up and the demo's workers; the data dir $data stays for a look."
  [[ -n $up_pid ]] && kill "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null
  for pid in $(demo_workers); do kill "$pid" 2>/dev/null || true; done
  exit 0
}
trap cleanup INT TERM EXIT

say() { printf '\n\033[1m%s\033[0m\n' "$*" | fold -s -w 100; }
# Runs a strata client verb against the demo's server, showing the command line first.
show() {
  printf '\n$ strata %s\n' "$*"
  "$strata" "$@" --server "$server" || true
}
# A manifest of this directory with the worker's absolute path filled in.
manifest() { sed "s|@ALLREDUCE@|$repo/examples/workers/allreduce.py|g" "$here/$1"; }
apply() {
  local file
  file=$data/$(basename "$1")
  manifest "$1" >"$file"
  show apply -f "$file"
}
# The phase of a job, read through the API.
job_phase() {
  "$strata" get jobs "$2" -n "$1" -o json --server "$server" 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("status", {}).get("phase", ""))' \
      2>/dev/null || true
}
# Waits (at most $3 seconds) until job $1/$2 reaches a phase in "$4" (a |-separated list).
wait_for_phase() {
  local deadline=$((SECONDS + $3)) phase=""
  while ((SECONDS < deadline)); do
    phase=$(job_phase "$1" "$2")
    [[ "|$4|" == *"|$phase|"* ]] && return 0
    sleep 1
  done
  echo "(job $1/$2 is still ${phase:-unknown} after $3 s)"
  return 1
}
count_in_logs() { cat "$data"/pods/*/logs/*.log 2>/dev/null | grep -c "$1" || true; }

say "1. The control plane. strata up starts the REST API, the SQLite store, the scheduler, the \
controllers, the OpenAI-compatible gateway and a node agent. There is no GPU here, so it \
registers the simulated seed cluster: 4 nodes of 8 H100-80GB in 2 racks. Pods still run as real processes on this machine."
"$strata" up --data-dir "$data" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
  --simulate 4x8:H100-80GB,racks=2 --sim-startup-delay 4 >"$data/up.log" 2>&1 &
up_pid=$!
started=0
wait_for_strata_up "$data/up.log" "$up_pid" && started=1
server=$STRATA_API gateway=$STRATA_GATEWAY
sed 's/^/  /' "$data/up.log"
if [[ $started == 0 ]]; then
  echo "run.sh: strata up did not start" >&2
  exit 1
fi
show get nodes

say "2. Two teams' quotas. Kueue's ResourceFlavor, ClusterQueues and LocalQueues, applied as \
they are: team-a and team-b each get 32 GPUs of nominal quota in the cohort ml-pool."
show apply -f "$repo/examples/team-queues/kueue.yaml"
show get queues

say "3. A Kubeflow PyTorchJob of 4 pods x 8 GPUs in team-a's queue. strata places the whole \
gang at once and its node agent starts 8 workers of examples/workers/allreduce.py per pod, with \
torchrun's environment (MASTER_ADDR, RANK, WORLD_SIZE, ...) and CUDA_VISIBLE_DEVICES: 32 real \
processes that meet over TCP and all-reduce."
apply allreduce-pytorchjob.yaml
wait_for_phase team-a allreduce 120 "Running|Succeeded|Failed" || true
show get pods -n team-a
echo
echo "Worker processes running now: $(demo_workers | wc -l)"

say "4. A GPU probe asks for 1 GPU while the job holds all 32. It waits, and says why in \
kube-scheduler's words."
apply gpu-probe.yaml
sleep 2
show describe pod gpu-probe -n team-a

say "5. The training job finishes: every worker checks the all-reduced result against the \
closed-form answer and exits 0 only if it is right."
wait_for_phase team-a allreduce 300 "Succeeded|Failed" || true
show describe job allreduce -n team-a
echo
echo "Workers that verified the result: $(count_in_logs 'result ok') of 32"
say "The GPUs are free again, so the probe runs and prints the GPU it was given:"
sleep 3
grep -h "gpu-probe:" "$data"/pods/*/logs/*.log 2>/dev/null || echo "(the probe has not run yet)"

say "6. The two-team deadlock. Both teams submit a 4 x 8-GPU job at once to a cluster of 32 \
GPUs. Placed pod by pod, each could hold half the GPUs and wait forever for the rest. strata \
places each job whole or not at all: one runs, the other holds zero GPUs and waits."
apply two-teams.yaml
sleep 3
show get jobs -A
show top nodes
wait_for_phase team-a pretrain 300 "Succeeded|Failed" || true
wait_for_phase team-b pretrain 300 "Succeeded|Failed" || true
say "Both jobs ran, one after the other, each on all 32 GPUs:"
show get jobs -A

say "7. An inference service. A TP=2 Service of Llama 3.1 8B: each replica is one pod with two \
GPUs of one NVLink island. There are no real GPUs, so the node agent runs strata engine-sim in \
place of vLLM (the same OpenAI API and metric names, and a few seconds to load its weights). \
The gateway inside strata up routes to a replica only once its readiness probe passes."
apply tp2-service.yaml
service_ready() {
  "$strata" get services chat -n team-b -o json --server "$server" 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("status", {}).get("readyReplicas", 0))' \
      2>/dev/null || echo 0
}
for _ in $(seq 1 60); do [[ $(service_ready) -ge 1 ]] && break; sleep 1; done
show get pods -n team-b
show get services -n team-b

say "8. A burst: 24 clients stream chat completions through the gateway with the official openai \
client for 25 seconds. The autoscaler reads the gateway's in-flight count and the engines' \
queues in-process; with a target of 4 requests per replica it asks for more replicas within a \
second, and the gateway spreads the streams over each new replica as soon as it is ready."
burst=$repo/tools/openai-burst
if [[ -d $burst/node_modules/openai ]] && command -v node >/dev/null; then
  node "$burst/burst.mjs" "$gateway" llama-3.1-8b 24 25 &
  burst_pid=$!
  sleep 12
  show describe service chat -n team-b
  wait "$burst_pid" || true
else
  echo "(the openai client is not installed: make run installs it with npm ci in tools/openai-burst)"
fi

say "9. The burst is over. After the stable window (20 s) the autoscaler scales back down: the \
surplus replicas drain first (the gateway sends them nothing new, their open streams finish), \
then stop and give their GPUs back."
sleep 35
show describe service chat -n team-b
show get pods -n team-b

say "The control plane keeps running at $server (try: strata get jobs -A --server $server), \
the gateway at $gateway (OpenAI API: $gateway/v1). Press Ctrl-C to stop."
wait "$up_pid"
