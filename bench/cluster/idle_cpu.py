#!/usr/bin/env python3
"""The control plane's CPU while nothing happens but heartbeats.

Starts `strata up` (one simulated 8-GPU node of its own) on a fresh data dir, registers NODES
more nodes through the REST API as remote agents would, creates PODS pods bound to them (held:
no agent runs them, so they stay as written: Running; beyond one per GPU they share GPUs) plus
PENDING pods that cannot fit (9 GPUs each), and
heartbeats every registered node each HEARTBEAT seconds as their agents would: a renewal of the
node's Lease (PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/NODE), and a
report of its status (GET, then PUT of the Ready condition) every STATUS_EVERY seconds, each
node's first at a random point of that interval, as nodes that registered at different times
report. --no-lease heartbeats as agents did before the Lease: a status report every beat (the
only way builds before it can be measured). Once that is in place it reads the `strata up`
process's CPU time (utime + stime from /proc) over WINDOW seconds and prints one JSON line:
cores used, CPU seconds, heartbeats and status reports per second, and the setup.

With --heartbeat 0 nobody heartbeats: the nodes are registered with a heartbeat an hour ahead, so
the node controller has nothing to mark either, and the figure is the loops' own idle cost.

Usage: idle_cpu.py --strata BIN [--nodes 1000] [--pods 10000] [--pending 0] [--window 60]
                   [--heartbeat 10] [--status-every 300] [--no-lease]
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def call(api, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(api + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    token = os.environ.get("STRATA_TOKEN")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read() or b"null")


class Connection:
    """One kept-alive connection to the API, as a node agent keeps one (net::HttpClient)."""

    def __init__(self, api):
        address = urllib.parse.urlsplit(api)
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)

    def call(self, method, path, body=None):
        headers = {"Content-Type": "application/json"}
        token = os.environ.get("STRATA_TOKEN")
        if token:
            headers["Authorization"] = "Bearer " + token
        data = None if body is None else json.dumps(body).encode()
        self.connection.request(method, path, body=data, headers=headers)
        answer = self.connection.getresponse()
        text = answer.read()
        if answer.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {answer.status} {text[:200]!r}")
        return json.loads(text or b"null")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def node(name, now):
    gpus = [{"index": i, "uuid": f"GPU-{name}-{i}", "model": "H100-80GB", "memory": "80Gi"}
            for i in range(8)]
    return {"apiVersion": "strata.dev/v1alpha1", "kind": "Node",
            "metadata": {"name": name, "labels": {"topology.strata.dev/rack": "r0"}},
            "status": {"capacity": {"cpu": "224", "memory": "2Ti"}, "gpus": gpus,
                       "conditions": [{"type": "Ready", "status": "True",
                                       "lastHeartbeatTime": now}]}}


def pod(name, node_name, gpu, milli):
    """A pod of `milli` milli-GPUs, bound to GPU `gpu` of `node_name` unless that is empty."""
    share = "1" if milli == 1000 else f"{milli}m"
    spec = {"restartPolicy": "Never", "resources": {"gpu": share, "cpu": "1"},
            "template": {"command": ["sleep", "3600"]}}
    status = {"phase": "Pending"}
    if node_name:
        spec["nodeName"] = node_name
        assigned = {"index": gpu, "uuid": f"GPU-{node_name}-{gpu}"}
        if milli != 1000:
            assigned["share"] = share
        spec["assignedGpus"] = [assigned]
        status = {"phase": "Running"}
    return {"apiVersion": "strata.dev/v1alpha1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "bench"}, "spec": spec, "status": status}


def stamp(ahead_s=0):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + ahead_s))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strata", required=True)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--pending", type=int, default=0)
    parser.add_argument("--window", type=float, default=60)
    parser.add_argument("--heartbeat", type=float, default=10)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--status-every", type=float, default=300)
    parser.add_argument("--no-lease", action="store_true")
    args = parser.parse_args()
    # More pods than GPUs: each holds an equal share of one.
    per_gpu = -(-args.pods // (args.nodes * 8))
    milli = 1000 // per_gpu

    work = tempfile.mkdtemp(prefix="strata-idle-")
    log_path = os.path.join(work, "up.log")
    log = open(log_path, "w")
    up = subprocess.Popen([args.strata, "up", "--data-dir", os.path.join(work, "data"),
                           "--listen", "127.0.0.1:0", "--gateway-listen", "off",
                           "--simulate", "1x8:H100-80GB"],
                          stdout=log, stderr=subprocess.STDOUT)
    try:
        api = None
        for _ in range(300):
            text = open(log_path).read()
            found = re.search(r"API listening on (http://\S+)", text)
            if found:
                api = found.group(1)
                break
            if up.poll() is not None:
                sys.exit("strata up exited:\n" + text)
            time.sleep(0.1)
        if api is None:
            sys.exit("strata up did not start")
        admin = os.path.join(work, "data", "admin-token")
        if os.path.exists(admin):
            os.environ["STRATA_TOKEN"] = open(admin).read().strip()

        names = [f"held-{i}" for i in range(args.nodes)]

        def parallel(items, work_on):
            chunks = [items[i::args.threads] for i in range(args.threads)]
            threads = [threading.Thread(target=lambda c=c: [work_on(x) for x in c])
                       for c in chunks]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        ahead = 3600 if args.heartbeat == 0 else 0
        parallel(names, lambda n: call(api, "POST", "/api/v1/nodes", node(n, stamp(ahead))))
        pods = [(f"held-{i}", names[(i // per_gpu) // 8], (i // per_gpu) % 8, milli)
                for i in range(args.pods)]
        # Waiting pods ask for more than a node has: they stay pending, explained.
        pods += [(f"waiting-{i}", "", 0, 9000) for i in range(args.pending)]
        parallel(pods, lambda p: call(api, "POST", "/api/v1/namespaces/bench/pods",
                                      pod(*p)))

        stop = threading.Event()
        beats = [0]
        reports = [0]
        begun = time.monotonic()
        next_report = {name: begun + random.uniform(0, args.status_every) for name in names}

        def report(connection, name):
            current = connection.call("GET", f"/api/v1/nodes/{name}")
            for condition in current["status"]["conditions"]:
                if condition["type"] == "Ready":
                    condition["lastHeartbeatTime"] = stamp()
            connection.call("PUT", f"/api/v1/nodes/{name}/status", current)
            reports[0] += 1

        def heartbeats():
            # Each node's agent heartbeats once per interval, spread over it, each on the one
            # connection an agent keeps open.
            connection = Connection(api)
            while not stop.is_set():
                start = time.monotonic()
                for i, name in enumerate(names):
                    if stop.is_set():
                        return
                    try:
                        if args.no_lease:
                            report(connection, name)
                        else:
                            lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                     "metadata": {"name": name, "namespace": "kube-node-lease"},
                                     "spec": {"holderIdentity": name, "leaseDurationSeconds": 40}}
                            connection.call("PUT", "/apis/coordination.k8s.io/v1/namespaces/"
                                            f"kube-node-lease/leases/{name}", lease)
                            if time.monotonic() >= next_report[name]:
                                report(connection, name)
                                next_report[name] += args.status_every
                        beats[0] += 1
                    except Exception as error:  # a conflict with the node controller: next time
                        print(f"heartbeat {name}: {error}", file=sys.stderr)
                        connection = Connection(api)
                    pause = start + (i + 1) * args.heartbeat / len(names) - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)

        beater = threading.Thread(target=heartbeats if args.heartbeat > 0 else stop.wait)
        beater.start()
        time.sleep(5)  # let the loops take in what was created
        cpu0, beats0, reports0, t0 = cpu_seconds(up.pid), beats[0], reports[0], time.monotonic()
        time.sleep(args.window)
        cpu1, beats1, reports1, t1 = cpu_seconds(up.pid), beats[0], reports[0], time.monotonic()
        stop.set()
        beater.join()
        # Heartbeats that did not keep their nodes alive would make the figure meaningless.
        not_ready = sum(1 for item in call(api, "GET", "/api/v1/nodes")["items"]
                        if any(c["type"] == "Ready" and c["status"] != "True"
                               for c in item["status"].get("conditions", [])))
        print(json.dumps({
            "not_ready_nodes": not_ready,
            "strata": args.strata, "nodes": args.nodes, "held_pods": args.pods,
            "pending_pods": args.pending, "window_s": round(t1 - t0, 1),
            "cpu_s": round(cpu1 - cpu0, 3), "cores": round((cpu1 - cpu0) / (t1 - t0), 4),
            "heartbeats_per_s": round((beats1 - beats0) / (t1 - t0), 1),
            "status_reports_per_s": round((reports1 - reports0) / (t1 - t0), 1),
            "lease": not args.no_lease}))
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(30)
        except subprocess.TimeoutExpired:
            up.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
