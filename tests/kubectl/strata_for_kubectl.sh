# shellcheck shell=bash
# Sourced by the kubectl tests: stock kubectl (built by tools/kube/build.sh) and Debian's
# python3-kubernetes against a real `strata up` of their own.
#   start_strata_for_kubectl NAME INVENTORY: skips (exit 77) without kubectl or the Python client;
#   starts `strata up --simulate INVENTORY` in a fresh $dir (removed, with strata stopped, on exit);
#   copies the kubeconfig it writes (its API over TLS with its admin credential: kubectl sends no
#   credential over plain HTTP) to $dir/kubeconfig. Then k (kubectl) and jp (one field) work, and
#   $python is the interpreter that has the Python client.
# Needs $repo and $strata set by the test.
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=../kube/checks.sh
source "$repo/tests/kube/checks.sh"
# shellcheck source=../../tools/strata_up.sh
source "$repo/tools/strata_up.sh"

start_strata_for_kubectl() {
  local name=$1 inventory=$2
  require_kube_binaries kubectl
  # Debian's package installs for the system interpreter, which a python3 earlier on PATH may
  # not see.
  python=/usr/bin/python3
  if ! "$python" -c "import kubernetes" 2>/dev/null; then
    echo "SKIP: python3-kubernetes is not installed (apt-get install python3-kubernetes)"
    exit 77
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
  chmod 755 "$dir"  # pods run as nobody when the test runs as root: they reach their dirs
  up_pid=""
  trap '[[ -z $up_pid ]] || stop_gracefully "$up_pid"; rm -rf "$dir"' EXIT
  "$strata" up --data-dir "$dir/data" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
    --simulate "$inventory" --stop-grace 1 >"$dir/up.log" 2>&1 &
  up_pid=$!
  wait_for_strata_up "$dir/up.log" "$up_pid" || { cat "$dir/up.log"; exit 1; }
  cp "$dir/data/kubeconfig" "$dir/kubeconfig"
}

k() { "$KUBE_BIN_DIR/kubectl" --kubeconfig "$dir/kubeconfig" --cache-dir "$dir/kube-cache" "$@"; }
# jp KUBECTL-ARGS... JSONPATH: one field of what kubectl gets.
jp() { k get "${@:1:$#-1}" -o "jsonpath=${*: -1}"; }

# Assertions for check: equals ACTUAL EXPECTED; has TEXT IN; lacks TEXT IN; fails_saying TEXT
# COMMAND... (the command fails and says TEXT).
equals() { [[ $1 == "$2" ]] || { echo "  expected '$2', got '$1'"; return 1; }; }
has() { grep -qF -- "$1" <<<"$2" || { echo "  '$1' not in: $2"; return 1; }; }
lacks() { ! grep -qF -- "$1" <<<"$2" || { echo "  '$1' shown in: $2"; return 1; }; }
fails_saying() {
  local text=$1 out
  shift
  if out=$("$@" 2>&1); then
    echo "  unexpectedly succeeded: $out"
    return 1
  fi
  grep -qF -- "$text" <<<"$out" || { echo "  got: $out"; return 1; }
}
