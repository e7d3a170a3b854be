# What the Kubernetes benchmarks share: a process's CPU time. Sourced by run.sh, quota_run.sh,
# gang_run.sh and jobs_quota_run.sh.
# shellcheck shell=bash

# cpu_seconds PID: its utime + stime from /proc, in seconds.
cpu_seconds() {
  local stat fields
  read -r stat <"/proc/$1/stat"
  stat=${stat##*) }
  read -ra fields <<<"$stat"
  echo "scale=3; (${fields[11]} + ${fields[12]}) / $(getconf CLK_TCK)" | bc
}

# deciders_cpu: {"NAME": CPU seconds} of the processes in the associative array `deciders`
# (NAME -> PID).
deciders_cpu() {
  local name out="{}"
  for name in "${!deciders[@]}"; do
    out=$(jq -c --arg n "$name" --argjson s "$(cpu_seconds "${deciders[$name]}")" \
      '. + {($n): $s}' <<<"$out")
  done
  echo "$out"
}
