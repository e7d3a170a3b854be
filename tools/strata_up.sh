# shellcheck shell=bash
# Sourced by the scripts that start `strata up` in the background (examples/demo/run.sh,
# bench/autoscale/live_check.sh).

# wait_for_strata_up LOG PID: waits (up to 30 s, while PID lives) until LOG, the output of
# `strata up`, names where its REST API and its gateway listen, and sets STRATA_API and
# STRATA_GATEWAY to those URLs (http://HOST:PORT), and STRATA_ADMIN_TOKEN to the admin credential
# it keeps in its data dir (the strata CLI finds it by itself; other clients send it as a bearer
# token). Returns 1 when any is missing.
wait_for_strata_up() {
  local log=$1 pid=$2 credential
  STRATA_API="" STRATA_GATEWAY="" STRATA_ADMIN_TOKEN=""
  for _ in $(seq 1 300); do
    STRATA_API=$(sed -n 's|^strata: API listening on \(http://[^ ]*\)$|\1|p' "$log")
    STRATA_GATEWAY=$(sed -n 's|^strata: gateway listening on \(http://[^ ]*\) .*$|\1|p' "$log")
    credential=$(sed -n 's|^strata: the admin credential is in \(.*\) (readable by you only)$|\1|p' "$log")
    [[ -n $credential ]] && STRATA_ADMIN_TOKEN=$(<"$credential")
    [[ -n $STRATA_API && -n $STRATA_GATEWAY && -n $STRATA_ADMIN_TOKEN ]] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
