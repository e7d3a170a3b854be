#!/usr/bin/env python3
"""Seeded generator of openb-like pod lists, derived from the default trace.

The FGD artifact (hkust-adsl/kubernetes-scheduler-simulator) derives its openb variants from
openb_pod_list_default.csv by resampling its pods; every shape in a variant is a shape of the
default trace. What the shipped variants in ../shared/data/openb show, and what this file does
for each knob (applied in this order):

- gpu_share S (gpushareXX): the share of the GPU request (sum of num_gpu x gpu_milli) that comes
  from GPU-sharing pods (1 GPU, gpu_milli < 1000). The shipped gpushare20..80 keep the pod count
  and the CPU-only pods and redraw every GPU pod from the default's GPU pods. Here: the GPU pods
  are redrawn one at a time, uniformly from the sharing pods while the sharing share so far is
  below S, otherwise from the other GPU pods (default 0.285).
- multi_gpu M (multigpuXX): the share of the GPU request from multi-GPU pods. The shipped
  multigpu20 keeps every default pod and appends copies of multi-GPU pods. Here: copies of
  uniformly drawn multi-GPU pods are appended until the share reaches M (default 0.073; only
  raising it is supported).
- cpu_only C (cpuXXX): the CPU-only pods' total CPU request as a multiple of the default's. The
  shipped cpu050 keeps every GPU pod and redraws 375 CPU-only pods (C = 0.34 on this scale; the
  artifact's own scale for "050" is not documented here). Here: CPU-only pods are drawn
  uniformly with replacement until their CPU reaches C x the default's. C > 1 means more CPU
  competing with each GPU (a higher CPU-to-GPU ratio on the nodes).
- gpu_spec P (gpuspecXX): the share of GPU pods constrained to GPU models. The default trace has
  no constrained pod; the artifact's method card says a spec is a '|'-separated list of node
  models and only GPU pods carry one. Here: a uniform P of the GPU pods get a spec; the model is
  drawn in proportion to the cluster's GPUs of that model among models with a node that can hold
  the pod (enough GPUs, CPU and memory), and a V100 pod is given "V100M16|V100M32" half of the
  time. This is a reconstruction, not the artifact's script.

Every pod keeps the default pod's other columns; names are renumbered openb-pod-NNNN. Output is
the openb pod-list CSV, read by `strata sim openb --pods`. Deterministic for a seed (Python's
random.Random).

Usage:
  gen_variants.py --default DEFAULT.csv --nodes NODES.csv --out OUT.csv [--seed N]
                  [--gpu-share S] [--multi-gpu M] [--cpu-only C] [--gpu-spec P]
"""
import argparse
import csv
import random
import sys

COLUMNS = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
           "pod_phase", "creation_time", "deletion_time", "scheduled_time"]


def read_pods(path):
    with open(path, newline="") as f:
        pods = []
        for row in csv.DictReader(f):
            pod = {column: row.get(column, "") for column in COLUMNS}
            for column in ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli"):
                pod[column] = int(pod[column])
            pods.append(pod)
    return pods


def read_nodes(path):
    with open(path, newline="") as f:
        return [{"cpu_milli": int(r["cpu_milli"]), "memory_mib": int(r["memory_mib"]),
                 "gpu": int(r["gpu"]), "model": r["model"]} for r in csv.DictReader(f)]


def gpu_request(pod):
    return pod["num_gpu"] * pod["gpu_milli"]


def is_gpu(pod):
    return pod["num_gpu"] > 0


def is_sharing(pod):
    return pod["num_gpu"] == 1 and pod["gpu_milli"] < 1000


def is_multi(pod):
    return pod["num_gpu"] > 1


def share_of(pods, predicate):
    """The share of the GPU request of `pods` that comes from pods matching `predicate`."""
    total = sum(gpu_request(p) for p in pods)
    return sum(gpu_request(p) for p in pods if predicate(p)) / total if total else 0.0


def with_gpu_share(pods, target, rng):
    """Redraws every GPU pod so that sharing pods make `target` of the GPU request."""
    sharing = [p for p in pods if is_sharing(p)]
    whole = [p for p in pods if is_gpu(p) and not is_sharing(p)]
    if (target > 0 and not sharing) or (target < 1 and not whole):
        raise ValueError("gpu_share: the default trace lacks the pods to reach it")
    redrawn, shared, total = [], 0, 0
    for _ in range(sum(1 for p in pods if is_gpu(p))):
        pool = sharing if total == 0 or shared / total < target else whole
        if target <= 0:
            pool = whole
        pod = rng.choice(pool)
        redrawn.append(pod)
        total += gpu_request(pod)
        shared += gpu_request(pod) if is_sharing(pod) else 0
    return [p for p in pods if not is_gpu(p)] + redrawn


