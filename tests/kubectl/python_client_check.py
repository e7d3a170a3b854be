#!/usr/bin/env python3
"""The official Kubernetes Python client (Debian's python3-kubernetes) against a running
`strata up`, as its users call it: the typed client lists, reads, watches, creates, patches
(a strategic merge patch) and deletes ConfigMaps, the dynamic client merge-patches one (a null
deletes a key) and applies a strata Job server-side (created, then changed, a conflict of another
manager's field as 409, then forced), and EventsV1Api lists events.k8s.io/v1 Events.

Usage: python_client_check.py SERVER_URL TOKEN
Expects the namespace parity-bykubectl of apply_parity_test.sh (its Job waits, with events). Prints
one line per check and exits non-zero on the first failure.
"""
import sys
import tempfile

import yaml
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

NAMESPACE = "parity-bykubectl"


def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    configuration.api_key = {"authorization": sys.argv[2]}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    api = client.ApiClient(configuration)
    core = client.CoreV1Api(api)

    created = core.create_namespaced_config_map(NAMESPACE, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="from-python", labels={"made-by": "python"}),
        data={"A": "1"}))
    assert created.data == {"A": "1"}, created
    print("create")
    read = core.read_namespaced_config_map("from-python", NAMESPACE)
    assert read.metadata.labels["made-by"] == "python", read.metadata
    print("read")
    listed = core.list_namespaced_config_map(NAMESPACE, label_selector="made-by=python")
    assert [c.metadata.name for c in listed.items] == ["from-python"], listed.items
    print("list")
    # The typed client patches with a strategic merge patch, the dynamic one as asked.
    patched = core.patch_namespaced_config_map(
        "from-python", NAMESPACE, {"data": {"B": "2"}})
    assert patched.data == {"A": "1", "B": "2"}, patched.data
    print("strategic merge patch")
    cache_dir = tempfile.TemporaryDirectory()
    discovered = dynamic.DynamicClient(api, cache_file=cache_dir.name + "/discovery.json")
    config_maps = discovered.resources.get(api_version="v1", kind="ConfigMap")
    merged = config_maps.patch(name="from-python", namespace=NAMESPACE,
                               content_type="application/merge-patch+json",
                               body={"data": {"A": None, "B": "3"}})
    assert merged.to_dict()["data"] == {"B": "3"}, merged
    print("merge patch")
    # A watch from the list's version sees the change made after it.
    version = core.list_namespaced_config_map(NAMESPACE).metadata.resource_version
    core.patch_namespaced_config_map("from-python", NAMESPACE, {"data": {"C": "3"}})
    seen = None
    for event in watch.Watch().stream(core.list_namespaced_config_map, NAMESPACE,
                                      resource_version=version, timeout_seconds=10):
        if event["object"].metadata.name == "from-python":
            seen = event
            break
    assert seen and seen["type"] == "MODIFIED" and seen["object"].data["C"] == "3", seen
    print("watch")
    core.delete_namespaced_config_map("from-python", NAMESPACE)
    try:
        core.read_namespaced_config_map("from-python", NAMESPACE)
        raise AssertionError("a deleted ConfigMap is still read")
    except ApiException as error:
        assert error.status == 404, error
    print("delete")

    jobs = discovered.resources.get(api_version="strata.dev/v1alpha1", kind="Job")
    job = {"apiVersion": "strata.dev/v1alpha1", "kind": "Job",
           "metadata": {"name": "from-python", "namespace": NAMESPACE},
           "spec": {"replicas": 1, "priority": 1, "resources": {"gpu": "64"},
                    "template": {"command": ["sh", "-c", "sleep 600"]}}}
    # The client sends an apply configuration as the text it is given (here YAML).
    def apply(manager, **kwargs):
        return jobs.server_side_apply(body=yaml.safe_dump(job), name="from-python",
                                      namespace=NAMESPACE, field_manager=manager, **kwargs)

    applied = apply("python")
    assert applied.spec.priority == 1, applied.spec
    managers = [(e.manager, e.operation) for e in applied.metadata.managedFields]
    assert managers == [("python", "Apply")], managers
    job["spec"]["priority"] = 2
    applied = apply("python")
    assert applied.spec.priority == 2, applied.spec
    print("server-side apply")
    job["spec"]["priority"] = 9
    try:
        apply("other")
        raise AssertionError("another manager's field was taken without force")
    except dynamic.exceptions.ConflictError as error:
        assert error.status == 409, error
        assert ".spec.priority" in str(error.body), error.body
    applied = apply("other", force_conflicts=True)
    assert applied.spec.priority == 9, applied.spec
    print("server-side apply conflict, then forced")
    jobs.delete(name="from-python", namespace=NAMESPACE)
    print("dynamic delete")

    events = client.EventsV1Api(api).list_namespaced_event(NAMESPACE)
    cache_dir.cleanup()
    assert events.items, "no events.k8s.io/v1 events"
    about_train = [e for e in events.items if e.regarding and e.regarding.name == "train"]
    assert about_train and about_train[0].note and about_train[0].event_time, events.items
    print("events.k8s.io/v1 list")


if __name__ == "__main__":
    main()
