# What the Kubernetes benchmarks share: a process's CPU time. Sourced by run.sh and quota_run.sh.
# shellcheck shell=bash

# cpu_seconds PID: its utime + stime from /proc, in seconds.
cpu_seconds() {
  local stat fields
  read -r stat <"/proc/$1/stat"
  stat=${stat##*) }
  read -ra fields <<<"$stat"
  echo "scale=3; (${fields[11]} + ${fields[12]}) / $(getconf CLK_TCK)" | bc
}
