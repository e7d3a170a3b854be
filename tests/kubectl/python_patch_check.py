#!/usr/bin/env python3
"""Patches objects of a running `strata up` with the official Kubernetes Python client (Debian's
python3-kubernetes): a strategic merge patch of a Node with the typed client, a merge patch of a
strata Job and a strategic merge patch of a Pod with the dynamic one, then the errors a user
meets: 409 on a stale resourceVersion, 400 naming the field of an invalid patch.

Usage: python_patch_check.py SERVER_URL TOKEN
Expects the Job team-a/train of kubectl_verbs_test.sh. Prints one line per check and exits
non-zero on the first failure.
"""
import sys
import tempfile

from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException

MERGE = "application/merge-patch+json"


def body_of(error):
    return error.body.decode() if isinstance(error.body, bytes) else error.body


def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    configuration.api_key = {"authorization": sys.argv[2]}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    api = client.ApiClient(configuration)

    # The typed client sends a dict as a strategic merge patch.
    node = client.CoreV1Api(api).patch_node(
        "sim-node-0", {"metadata": {"labels": {"patched-by": "python"}}})
    assert node.metadata.labels["patched-by"] == "python", node.metadata.labels
    assert node.status.conditions, node.status
    print("typed strategic merge patch of a node")

    with tempfile.TemporaryDirectory() as cache_dir:
        discovered = dynamic.DynamicClient(api, cache_file=cache_dir + "/discovery.json")
        jobs = discovered.resources.get(api_version="strata.dev/v1alpha1", kind="Job")
        before = jobs.get(name="train", namespace="team-a")
        patched = jobs.patch(name="train", namespace="team-a", content_type=MERGE,
                             body={"metadata": {"annotations": {"from": "python"}},
                                   "spec": {"priority": 9}})
        assert patched.spec.priority == 9, patched.spec
        assert patched.metadata.annotations["from"] == "python", patched.metadata
        print("dynamic merge patch of a job")

        try:
            jobs.patch(name="train", namespace="team-a", content_type=MERGE,
                       body={"metadata": {"resourceVersion": before.metadata.resourceVersion},
                             "spec": {"priority": 10}})
            raise AssertionError("a patch with a stale resourceVersion succeeded")
        except dynamic.exceptions.ConflictError as error:
            assert error.status == 409, error
        print("409 on a stale resourceVersion")

        try:
            jobs.patch(name="train", namespace="team-a", content_type=MERGE,
                       body={"spec": {"replicas": "three"}})
            raise AssertionError("an invalid patch succeeded")
        except dynamic.exceptions.BadRequestError as error:
            assert "spec.replicas" in body_of(error), body_of(error)
        assert jobs.get(name="train", namespace="team-a").spec.priority == 9
        print("400 naming the field of an invalid patch")

        pods = discovered.resources.get(api_version="v1", kind="Pod")
        patched = pods.patch(name="probe", namespace="team-b",
                             body={"metadata": {"labels": {"tier": "gold"}}})
        assert patched.metadata.labels["tier"] == "gold", patched.metadata
        assert [v.name for v in patched.spec.containers[0].env] == ["A"], patched.spec
        print("dynamic strategic merge patch of a pod's labels")

        core = client.CoreV1Api(api)
        try:
            core.patch_namespaced_pod("probe", "team-b", {"spec": {"containers": [
                {"name": "main", "env": [{"name": "C", "value": "3"}]}]}})
            raise AssertionError("a patch of a pod's spec succeeded")
        except ApiException as error:
            assert error.status == 400, error
            assert "a pod's spec does not change" in body_of(error), body_of(error)
        print("400 on a patch of a pod's spec, which does not change")

if __name__ == "__main__":
    try:
        main()
    except ApiException as error:
        sys.exit("unexpected API error %s: %s" % (error.status, body_of(error)))
