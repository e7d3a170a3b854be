#!/usr/bin/env python3
"""Renders bench/openb/run.sh's results as markdown beside the FGD artifact's reported figures.

usage: table.py RESULTS_JSON REPORTED_CSV SEEDS ELAPSED_SECONDS
"""
import csv
import json
import sys

POLICIES = ["random", "dotprod", "clustering", "packing", "bestfit", "fgd", "strata"]
REPORTED_NAMES = {"01-Random": "random", "02-DotProd": "dotprod", "03-GpuClustering": "clustering",
                  "04-GpuPacking": "packing", "05-BestFit": "bestfit", "06-FGD": "fgd"}
LOADS = ["90", "100", "110", "130"]


def main(results_path, reported_path, seeds, elapsed):
    ours = {}
    seconds = {}
    for line in open(results_path):
        run = json.loads(line)
        key = (run["variant"], run["result"]["policy"])
        ours[key] = run["result"]["alloc_pct"]
        seconds[key] = run["seconds"]
    reported = {}
    for row in csv.DictReader(open(reported_path)):
        variant = row["workload"].removeprefix("openb_pod_list_")
        reported[(variant, REPORTED_NAMES[row["policy"]])] = {
            load: float(row[f"alloc@{load}"]) for load in LOADS}
    variants = sorted({variant for variant, _ in ours}, key=lambda v: (v != "default", v))

    def cell(variant, policy, load):
        value = ours.get((variant, policy), {}).get(load)
        peer = reported.get((variant, policy), {}).get(load)
        if value is None:
            return "-"
        if peer is None:
            return f"{value:.2f}"
        return f"{value:.2f} ({peer:.2f}, {value - peer:+.2f})"

    out = [f"GPU allocation ratio, % of GPU capacity, mean of seeds {seeds}. Each cell: ours "
           "(FGD artifact's reported figure, difference); no reported figure for strata or "
           "for variants the artifact's CSV lacks.", ""]
    out.append("### All policies x variants at 100 % arrived load")
    out.append("")
    out.append("| policy | " + " | ".join(variants) + " |")
    out.append("|---|" + "---|" * len(variants))
    for policy in POLICIES:
        out.append(f"| {policy} | " + " | ".join(cell(v, policy, "100") for v in variants) + " |")
    out.append("")
    out.append("### strata against FGD at 100 %")
    out.append("")
    out.append("| variant | strata | fgd (ours) | fgd (reported) | strata - reported fgd |")
    out.append("|---|---|---|---|---|")
    for variant in variants:
        strata = ours.get((variant, "strata"), {}).get("100")
        fgd = ours.get((variant, "fgd"), {}).get("100")
        peer = reported.get((variant, "fgd"), {}).get("100")
        gap = f"{strata - peer:+.2f}" if strata is not None and peer is not None else "-"
        def show(value):
            return "-" if value is None else f"{value:.2f}"
        out.append(f"| {variant} | {show(strata)} | {show(fgd)} | {show(peer)} | {gap} |")
    out.append("")
    out.append("### default trace at 90 / 100 / 110 / 130 %")
    out.append("")
    out.append("| policy | " + " | ".join(f"{load} %" for load in LOADS) + " |")
    out.append("|---|" + "---|" * len(LOADS))
    for policy in POLICIES:
        out.append(f"| {policy} | " + " | ".join(cell("default", policy, l) for l in LOADS) + " |")
    out.append("")
    out.append("### Run time (seconds per policy x variant, all seeds)")
    out.append("")
    out.append("| policy | " + " | ".join(variants) + " |")
    out.append("|---|" + "---|" * len(variants))
    for policy in POLICIES:
        out.append(f"| {policy} | " +
                   " | ".join(f"{seconds.get((v, policy), 0):.1f}" for v in variants) + " |")
    out.append("")
    out.append(f"Wall time of the whole run: {elapsed} s.")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4])
