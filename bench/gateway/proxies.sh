# Sourced by the gateway benchmarks (overhead.sh, instructions.sh): a work folder removed on
# exit with the processes started into PIDS, port helpers, and the nginx configuration strata
# is compared with.

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Echoes the port from the "listening on ...:PORT" line of a log, once it appears (within a
# minute: a process under valgrind starts slowly).
wait_for_port() {
  for _ in $(seq 1 1200); do
    if port=$(grep -oE 'listening on \S*:[0-9]+' "$1" | grep -oE '[0-9]+$'); then
      echo "$port"; return 0
    fi
    sleep 0.05
  done
  echo "error: no 'listening on' line in $1: $(cat "$1")" >&2
  exit 1
}

# Writes $WORK/nginx/nginx.conf: a plain reverse proxy (no buffering either way, upstream
# keep-alive) with $1 worker processes, listening on 127.0.0.1:$2, in front of the engine on
# 127.0.0.1:$3; $4 "off" runs the worker in the master process (one process, for valgrind).
write_nginx_conf() {
  mkdir -p "$WORK/nginx"
  cat >"$WORK/nginx/nginx.conf" <<NGINX
worker_processes $1;
master_process ${4:-on};
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx;
  proxy_temp_path $WORK/nginx;
  client_max_body_size 8m;
  client_body_buffer_size 8m;
  upstream engine { server 127.0.0.1:$3; keepalive 256; }
  server {
    listen 127.0.0.1:$2;
    location / {
      proxy_pass http://engine;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
NGINX
}
