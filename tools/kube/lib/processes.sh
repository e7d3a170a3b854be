# Starting, waiting for and stopping the cluster's processes. Sourced by cluster.sh.
# Each process writes DIR/logs/NAME.log; its pid is in DIR/pids/NAME.pid, next to its start time
# (DIR/pids/NAME.start, from /proc) so that a reused pid is never signalled.
# shellcheck shell=bash

# free_ports N: N distinct free TCP ports on 127.0.0.1, held together while chosen. They are
# drawn at random from 20000-28999, below the kernel's ephemeral range: a port from bind(0)
# (ephemeral) can be taken by any outgoing connection, or by another test's bind(0), in the
# moment between choosing it and the component binding it; CI once lost etcd's peer port so.
# The range also stays clear of torchrun's 29500 and the tests' rendezvous ports.
free_ports() {
  python3 - "$1" <<'EOF'
import random, socket, sys
wanted, socks = int(sys.argv[1]), []
for port in random.sample(range(20000, 29000), 9000):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        s.close()
        continue
    socks.append(s)
    if len(socks) == wanted:
        break
if len(socks) < wanted:
    sys.exit("free_ports: fewer than %d free ports in 20000-28999" % wanted)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# start_process DIR NAME BINARY ARG...: starts it in its own session (a Ctrl-C in the caller's
# terminal does not reach it), output to DIR/logs/NAME.log.
start_process() {
  local dir=$1 name=$2 binary=$3
  shift 3
  mkdir -p "$dir/logs" "$dir/pids"
  setsid "$binary" "$@" </dev/null >>"$dir/logs/$name.log" 2>&1 &
  local pid=$!
  disown "$pid"
  echo "$pid" >"$dir/pids/$name.pid"
  process_start_time "$pid" >"$dir/pids/$name.start"
}

# process_start_time PID: field 22 of /proc/PID/stat (clock ticks since boot); kept across exec.
# Files here are read with `read`, never `$(<file)`: under set -e a `$(<file)` whose file has
# just vanished (a process exiting) ends the shell even where `||` handles the failure.
process_start_time() {
  local stat
  local -a fields
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }
  read -ra fields <<<"$stat"
  ((${#fields[@]} > 19)) || return 1
  echo "${fields[19]}"
}

# process_alive DIR NAME: whether NAME's recorded process still runs (and is not a zombie).
process_alive() {
  local dir=$1 name=$2 pid started recorded state
  read -r pid 2>/dev/null <"$dir/pids/$name.pid" || return 1
  read -r recorded 2>/dev/null <"$dir/pids/$name.start" || return 1
  started=$(process_start_time "$pid") || return 1
  [[ $started == "$recorded" ]] || return 1
  read -r state 2>/dev/null <"/proc/$pid/stat" || return 1
  state=${state##*) }
  [[ ${state:0:1} != Z ]]
}

# stop_process DIR NAME: SIGTERM, up to 10 s, then SIGKILL. Quiet when already stopped.
stop_process() {
  local dir=$1 name=$2 pid i
  if process_alive "$dir" "$name"; then
    read -r pid <"$dir/pids/$name.pid"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      process_alive "$dir" "$name" || break
      sleep 0.1
    done
    if process_alive "$dir" "$name"; then
      echo "cluster.sh: $name (pid $pid) ignored SIGTERM for 10 s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        process_alive "$dir" "$name" || break
        sleep 0.1
      done
    fi
  fi
  rm -f "$dir/pids/$name.pid" "$dir/pids/$name.start"
}

# wait_until DIR NAME SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.2 s. Fails, with the
# tail of NAME's log, when NAME exits or the time runs out.
wait_until() {
  local dir=$1 name=$2 seconds=$3 what=$4
  shift 4
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ! process_alive "$dir" "$name"; then
      echo "cluster.sh: $name exited while waiting for $what; end of $dir/logs/$name.log:" >&2
      tail -n 20 "$dir/logs/$name.log" >&2 || true
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "cluster.sh: $what did not happen within $seconds s; end of $dir/logs/$name.log:" >&2
      tail -n 20 "$dir/logs/$name.log" >&2 || true
      return 1
    fi
    sleep 0.2
  done
}

# https_ok URL CA: an HTTPS GET that the CA verifies and that answers 2xx.
https_ok() {
  curl -fsS --max-time 2 --cacert "$2" "$1"
}
