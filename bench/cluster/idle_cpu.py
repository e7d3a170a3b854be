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
    """One kept-alive connection to the API, as a node agent keeps one (net::HttpClient, or a
    kubelet's client), over TLS with a client certificate when `tls` is an ssl context."""

    def __init__(self, api, tls=None, token=None):
        address = urllib.parse.urlsplit(api)
        if tls is None:
            self.connection = http.client.HTTPConnection(address.hostname, address.port,
                                                         timeout=60)
        else:
            self.connection = http.client.HTTPSConnection(address.hostname, address.port,
                                                          timeout=60, context=tls)
        self.token = token if token is not None else os.environ.get("STRATA_TOKEN")

    def call(self, method, path, body=None, content_type="application/json"):
        headers = {"Content-Type": content_type}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None if body is None else json.dumps(body).encode()
        self.connection.request(method, path, body=data, headers=headers)
        answer = self.connection.getresponse()
        text = answer.read()
        if answer.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {answer.status} {text[:200]!r}")
        return json.loads(text or b"null")


def parallel(items, work_on, threads=8):
    """Runs work_on(item) for every item, on `threads` threads."""
    chunks = [items[i::threads] for i in range(threads)]
    workers = [threading.Thread(target=lambda c=c: [work_on(x) for x in c]) for c in chunks]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


class Heartbeats:
    """Every node in `names` beats once per `interval` seconds, spread over it, on one thread
    and one kept-alive connection (from `connect`) as each agent keeps one: beat(connection,
    name) renews its Lease, and report(connection, name) writes its status, every `status_every`
    seconds, each node's first at a random point of that interval (nodes registered at
    different times). With `status_every` None every beat is a report (no Lease)."""

    def __init__(self, names, interval, connect, beat, report, status_every):
        self.names, self.interval, self.connect = names, interval, connect
        self.beat, self.report, self.status_every = beat, report, status_every
        self.beats = self.reports = 0
        self.stop = threading.Event()
        begun = time.monotonic()
        self.next_report = {name: begun + random.uniform(0, status_every or 0) for name in names}
        self.thread = threading.Thread(target=self.run if interval > 0 else self.stop.wait)

    def run(self):
        connection = self.connect()
        while not self.stop.is_set():
            start = time.monotonic()
            for i, name in enumerate(self.names):
                if self.stop.is_set():
                    return
                try:
                    if self.status_every is None:
                        self.report(connection, name)
                        self.reports += 1
                    else:
                        self.beat(connection, name)
                        if time.monotonic() >= self.next_report[name]:
                            self.report(connection, name)
                            self.reports += 1
                            self.next_report[name] += self.status_every
                    self.beats += 1
                except Exception as error:  # a conflict with the node controller: next time
                    print(f"heartbeat {name}: {error}", file=sys.stderr)
                    connection = self.connect()
                pause = start + (i + 1) * self.interval / len(self.names) - time.monotonic()
                if pause > 0:
                    time.sleep(pause)

    def measure(self, pids, window):
        """Starts beating, lets the loops take in what was created, then returns the CPU seconds
        of `pids` (each), the seconds measured, and the beats and reports per second."""
        self.thread.start()
        time.sleep(5)
        cpu0, beats0, reports0, t0 = ([cpu_seconds(p) for p in pids], self.beats, self.reports,
                                      time.monotonic())
        time.sleep(window)
        cpu1, beats1, reports1, t1 = ([cpu_seconds(p) for p in pids], self.beats, self.reports,
                                      time.monotonic())
        self.stop.set()
        self.thread.join()
        seconds = t1 - t0
        return ([b - a for a, b in zip(cpu0, cpu1)], seconds, (beats1 - beats0) / seconds,
                (reports1 - reports0) / seconds)


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


def add_cluster_arguments(parser):
    """The setup and heartbeat flags that this script and its peer (kube_idle_cpu.py) share."""
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--window", type=float, default=60)
    parser.add_argument("--heartbeat", type=float, default=10)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--status-every", type=float, default=300)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strata", required=True)
    add_cluster_arguments(parser)
    parser.add_argument("--pending", type=int, default=0)
    parser.add_argument("--no-lease", action="store_true")
    args = parser.parse_args()
    # More pods than GPUs: each holds an equal share of one.
    per_gpu = max(1, -(-args.pods // (args.nodes * 8)))
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
        ahead = 3600 if args.heartbeat == 0 else 0
        parallel(names, lambda n: call(api, "POST", "/api/v1/nodes", node(n, stamp(ahead))),
                 args.threads)
        pods = [(f"held-{i}", names[(i // per_gpu) // 8], (i // per_gpu) % 8, milli)
                for i in range(args.pods)]
        # Waiting pods ask for more than a node has: they stay pending, explained.
        pods += [(f"waiting-{i}", "", 0, 9000) for i in range(args.pending)]
        parallel(pods, lambda p: call(api, "POST", "/api/v1/namespaces/bench/pods", pod(*p)),
                 args.threads)

        def report(connection, name):
            current = connection.call("GET", f"/api/v1/nodes/{name}")
            for condition in current["status"]["conditions"]:
                if condition["type"] == "Ready":
                    condition["lastHeartbeatTime"] = stamp()
            connection.call("PUT", f"/api/v1/nodes/{name}/status", current)

        def renew(connection, name):
            lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                     "metadata": {"name": name, "namespace": "kube-node-lease"},
                     "spec": {"holderIdentity": name, "leaseDurationSeconds": 40}}
            connection.call("PUT", "/apis/coordination.k8s.io/v1/namespaces/"
                            f"kube-node-lease/leases/{name}", lease)

        heartbeats = Heartbeats(names, args.heartbeat, lambda: Connection(api), renew, report,
                                None if args.no_lease else args.status_every)
        [cpu], seconds, beats_per_s, reports_per_s = heartbeats.measure([up.pid], args.window)
        # Heartbeats that did not keep their nodes alive would make the figure meaningless.
        not_ready = sum(1 for item in call(api, "GET", "/api/v1/nodes")["items"]
                        if any(c["type"] == "Ready" and c["status"] != "True"
                               for c in item["status"].get("conditions", [])))
        print(json.dumps({
            "not_ready_nodes": not_ready,
            "strata": args.strata, "nodes": args.nodes, "held_pods": args.pods,
            "pending_pods": args.pending, "window_s": round(seconds, 1),
            "cpu_s": round(cpu, 3), "cores": round(cpu / seconds, 4),
            "heartbeats_per_s": round(beats_per_s, 1),
            "status_reports_per_s": round(reports_per_s, 1),
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
