#!/usr/bin/env bash
# Access to `strata up`'s API, as a tester on a shared machine would try it: the owner's CLI
# and kubectl work with what strata up wrote; another local user (nobody) can read neither the
# credential nor the store, and without a token can list, create and delete nothing; a token
# scoped to a namespace reaches that namespace only, through the CLI and through kubectl.
set -uo pipefail
repo=${STRATA_SOURCE_DIR:?}
strata=${STRATA_BINARY_DIR:?}/bin/strata
# shellcheck source=../../tools/kube/cache_paths.sh
source "$repo/tools/kube/cache_paths.sh"
# shellcheck source=../kube/checks.sh
source "$repo/tests/kube/checks.sh"
# shellcheck source=../../tools/strata_up.sh
source "$repo/tools/strata_up.sh"
require_kube_binaries kubectl
if [[ $(id -u) != 0 ]] || ! command -v runuser >/dev/null; then
  echo "SKIP: needs root and runuser, to send requests as another local user"
  exit 77
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/api_access_test.XXXXXX")
chmod 755 "$dir"
up_pid=""
cleanup() {
  [[ -z $up_pid ]] || stop_gracefully "$up_pid"
  rm -rf "$dir"
}
trap cleanup EXIT
# This test's own CLI credentials, so that it neither reads nor fills the user's.
export STRATA_CREDENTIALS=$dir/credentials
kubectl() { "$KUBE_BIN_DIR/kubectl" --cache-dir "$dir/kube-cache" "$@"; }
as_nobody() { runuser -u nobody -- env -i PATH=/usr/bin:/bin "$@"; }
status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
job() {
  printf 'apiVersion: strata.dev/v1alpha1\nkind: Job\nmetadata: {name: %s, namespace: %s}\n' "$1" "$2"
  printf 'spec:\n  replicas: 1\n  resources: {gpu: 1}\n  template: {command: [sleep, "600"]}\n'
}

"$strata" up --data-dir "$dir/data" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
  --simulate 1x8:H100-80GB --stop-grace 1 >"$dir/up.log" 2>&1 &
up_pid=$!
wait_for_strata_up "$dir/up.log" "$up_pid" || { cat "$dir/up.log"; exit 1; }
api=$STRATA_API

# ---- the owner ------------------------------------------------------------------------------------
check "the admin credential is its owner's only" [ "$(stat -c %a "$dir/data/admin-token")" = 600 ]
check "so is the store" [ "$(stat -c %a "$dir/data/strata.db")" = 600 ]
check "the CLI finds the credential by itself" grep -q "^sim-node-0 " \
  <<<"$("$strata" get nodes --server "$api" 2>&1)"
job a-train team-a >"$dir/a.yaml"
check "and writes with it" "$strata" apply -f "$dir/a.yaml" --server "$api"
check "kubectl works with the kubeconfig strata up wrote (TLS)" grep -q "^a-train" \
  <<<"$(kubectl --kubeconfig "$dir/data/kubeconfig" get sjob -n team-a 2>&1)"

# ---- another local user ----------------------------------------------------------------------------
check "nobody cannot read the credential" \
  bash -c "! runuser -u nobody -- cat '$dir/data/admin-token' 2>/dev/null"
check "nobody cannot read the store" \
  bash -c "! runuser -u nobody -- cat '$dir/data/strata.db' >/dev/null 2>&1"
check "nobody's CLI lists nothing" \
  bash -c "! runuser -u nobody -- env -i STRATA_CREDENTIALS=/nonexistent '$strata' get jobs -A --server '$api' 2>/dev/null"
check "nobody's request for jobs is 401" \
  [ "$(as_nobody curl -s -o /dev/null -w '%{http_code}' "$api/apis/strata.dev/v1alpha1/jobs")" = 401 ]
pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"root-shell","namespace":"default"},"spec":{"containers":[{"name":"c","image":"x","command":["id"]}]}}'
check "nobody cannot create a pod" [ "$(as_nobody curl -s -o /dev/null -w '%{http_code}' \
  -X POST -H 'Content-Type: application/json' -d "$pod" "$api/api/v1/namespaces/default/pods")" = 401 ]
check "nobody cannot delete the control plane's node" [ "$(as_nobody curl -s -o /dev/null \
  -w '%{http_code}' -X DELETE "$api/api/v1/nodes/sim-node-0")" = 401 ]
check "(the node is still there)" grep -q "^sim-node-0 " <<<"$("$strata" get nodes --server "$api")"
check "a guessed token is 401 too" [ "$(status_of -H 'Authorization: Bearer guess' "$api/api")" = 401 ]
check "discovery stays open" [ "$(as_nobody curl -s -o /dev/null -w '%{http_code}' "$api/api")" = 200 ]
stop_gracefully "$up_pid"
up_pid=""

# ---- a token scoped to one namespace ---------------------------------------------------------------
printf 'root-secret user=platform\nb-secret user=team-b namespaces=team-b\n' >"$dir/tokens"
"$strata" up --data-dir "$dir/data" --listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 \
  --simulate 1x8:H100-80GB --stop-grace 1 --token-file "$dir/tokens" >"$dir/up2.log" 2>&1 &
up_pid=$!
wait_for 30 grep -q "API over TLS listening" "$dir/up2.log" || { cat "$dir/up2.log"; exit 1; }
api=$(sed -n 's|^strata: API listening on \(http://[^ ]*\)$|\1|p' "$dir/up2.log")
secure=$(sed -n 's|^strata: API over TLS listening on \(https://[^ ]*\) .*$|\1|p' "$dir/up2.log")
as_b() { "$strata" "$@" --server "$api" --token b-secret; }
job b-train team-b >"$dir/b.yaml"
check "team-b applies in team-b" as_b apply -f "$dir/b.yaml"
check "and lists it" grep -q "^b-train" <<<"$(as_b get jobs -n team-b 2>&1)"
out=$(as_b get jobs -n team-a 2>&1)
check "team-b cannot list team-a's jobs" grep -q 'scoped to namespace team-b: jobs in namespace team-a is outside it' <<<"$out" ||
  echo "  got: $out"
check "nor every namespace's" bash -c "! '$strata' get jobs -A --server '$api' --token b-secret >/dev/null 2>&1"
check "nor delete team-a's job" bash -c "! '$strata' delete job a-train -n team-a --server '$api' --token b-secret >/dev/null 2>&1"
check "(which is still there)" grep -q "^a-train" <<<"$("$strata" get jobs -n team-a --server "$api" --token root-secret)"
cat >"$dir/team-b.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: strata, cluster: {server: "$secure", certificate-authority: "$dir/data/api-ca.crt"}}]
users: [{name: team-b, user: {token: b-secret}}]
contexts: [{name: strata, context: {cluster: strata, user: team-b, namespace: team-b}}]
current-context: strata
YAML
check "kubectl as team-b lists team-b's jobs" grep -q "^b-train" \
  <<<"$(kubectl --kubeconfig "$dir/team-b.kubeconfig" get sjob 2>&1)"
out=$(kubectl --kubeconfig "$dir/team-b.kubeconfig" get sjob -n team-a 2>&1)
check "and is forbidden team-a's" grep -q "Forbidden\|forbidden" <<<"$out" || echo "  got: $out"

((failures == 0)) || { echo "$failures check(s) failed"; tail -20 "$dir/up.log"; exit 1; }
echo "all checks passed"
