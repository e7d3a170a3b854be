#!/usr/bin/env python3
"""strata against FGD on a grid of generated openb pod mixes plus the public variants.

Each generated cell is one pod list from gen_variants.py (written to a temporary folder, never
the repo): GPU-model constraints x multi-GPU share x CPU-only demand, everything else as the
default trace. Every trace is replayed by `strata sim openb` under `strata` and `fgd` (strata's
own FGD, faithful to the artifact per bench/openb/RESULTS.md), one process per seed. Printed: a
markdown table of the allocation ratio difference strata - FGD per trace and load (median over
seeds, and on how many seeds strata >= FGD), and the pods FGD placed that strata failed below
90 % arrived load (summed over seeds; the same arrival position is the same pod under both
policies), and the reverse.

Usage:
  grid.py DATA_DIR [--strata build/release/bin/strata] [--seeds 42-51] [--gen-seed 1]
          [--jobs 1] [--json OUT.json] [--only NAME,...]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_variants  # noqa: E402

LOADS = ["90", "100", "110", "130"]
PUBLIC = ["default", "cpu050", "gpushare20", "gpushare40", "gpushare60", "gpushare80",
          "multigpu20"]
# Generated cells: (name, gen_variants knobs). 3 GPU-model-constraint shares x 2 multi-GPU
# shares x 2 CPU-only demands; the default trace has spec 0, multi-GPU 0.073, CPU-only 1.
SPEC = [0.0, 0.2, 0.33]
MULTI = [None, 0.4]
CPU = [None, 2.5]


def cells():
    out = []
    for spec in SPEC:
        for multi in MULTI:
            for cpu in CPU:
                multi_name = "07" if multi is None else round(multi * 100)
                cpu_name = "100" if cpu is None else round(cpu * 100)
                name = f"spec{round(spec * 100):02d}-multi{multi_name}-cpu{cpu_name}"
                out.append((name, {"gpu_spec": spec or None, "multi_gpu": multi, "cpu_only": cpu}))
    return out


def parse_seeds(text):
    seeds = []
    for item in text.split(","):
        first, _, last = item.partition("-")
        seeds += list(range(int(first), int(last or first) + 1))
    return seeds


def replay(strata, nodes, pods, policy, seed):
    result = subprocess.run(
        ["nice", strata, "sim", "openb", "--nodes", nodes, "--pods", pods, "--policy", policy,
         "--seeds", str(seed), "-o", "json"], check=True, capture_output=True, text=True)
    report = json.loads(result.stdout)
    return {"alloc": report["alloc_pct"], "failed": set(report["failed_below_90"][str(seed)])}


def signed(x):
    return f"{x:+.2f}"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("--strata", default="build/release/bin/strata")
    parser.add_argument("--seeds", default="42-51")
    parser.add_argument("--gen-seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", help="also write every per-seed figure here")
    parser.add_argument("--only", help="comma-separated trace names to run")
    args = parser.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    nodes = os.path.join(args.data_dir, "openb_node_list_gpu_node.csv")
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="openb-grid-") as work:
        traces = [(v, os.path.join(args.data_dir, f"openb_pod_list_{v}.csv")) for v in PUBLIC]
        default_pods = gen_variants.read_pods(traces[0][1])
        node_list = gen_variants.read_nodes(nodes)
        for name, knobs in cells():
            path = os.path.join(work, f"openb_pod_list_{name}.csv")
            gen_variants.write(path, gen_variants.generate(default_pods, node_list, args.gen_seed,
                                                           **knobs))
            traces.append((name, path))
        if args.only:
            wanted = set(args.only.split(","))
            traces = [t for t in traces if t[0] in wanted]
        jobs = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for name, path in traces:
                for policy in ("strata", "fgd"):
                    for seed in seeds:
                        jobs[(name, policy, seed)] = pool.submit(replay, args.strata, nodes, path,
                                                                 policy, seed)
            results = {key: job.result() for key, job in jobs.items()}
    elapsed = time.time() - start

    rows, record = [], []
    for name, _ in traces:
        cols, losses = [], 0
        for load in LOADS:
            diffs = []
            for seed in seeds:
                s = results[(name, "strata", seed)]["alloc"][load]
                f = results[(name, "fgd", seed)]["alloc"][load]
                if s is not None and f is not None:
                    diffs.append(s - f)
            median = statistics.median(diffs) if diffs else None
            wins = sum(1 for d in diffs if d >= -1e-9)
            if median is not None and round(median, 2) < 0:
                losses += 1
            cols.append("-" if median is None else f"{signed(median)} ({wins}/{len(diffs)})")
        strata_only_failed = sum(len(results[(name, "strata", s)]["failed"]
                                     - results[(name, "fgd", s)]["failed"]) for s in seeds)
        fgd_only_failed = sum(len(results[(name, "fgd", s)]["failed"]
                                  - results[(name, "strata", s)]["failed"]) for s in seeds)
        strata_100 = statistics.median(results[(name, "strata", s)]["alloc"]["100"] for s in seeds)
        fgd_100 = statistics.median(results[(name, "fgd", s)]["alloc"]["100"] for s in seeds)
        rows.append((name, cols, strata_only_failed, fgd_only_failed, strata_100, fgd_100, losses))
        record.append({"trace": name, "per_seed": {
            f"{policy}/{seed}": {"alloc": results[(name, policy, seed)]["alloc"],
                                 "failed_below_90": sorted(results[(name, policy, seed)]["failed"])}
            for policy in ("strata", "fgd") for seed in seeds}})

    print(f"strata - FGD, allocation ratio in points of GPU capacity, median over seeds "
          f"{args.seeds} (seeds with strata >= FGD / seeds); generated cells with gen seed "
          f"{args.gen_seed}; {elapsed:.0f} s wall, {args.jobs} job(s)\n")
    print("| trace | 90 % | 100 % | 110 % | 130 % | strata / FGD at 100 % | pods failed < 90 % "
          "by strata only / by FGD only |")
    print("|---|---|---|---|---|---|---|")
    for name, cols, s_only, f_only, s100, f100, _ in rows:
        print(f"| {name} | {' | '.join(cols)} | {s100:.2f} / {f100:.2f} | {s_only} / {f_only} |")
    cells_lost = sum(r[6] for r in rows)
    print(f"\ncells (trace x load) with a negative median: {cells_lost} of {len(rows) * len(LOADS)}"
          f"; pods failed below 90 % by strata only: {sum(r[2] for r in rows)}, by FGD only: "
          f"{sum(r[3] for r in rows)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
