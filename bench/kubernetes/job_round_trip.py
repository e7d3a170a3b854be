#!/usr/bin/env python3
"""Where a batch/v1 Job's time goes, from the objects the API server holds at the end of a run.

Reads `kubectl get jobs,pods -o json` (a List) on stdin and prints one JSON object of mean
seconds per stage, over the Jobs that completed:
  admitted      Job created -> status.startTime (the Job controller's first sync of it unsuspended:
                the quota system's admission)
  pods_created  startTime -> its first pod's creationTimestamp (the Job controller)
  bound         a pod's creationTimestamp -> its PodScheduled=True transition (the scheduler)
  started       PodScheduled -> the pod's status.startTime (kwok)
  ran           the pod's startTime -> its container's finishedAt (the pod's own run time)
  completed     the Job's last finishedAt -> the Job's status.completionTime (the Job controller)
and `extra_pods`: pods beyond their Job's completions, over all Jobs (a Job controller that made
more pods than a Job asked for). The API's timestamps have whole seconds, so each mean is good to
about half a second.
"""
import datetime
import json
import statistics
import sys


def seconds(stamp):
    return datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def condition_time(pod, kind):
    for condition in pod.get("status", {}).get("conditions", []):
        if condition.get("type") == kind and condition.get("status") == "True":
            return seconds(condition["lastTransitionTime"])
    return None


def finished_at(pod):
    for status in pod.get("status", {}).get("containerStatuses", []):
        terminated = status.get("state", {}).get("terminated")
        if terminated and terminated.get("finishedAt"):
            return seconds(terminated["finishedAt"])
    return None


def main():
    items = json.load(sys.stdin)["items"]
    pods_of = {}
    for pod in (i for i in items if i["kind"] == "Pod"):
        for owner in pod["metadata"].get("ownerReferences", []):
            if owner.get("kind") == "Job":
                pods_of.setdefault(owner["uid"], []).append(pod)
    stages = {k: [] for k in ("admitted", "pods_created", "bound", "started", "ran", "completed")}
    extra_pods = 0
    for job in (i for i in items if i["kind"] == "Job"):
        status = job.get("status", {})
        pods = pods_of.get(job["metadata"]["uid"], [])
        extra_pods += max(0, len(pods) - job["spec"].get("completions", 1))
        if "completionTime" not in status or "startTime" not in status or not pods:
            continue
        start = seconds(status["startTime"])
        stages["admitted"].append(start - seconds(job["metadata"]["creationTimestamp"]))
        stages["pods_created"].append(
            min(seconds(p["metadata"]["creationTimestamp"]) for p in pods) - start)
        finishes = []
        for pod in pods:
            scheduled = condition_time(pod, "PodScheduled")
            pod_start = pod.get("status", {}).get("startTime")
            finish = finished_at(pod)
            if scheduled is None or pod_start is None or finish is None:
                continue
            stages["bound"].append(scheduled - seconds(pod["metadata"]["creationTimestamp"]))
            stages["started"].append(seconds(pod_start) - scheduled)
            stages["ran"].append(finish - seconds(pod_start))
            finishes.append(finish)
        if finishes:
            stages["completed"].append(seconds(status["completionTime"]) - max(finishes))
    out = {k: round(statistics.mean(v), 2) if v else None for k, v in stages.items()}
    out["completed_jobs"] = len(stages["admitted"])
    out["extra_pods"] = extra_pods
    print(json.dumps(out))


if __name__ == "__main__":
    main()
