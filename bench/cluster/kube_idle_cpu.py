#!/usr/bin/env python3
"""The peer of idle_cpu.py: a real Kubernetes control plane's CPU under the same heartbeats.

Starts etcd, kube-apiserver and kube-controller-manager with tools/kube/cluster.sh (no kwok
nodes), creates NODES v1 Nodes (Ready, 8 GPUs each) with their Leases in kube-node-lease, and
PODS pods bound to them (spec.nodeName; no kubelet runs them, so they stay as written), then
heartbeats every node each HEARTBEAT seconds as a kubelet does since Kubernetes 1.17: a PUT of
its Lease with a new renewTime (the Lease it last got back, so with its resourceVersion), and
every STATUS_EVERY seconds a strategic-merge PATCH of its Ready condition's heartbeat, each
node's first at a random point of that interval. The driving loop is idle_cpu.py's, over TLS
with the admin client certificate. It then reads each process's CPU time (utime + stime from
/proc) over WINDOW seconds and prints one JSON line: cores used by etcd, kube-apiserver and
kube-controller-manager, each and together, and the heartbeats and status reports served.

Usage: kube_idle_cpu.py [--nodes 1000] [--pods 10000] [--window 60] [--heartbeat 10]
                        [--status-every 300]
"""
import argparse
import datetime
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading

from idle_cpu import Connection, Heartbeats, add_cluster_arguments, parallel

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SH = os.path.join(HERE, "..", "..", "tools", "kube", "cluster.sh")
MEASURED = ["etcd", "kube-apiserver", "kube-controller-manager"]


def now_micro():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_seconds():
    return now_micro()[:19] + "Z"


def node(name):
    capacity = {"cpu": "224", "memory": "2Ti", "pods": "110", "nvidia.com/gpu": "8"}
    at = now_seconds()
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"topology.strata.dev/rack": "r0"}},
            "status": {"capacity": capacity, "allocatable": capacity,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status",
                                       "lastHeartbeatTime": at, "lastTransitionTime": at}]}}


def lease(name):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40,
                     "renewTime": now_micro()}}


def pod(name, node_name):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node_name, "restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox",
                                     "command": ["sleep", "3600"],
                                     "resources": {"requests": {"cpu": "1"}}}]}}


def cpu_pid(cluster, name):
    with open(os.path.join(cluster, "pids", name + ".pid")) as f:
        return int(f.read().split()[0])


def main():
    parser = argparse.ArgumentParser()
    add_cluster_arguments(parser)
    args = parser.parse_args()

    cluster = tempfile.mkdtemp(prefix="strata-kube-idle-")
    try:
        subprocess.run([CLUSTER_SH, "up", cluster, "--nodes", "0", "--timeout", "180"],
                       check=True, stdout=subprocess.DEVNULL)
        env = dict(line.strip().split("=", 1) for line in open(os.path.join(cluster, "cluster.env"))
                   if "=" in line and not line.startswith("#"))
        api = env["KUBE_APISERVER"]
        pki = os.path.join(cluster, "pki")
        tls = ssl.create_default_context(cafile=os.path.join(pki, "ca.crt"))
        tls.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        local = threading.local()

        def call(method, path, body=None):
            if not hasattr(local, "connection"):
                local.connection = Connection(api, tls, token="")
            return local.connection.call(method, path, body)

        names = [f"held-{i}" for i in range(args.nodes)]
        leases = {}

        def register(name):
            call("POST", "/api/v1/nodes", node(name))
            leases[name] = call("POST", "/apis/coordination.k8s.io/v1/namespaces/"
                                "kube-node-lease/leases", lease(name))

        parallel(names, register, args.threads)
        parallel([(f"held-{i}", names[i % len(names)]) for i in range(args.pods)],
                 lambda p: call("POST", "/api/v1/namespaces/default/pods", pod(*p)),
                 args.threads)

        def renew(connection, name):
            held = leases[name]
            held["spec"]["renewTime"] = now_micro()
            leases[name] = connection.call(
                "PUT", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}",
                held)

        def report(connection, name):
            patch = {"status": {"conditions": [{"type": "Ready", "status": "True",
                                                "reason": "KubeletReady",
                                                "message": "kubelet is posting ready status",
                                                "lastHeartbeatTime": now_seconds()}]}}
            connection.call("PATCH", f"/api/v1/nodes/{name}/status", patch,
                            "application/strategic-merge-patch+json")

        heartbeats = Heartbeats(names, args.heartbeat, lambda: Connection(api, tls, token=""),
                                renew, report, args.status_every)
        pids = [cpu_pid(cluster, name) for name in MEASURED]
        cpus, seconds, beats_per_s, reports_per_s = heartbeats.measure(pids, args.window)
        # Heartbeats that did not keep their nodes alive would make the figure meaningless.
        not_ready = sum(1 for item in call("GET", "/api/v1/nodes")["items"]
                        if any(c["type"] == "Ready" and c["status"] != "True"
                               for c in item["status"].get("conditions", []))
                        or item["spec"].get("taints"))
        version = call("GET", "/version")["gitVersion"]
        print(json.dumps({
            "not_ready_or_tainted_nodes": not_ready,
            "kubernetes": version, "nodes": args.nodes, "held_pods": args.pods,
            "window_s": round(seconds, 1),
            "cores": round(sum(cpus) / seconds, 4),
            "cores_each": {name: round(cpu / seconds, 4) for name, cpu in zip(MEASURED, cpus)},
            "heartbeats_per_s": round(beats_per_s, 1),
            "status_reports_per_s": round(reports_per_s, 1)}))
    finally:
        subprocess.run([CLUSTER_SH, "down", cluster], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(cluster, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
