#!/usr/bin/env python3
"""Every routing policy on the generated grid plus the public traces, against issue 24's targets.

Usage: bench/serve/grid.py STRATA_BINARY [--public DATA_DIR] [--minutes M] [--seed S]
                           [--jobs N] [--json OUT.json] [--only SUBSTRING]
                           [--traces DIR] [--baselines EARLIER.json]
       bench/serve/grid.py --from-json OUT.json     (prints the tables of an earlier run)

Generates the grid of gen_traces.py (GRID x LOADS: 12 cells at loads 0.2-1.5 of their capacity,
10 minutes each by default) into a temporary directory and replays each trace with `strata sim
serve --format mooncake --replicas N -o json` under every policy the simulator has (POLICIES).
With --public, also the shared data directory's traces as bench/serve/run.sh replays them (the
Mooncake conversation trace at rate scale 0.33 with a 200 GiB host tier, the four prefix
workloads at rate scales 0.1 and 0.2 on 8 replicas, the Azure conversation trace on 4, 6, 8 and
12 replicas). --jobs runs that many replays at once (default 2: one per core).

Prints a markdown table, one row per trace and load: every policy's goodput (req/s within TTFT
2 s and TPOT 50 ms), strata's against the best baseline's, its TTFT p90 against the lowest
baseline's, its TPOT p50 against least-request's, and whether each target holds; then a summary:
  goodput  strata >= 0.97 x the best baseline's goodput
  TTFT     strata's TTFT p90 <= the lowest baseline TTFT p90, within 3 % (ties at light load
           differ by milliseconds; the same slack as the goodput target's)
  TPOT     strata's TPOT p50 <= least-request's, within 3 %
  overload the goodput target at loads above 1.0 (degrades at least as gracefully as the best
           baseline)
and the same counts over the rows where some baseline serves at least 5 % of the requests within
both SLOs (where none does, a ratio of goodputs compares a few lucky requests).
--json keeps every figure of every replay.

To judge a change to strata's picker quickly: --traces keeps the generated traces in DIR (and
reuses the ones already there: generation is seeded, so they are the same), and --baselines
replays strata alone, taking the five baselines' figures from an earlier run's --json (same
seed and minutes): they do not use strata's scorer, and a replay is deterministic, so the rows
equal a full run's (checked on all 85 rows, bench/serve/RESULTS.md "Change 3"), at a sixth of
the time.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_traces  # noqa: E402

POLICIES = ["strata", "epp-default", "prefix-only", "least-request", "round-robin", "random"]
BASELINES = POLICIES[1:]
GOODPUT_TARGET = 0.97
SERVED = 0.05
SLACK = 1.03
SHORT = {"strata": "strata", "epp-default": "epp", "prefix-only": "prefix",
         "least-request": "lr", "round-robin": "rr", "random": "random"}


def replay(strata, job, earlier=None):
    """One row: every policy's figures, or strata's alone on top of `earlier`'s row."""
    policies = ["strata"] if earlier else POLICIES
    command = [strata, "sim", "serve", "--trace", job["trace"], "--format", job["format"],
               "--replicas", str(job["replicas"]), "--rate-scale", str(job.get("rate_scale", 1)),
               "--policy", ",".join(policies), "-o", "json"] + job.get("extra", [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    reports = json.loads(out)
    if isinstance(reports, dict):  # one policy: one report, not a list
        reports = [reports]
    row = {key: job[key] for key in ("name", "load", "replicas")}
    row["ideal_reuse"] = reports[0]["ideal_prefix_reuse"]
    row["requests"] = reports[0]["requests"]
    if earlier:
        if earlier["requests"] != row["requests"]:
            raise SystemExit(f"{job['name']} load {job['load']}: {row['requests']} requests, "
                             f"{earlier['requests']} in --baselines (another seed or length?)")
        for policy in BASELINES:
            row[policy] = earlier[policy]
    for report in reports:
        row[report["policy"]] = {
            "goodput": report["goodput_requests_per_second"],
            "good_share": report["goodput_fraction"],
            "ttft_p90": report["ttft_seconds"]["p90"],
            "ttft_p99": report["ttft_seconds"]["p99"],
            "tpot_p50": report["tpot_seconds"]["p50"],
            "tpot_p90": report["tpot_seconds"]["p90"],
            "hit": report["prefix_hit_rate"],
            "utilization": report["utilization"],
        }
    return row


def judge(row):
    """Adds whether each target holds for strata on this row."""
    best = max(BASELINES, key=lambda p: row[p]["goodput"])
    fastest = min(BASELINES, key=lambda p: row[p]["ttft_p90"])
    strata = row["strata"]
    row["best"], row["fastest"] = best, fastest
    row["goodput_ratio"] = strata["goodput"] / row[best]["goodput"] if row[best]["goodput"] else 1
    row["holds"] = {
        "goodput": strata["goodput"] >= GOODPUT_TARGET * row[best]["goodput"],
        "ttft": strata["ttft_p90"] <= SLACK * row[fastest]["ttft_p90"],
        "tpot": strata["tpot_p50"] <= SLACK * row["least-request"]["tpot_p50"],
    }
    return row


def public_jobs(data):
    llm = os.path.join(data, "llm")
    jobs = [{"name": "public: mooncake conv, 200 GiB host tier, rate 0.33", "load": None,
             "replicas": 8, "trace": os.path.join(llm, "mooncake_conversation_trace.jsonl"),
             "format": "mooncake", "rate_scale": 0.33, "extra": ["--kv-offload-gib", "200"]}]
    workloads = os.path.join(llm, "prefix-workloads")
    for name in sorted(os.listdir(workloads)):
        for scale in (0.1, 0.2):
            jobs.append({"name": f"public: {name[:-len('-values.yaml')]}, rate {scale}",
                         "load": None, "replicas": 8, "trace": os.path.join(workloads, name),
                         "format": "shared-prefix", "rate_scale": scale})
    for replicas in (4, 6, 8, 12):
        jobs.append({"name": f"public: azure conv, {replicas} replicas", "load": None,
                     "replicas": replicas,
                     "trace": os.path.join(llm, "azure2023_AzureLLMInferenceTrace_conv.csv"),
                     "format": "azure"})
    return jobs


def mark(ok):
    return "yes" if ok else "**no**"


def table(rows):
    lines = ["| trace | load | reuse | goodput req/s: " + " / ".join(SHORT[p] for p in POLICIES) +
             " | strata / best baseline (its good share) | TTFT p90 s: strata / lowest"
             " | TPOT p50 ms: strata / lr | hit: strata / best | holds: goodput, TTFT, TPOT |",
             "|---" * 9 + "|"]
    for row in rows:
        strata, best, fastest = row["strata"], row[row["best"]], row[row["fastest"]]
        load = "-" if row["load"] is None else f"{row['load']:g}"
        lines.append(
            f"| {row['name']} | {load} | {row['ideal_reuse'] * 100:.0f} % | " +
            " / ".join(f"{row[p]['goodput']:.2f}" for p in POLICIES) +
            f" | {row['goodput_ratio']:.2f}x ({SHORT[row['best']]}, "
            f"{best['good_share'] * 100:.0f} %) | "
            f"{strata['ttft_p90']:.2f} / {fastest['ttft_p90']:.2f} ({SHORT[row['fastest']]}) | "
            f"{strata['tpot_p50'] * 1000:.1f} / {row['least-request']['tpot_p50'] * 1000:.1f} | "
            f"{strata['hit'] * 100:.0f} / {best['hit'] * 100:.0f} % | " +
            ", ".join(mark(row["holds"][k]) for k in ("goodput", "ttft", "tpot")) + " |")
    return "\n".join(lines)


def summary(rows):
    def count(subset, key):
        return f"{sum(r['holds'][key] for r in subset)} of {len(subset)}"

    generated = [r for r in rows if r["load"] is not None]
    public = [r for r in rows if r["load"] is None]
    overload = [r for r in generated if r["load"] > 1.0]
    lines = ["", "| rows | goodput >= 0.97x best | TTFT p90 <= lowest (3 %) | TPOT p50 <= lr (3 %) "
             "| all three | worst goodput ratio |", "|---|---|---|---|---|---|"]
    served = [r for r in generated if r[r["best"]]["good_share"] >= SERVED]
    for name, subset in (("generated grid", generated), ("overload (load > 1)", overload),
                         ("generated, a baseline serves >= 5 %", served),
                         ("public traces", public)):
        if not subset:
            continue
        every = sum(all(r["holds"].values()) for r in subset)
        worst = min(subset, key=lambda r: r["goodput_ratio"])
        lines.append(f"| {name} | {count(subset, 'goodput')} | {count(subset, 'ttft')} | "
                     f"{count(subset, 'tpot')} | {every} of {len(subset)} | "
                     f"{worst['goodput_ratio']:.2f}x ({worst['name']}, load "
                     f"{worst['load'] if worst['load'] is not None else '-'}) |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("strata", nargs="?", help="the strata binary")
    parser.add_argument("--from-json", help="print the tables of an earlier run's --json")
    parser.add_argument("--public", help="the shared data directory (its llm/ traces)")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", help="write every figure here")
    parser.add_argument("--only", help="run only the traces whose name contains this")
    parser.add_argument("--traces", help="keep the generated traces here (reuse those present)")
    parser.add_argument("--baselines",
                        help="replay strata alone; the baselines' figures from this --json")
    args = parser.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            rows = [judge(row) for row in json.load(f)]
        print(table(rows))
        print(summary(rows))
        return
    if not args.strata:
        parser.error("give the strata binary, or --from-json")
    earlier = {}
    if args.baselines:
        with open(args.baselines) as f:
            earlier = {(row["name"], row["load"]): row for row in json.load(f)}
    with tempfile.TemporaryDirectory() as scratch:
        work = args.traces or scratch
        os.makedirs(work, exist_ok=True)
        jobs = []
        for arrivals, reuse, sharing, lengths, replicas in gen_traces.GRID:
            for load in gen_traces.LOADS:
                name = gen_traces.trace_name(arrivals, reuse, sharing, lengths, load, replicas,
                                             args.seed)[:-len(".jsonl")]
                jobs.append({"name": name.rsplit("-load", 1)[0], "load": load,
                             "replicas": replicas, "format": "mooncake",
                             "trace": os.path.join(work, name + ".jsonl"),
                             "cell": (arrivals, reuse, sharing, lengths, load, replicas)})
        if args.public:
            jobs.extend(public_jobs(args.public))
        if args.only:
            jobs = [job for job in jobs if args.only in job["name"]]

        def run(job):
            if "cell" in job and not (args.traces and os.path.exists(job["trace"])):
                # Written aside and renamed: a run cut short leaves no half trace to reuse.
                gen_traces.write(job["trace"] + ".part",
                                 gen_traces.generate(*job["cell"], args.minutes, args.seed))
                os.replace(job["trace"] + ".part", job["trace"])
            before = None
            if args.baselines:
                before = earlier.get((job["name"], job["load"]))
                if before is None:
                    raise SystemExit(f"{job['name']} load {job['load']}: not in --baselines")
            row = judge(replay(args.strata, job, before))
            print(f"{row['name']} load {row['load']}: strata {row['goodput_ratio']:.2f}x "
                  f"{row['best']}, holds {row['holds']}", file=sys.stderr)
            return row

        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(run, jobs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(table(rows))
    print(summary(rows))


if __name__ == "__main__":
    main()