def with_multi_gpu(pods, target, rng):
    """Appends copies of multi-GPU pods until they make `target` of the GPU request."""
    multi = [p for p in pods if is_multi(p)]
    if not multi:
        raise ValueError("multi_gpu: the trace has no multi-GPU pod")
    if share_of(pods, is_multi) > target + 1e-9:
        raise ValueError(f"multi_gpu: the trace already has {share_of(pods, is_multi):.3f}")
    total = sum(gpu_request(p) for p in pods)
    part = sum(gpu_request(p) for p in multi)
    out = list(pods)
    while part / total < target:
        pod = rng.choice(multi)
        out.append(pod)
        part += gpu_request(pod)
        total += gpu_request(pod)
    return out


def with_cpu_only(pods, scale, reference_cpu, rng):
    """Redraws the CPU-only pods until their CPU reaches `scale` x `reference_cpu`."""
    cpu_only = [p for p in pods if not is_gpu(p)]
    if not cpu_only:
        raise ValueError("cpu_only: the trace has no CPU-only pod")
    out = [p for p in pods if is_gpu(p)]
    cpu = 0
    while cpu < scale * reference_cpu:
        pod = rng.choice(cpu_only)
        out.append(pod)
        cpu += pod["cpu_milli"]
    return out


def spec_for(pod, nodes, rng):
    """A GPU-model spec a node of the cluster can satisfy for `pod`, or "" if none can."""
    gpus_by_model = {}
    for node in nodes:
        if (node["gpu"] >= pod["num_gpu"] and node["cpu_milli"] >= pod["cpu_milli"]
                and node["memory_mib"] >= pod["memory_mib"]):
            gpus_by_model[node["model"]] = gpus_by_model.get(node["model"], 0) + node["gpu"]
    if not gpus_by_model:
        return ""
    models = sorted(gpus_by_model)
    model = rng.choices(models, weights=[gpus_by_model[m] for m in models])[0]
    if model.startswith("V100") and rng.random() < 0.5:
        both = [m for m in ("V100M16", "V100M32") if m in gpus_by_model]
        return "|".join(both)
    return model


def with_gpu_spec(pods, share, nodes, rng):
    """Gives a uniform `share` of the GPU pods a GPU-model spec."""
    gpu_indices = [i for i, p in enumerate(pods) if is_gpu(p)]
    chosen = rng.sample(gpu_indices, round(share * len(gpu_indices)))
    out = [dict(p) for p in pods]
    for i in chosen:
        out[i]["gpu_spec"] = spec_for(out[i], nodes, rng)
    return out


def generate(default_pods, nodes, seed, gpu_share=None, multi_gpu=None, cpu_only=None,
             gpu_spec=None):
    """The pod list of one variant: a list of dicts with COLUMNS, names renumbered."""
    rng = random.Random(seed)
    pods = [dict(p) for p in default_pods]
    reference_cpu = sum(p["cpu_milli"] for p in pods if not is_gpu(p))
    if gpu_share is not None:
        pods = with_gpu_share(pods, gpu_share, rng)
    if multi_gpu is not None:
        pods = with_multi_gpu(pods, multi_gpu, rng)
    if cpu_only is not None:
        pods = with_cpu_only(pods, cpu_only, reference_cpu, rng)
    if gpu_spec is not None:
        pods = with_gpu_spec(pods, gpu_spec, nodes, rng)
    out = []
    for i, pod in enumerate(pods):
        pod = dict(pod)
        pod["name"] = f"openb-pod-{i:04d}"
        out.append(pod)
    return out


def write(path, pods):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(pods)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--default", required=True, help="openb_pod_list_default.csv")
    parser.add_argument("--nodes", required=True, help="openb_node_list_gpu_node.csv")
    parser.add_argument("--out", required=True, help="CSV to write (keep it out of the repo)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gpu-share", type=float)
    parser.add_argument("--multi-gpu", type=float)
    parser.add_argument("--cpu-only", type=float)
    parser.add_argument("--gpu-spec", type=float)
    args = parser.parse_args(argv)
    try:
        pods = generate(read_pods(args.default), read_nodes(args.nodes), args.seed,
                        args.gpu_share, args.multi_gpu, args.cpu_only, args.gpu_spec)
    except ValueError as error:
        print(f"gen_variants.py: {error}", file=sys.stderr)
        return 1
    write(args.out, pods)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
