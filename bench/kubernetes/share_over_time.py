#!/usr/bin/env python3
"""Each queue's share of the GPUs over a run of bench/kubernetes/jobs_quota_run.sh.

Reads pod_load bound-log's lines (one JSON object per change: "t", and per queue "bound" GPUs and
"ever" pods bound) and the run's facts, and prints one JSON object:
  all_bound_s     seconds from START until every pod of every queue had been bound (null if not)
  mean_gpus       the mean GPUs bound, all queues, from START to then
  utilisation     mean_gpus over the cluster's GPUs
  queue_mean_gpus each queue's mean GPUs bound over the same time
  jain_waiting    Jain's fairness index of bound / nominal quota, over the queues that still
                  had pods never bound, sampled each second and averaged (1 is perfectly even)
  cohort_max      the most GPUs each cohort held at once (never above its quota when correct)

Usage: share_over_time.py BOUND_LOG --start T --pods JSON --nominal JSON --cohorts JSON --gpus N
  --pods: {queue: pods}; --nominal: {queue: GPUs}; --cohorts: {queue: cohort}
"""

import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--start", type=float, required=True)
    parser.add_argument("--pods", type=json.loads, required=True)
    parser.add_argument("--nominal", type=json.loads, required=True)
    parser.add_argument("--cohorts", type=json.loads, required=True)
    parser.add_argument("--gpus", type=int, required=True)
    args = parser.parse_args()
    states = []
    with open(args.log) as log:
        for line in log:
            line = line.strip()
            if line:
                states.append(json.loads(line))
    queues = sorted(args.pods)
    done_at = None
    for state in states:
        ever = state.get("ever", {})
        if all(ever.get(q, 0) >= args.pods[q] for q in queues):
            done_at = state["t"]
            break
    end = done_at if done_at is not None else (states[-1]["t"] if states else args.start)
    # The state at each whole second from the start to the end (the last change before it).
    samples = []
    i, current = 0, {"bound": {}, "ever": {}}
    t = args.start
    while t <= end:
        while i < len(states) and states[i]["t"] <= t:
            current = states[i]
            i += 1
        samples.append(current)
        t += 1.0
    duration = max(len(samples), 1)
    queue_mean = {q: sum(s.get("bound", {}).get(q, 0) for s in samples) / duration for q in queues}
    jains = []
    for s in samples:
        waiting = [q for q in queues if s.get("ever", {}).get(q, 0) < args.pods[q]]
        xs = [s.get("bound", {}).get(q, 0) / args.nominal[q] for q in waiting]
        if len(xs) > 1 and sum(x * x for x in xs) > 0:
            jains.append(sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)))
    cohort_max = {}
    for state in states:
        per = {}
        for q, gpus in state.get("held", {}).items():
            if q in args.cohorts:
                per[args.cohorts[q]] = per.get(args.cohorts[q], 0) + gpus
        for cohort, gpus in per.items():
            cohort_max[cohort] = max(cohort_max.get(cohort, 0), gpus)
    mean = sum(queue_mean.values())
    json.dump({"all_bound_s": None if done_at is None else round(done_at - args.start, 2),
               "mean_gpus": round(mean, 1), "utilisation": round(mean / args.gpus, 3),
               "queue_mean_gpus": {q: round(v, 1) for q, v in queue_mean.items()},
               "jain_waiting": round(sum(jains) / len(jains), 3) if jains else None,
               "cohort_max": cohort_max}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
