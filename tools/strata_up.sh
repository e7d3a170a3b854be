# shellcheck shell=bash
# Sourced by the scripts that start `strata up` in the background (examples/demo/run.sh,
# bench/autoscale/live_check.sh).

# wait_for_strata_up LOG PID: waits (up to 30 s, while PID lives) until LOG, the output of
# `strata up`, names where its REST API and its gateway listen, and sets STRATA_API and
# STRATA_GATEWAY to those URLs (http://HOST:PORT). Returns 1 when either is missing.
wait_for_strata_up() {
  local log=$1 pid=$2
  STRATA_API="" STRATA_GATEWAY=""
  for _ in $(seq 1 300); do
    STRATA_API=$(sed -n 's|^strata: API listening on \(http://[^ ]*\)$|\1|p' "$log")
    STRATA_GATEWAY=$(sed -n 's|^strata: gateway listening on \(http://[^ ]*\) .*$|\1|p' "$log")
    [[ -n $STRATA_API && -n $STRATA_GATEWAY ]] && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
