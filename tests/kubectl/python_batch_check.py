#!/usr/bin/env python3
"""The official Kubernetes Python client's BatchV1Api against a running `strata up`, as its users
call it: creates an Indexed batch/v1 Job of two pods, reads and lists it as a V1Job, watches it
until its Complete condition (bounded by the watch's timeout), reads its status subresource,
patches a label (the typed client's strategic merge patch) and deletes it.

Usage: python_batch_check.py SERVER_URL TOKEN NAMESPACE
Prints one line per check and exits non-zero on the first failure.
"""
import sys

from kubernetes import client, watch


def main():
    configuration = client.Configuration()
    configuration.host = sys.argv[1]
    configuration.api_key = {"authorization": sys.argv[2]}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    namespace = sys.argv[3]
    batch = client.BatchV1Api(client.ApiClient(configuration))

    container = client.V1Container(name="main", image="python:3.12",
                                   command=["python3", "-c", "print('hello')"])
    job = client.V1Job(
        api_version="batch/v1", kind="Job",
        metadata=client.V1ObjectMeta(name="from-python", labels={"made-by": "python"}),
        spec=client.V1JobSpec(
            completions=2, parallelism=2, completion_mode="Indexed",
            template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
                restart_policy="Never", containers=[container]))))
    created = batch.create_namespaced_job(namespace, job)
    assert created.spec.completion_mode == "Indexed", created.spec
    assert created.metadata.uid, created.metadata
    print("create")
    read = batch.read_namespaced_job("from-python", namespace)
    assert read.spec.template.spec.containers[0].image == "python:3.12", read.spec
    print("read")
    listed = batch.list_namespaced_job(namespace, label_selector="made-by=python")
    assert [j.metadata.name for j in listed.items] == ["from-python"], listed.items
    print("list")
    complete = False
    for event in watch.Watch().stream(batch.list_namespaced_job, namespace,
                                      field_selector="metadata.name=from-python",
                                      timeout_seconds=60):
        conditions = event["object"].status.conditions or []
        if any(c.type == "Complete" and c.status == "True" for c in conditions):
            complete = True
            break
    assert complete, "no Complete condition within 60 s"
    print("watch until complete")
    done = batch.read_namespaced_job_status("from-python", namespace)
    assert done.status.succeeded == 2 and done.status.completed_indexes == "0,1", done.status
    assert done.status.completion_time is not None, done.status
    print("status")
    patched = batch.patch_namespaced_job("from-python", namespace,
                                         {"metadata": {"labels": {"stage": "done"}}})
    assert patched.metadata.labels == {"made-by": "python", "stage": "done"}, patched.metadata
    print("patch")
    batch.delete_namespaced_job("from-python", namespace, propagation_policy="Background")
    remaining = batch.list_namespaced_job(namespace, label_selector="made-by=python")
    assert remaining.items == [], remaining.items
    print("delete")


if __name__ == "__main__":
    main()
