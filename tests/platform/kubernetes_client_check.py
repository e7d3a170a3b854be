#!/usr/bin/env python3
"""Drives a running `strata up` with the official Kubernetes Python client (Debian's
python3-kubernetes), as kubectl would: discovery first, then typed and dynamic calls.

Usage: kubernetes_client_check.py SERVER_URL TOKEN
Prints one line per check and exits non-zero on the first failure.
"""
import sys
import tempfile

from kubernetes import client, dynamic, watch


def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    configuration.api_key = {"authorization": sys.argv[2]}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    api = client.ApiClient(configuration)

    version = client.VersionApi(api).get_code()
    assert version.major == "1", version
    print("version", version.git_version)

    nodes = client.CoreV1Api(api).list_node()
    names = sorted(node.metadata.name for node in nodes.items)
    assert names == ["sim-node-0", "sim-node-1", "sim-node-2", "sim-node-3"], names
    ready = [c.status for c in nodes.items[0].status.conditions if c.type == "Ready"]
    assert ready == ["True"], ready
    # GPUs as Kubernetes' device plugin reports them, what schedulers and dashboards read.
    gpus = [(node.status.capacity["nvidia.com/gpu"], node.status.allocatable["nvidia.com/gpu"])
            for node in nodes.items]
    assert gpus == [("8", "8")] * 4, gpus
    print("typed list_node", names)

    with tempfile.TemporaryDirectory() as cache_dir:
        discovered = dynamic.DynamicClient(api, cache_file=cache_dir + "/discovery.json")
        jobs = discovered.resources.get(api_version="strata.dev/v1alpha1", kind="Job")
        assert jobs.namespaced and jobs.name == "jobs", jobs
        job = {
            "apiVersion": "strata.dev/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "from-python", "namespace": "team-a"},
            "spec": {"replicas": 1, "resources": {"gpu": "1"},
                     "template": {"command": ["python3", "-c", "print(1)"]}},
        }
        created = jobs.create(body=job, namespace="team-a")
        assert created.metadata.resourceVersion, created
        listed = jobs.get(namespace="team-a")
        assert [item.metadata.name for item in listed.items] == ["from-python"], listed
        assert int(listed.metadata.resourceVersion) >= int(created.metadata.resourceVersion)
        print("dynamic create and list jobs", listed.metadata.resourceVersion)

        try:
            jobs.create(body=job, namespace="team-a")
            raise AssertionError("a second create of the same job succeeded")
        except dynamic.exceptions.ConflictError as error:
            body = error.body.decode() if isinstance(error.body, bytes) else error.body
            assert "AlreadyExists" in body, body
        print("conflict on a second create")

        jobs.delete(name="from-python", namespace="team-a")
        assert jobs.get(namespace="team-a").items == []
        print("dynamic delete")

    # Pods through the typed client, which reads them into its own v1 Pod model.
    core = client.CoreV1Api(api)
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="typed", namespace="default", labels={"app": "probe"}),
        spec=client.V1PodSpec(restart_policy="Never", containers=[client.V1Container(
            name="main", image="busybox", command=["sh", "-c", "sleep 600"])]))
    created = core.create_namespaced_pod("default", pod)
    assert created.spec.containers[0].command == ["sh", "-c", "sleep 600"], created.spec
    print("typed create_namespaced_pod")
    watched = watch.Watch()
    phases = set()
    for event in watched.stream(core.list_namespaced_pod, "default", timeout_seconds=60,
                                field_selector="metadata.name=typed"):
        phases.add(event["object"].status.phase)
        if event["object"].status.phase == "Running":
            watched.stop()
    assert "Running" in phases, phases
    print("typed watch until Running")
    listed = core.list_namespaced_pod("default", label_selector="app=probe")
    assert [p.metadata.name for p in listed.items] == ["typed"], listed
    read = core.read_namespaced_pod("typed", "default")
    assert read.spec.node_name.startswith("sim-node-"), read.spec
    assert read.status.container_statuses[0].state.running is not None, read.status
    print("typed list and read:", read.spec.node_name)
    patched = core.patch_namespaced_pod("typed", "default", {"metadata": {"labels": {"tier": "a"}}})
    assert patched.metadata.labels == {"app": "probe", "tier": "a"}, patched.metadata
    print("typed patch")
    core.delete_namespaced_pod("typed", "default")
    print("typed delete")


if __name__ == "__main__":
    main()
