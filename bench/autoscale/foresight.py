#!/usr/bin/env python3
"""Lower bounds for autoscaling a trace: plans made with perfect foresight of every minute.

Usage: bench/autoscale/foresight.py TRACE.csv STRATA_BINARY [COLD_START_SECONDS ...]

Splits the trace into its minutes (in a temporary directory) and replays each minute alone with
1, 2, ... always-on replicas (`strata sim autoscale --policy static-peak --static-replicas N`:
the same replay, engine model and picker as the benchmark), counting the requests whose first
token comes after 2 s. Then, for each cold start, finds the cheapest plan of replicas per minute,
in replica-minutes, where each replica added pays its cold start ahead and a replica may be kept
through a dip rather than bought back (an exact dynamic programme over the minutes):
  - every minute: each minute alone keeps >= 99 % in the SLO;
  - whole trace: the late requests of all minutes together stay within 1 % of the trace (the
    issue's target), spending the error budget where it saves the most.
Prints both as ratios to static-peak's replica-minutes (the fewest always-on replicas that serve
the busiest 60 s by arrivals, the benchmark's definition) and to the fewest always-on replicas
that keep every minute at >= 99 %. A minute replayed alone starts with empty queues, so a backlog
carried over from an under-provisioned minute is not charged: the bound is optimistic there.
"""
import concurrent.futures
import csv
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile

SLO_SHARE = 0.99


def replay(strata, path, replicas=0):
    """The replay's JSON for `path` with `replicas` always on (0: static-peak's own count)."""
    out = subprocess.run([strata, "sim", "autoscale", "--trace", path, "--format", "azure",
                          "--policy", "static-peak", "--static-replicas", str(replicas),
                          "-o", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def late_requests(report):
    return report["requests"] - round(report["slo_attainment"] * report["requests"])


def late_by_replicas(strata, path, most):
    """late[k - 1]: requests late in `path` with k always-on replicas, k = 1..most."""
    late = []
    for replicas in range(1, most + 1):
        late.append(late_requests(replay(strata, path, replicas)) if not late or late[-1] else 0)
    return late


def cheapest_plan(late, budget, cold_minutes):
    """Replica-minutes and late requests of the cheapest plan whose late requests stay within
    `budget`; late[m][k - 1] is minute m's late requests with k replicas. A replica added in
    minute m costs `cold_minutes` more (its cold start, paid ahead); the first minute's replicas
    are in place at the start, as in the benchmark."""
    most = len(late[0])
    # best[(k, spent)] = the fewest replica-minutes so far ending with k replicas, `spent` late.
    best = {(k, late[0][k - 1]): float(k) for k in range(1, most + 1) if late[0][k - 1] <= budget}
    for minute in late[1:]:
        following = {}
        for (held, spent), cost in best.items():
            for k in range(1, most + 1):
                total = spent + minute[k - 1]
                if total > budget:
                    continue
                value = cost + k + max(0, k - held) * cold_minutes
                if value < following.get((k, total), math.inf):
                    following[(k, total)] = value
        best = following
    cost, spent = min((cost, spent) for (_, spent), cost in best.items())
    return cost, spent


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trace, strata = sys.argv[1], sys.argv[2]
    cold_starts = [float(c) for c in sys.argv[3:]] or [82.0, 294.0]
    with open(trace, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]

    def at(stamp):
        return datetime.datetime.strptime(stamp[:26], "%Y-%m-%d %H:%M:%S.%f")

    start = at(rows[0][0])
    minutes = {}
    for row in rows:
        minutes.setdefault(int((at(row[0]) - start).total_seconds() // 60), []).append(row)
    count = max(minutes) + 1
    arrivals = [len(minutes.get(m, [])) for m in range(count)]

    with tempfile.TemporaryDirectory() as work:
        paths = []
        for minute in range(count):
            paths.append(os.path.join(work, f"{minute}.csv"))
            with open(paths[-1], "w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(header)
                writer.writerows(minutes.get(minute, []))
        peak = replay(strata, trace)["replicas"]["initial"]
        most = peak + 3
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            late = list(pool.map(lambda p: late_by_replicas(strata, p, most), paths))
    need = [next((k + 1 for k, n in enumerate(row) if n <= (1 - SLO_SHARE) * a), most)
            for row, a in zip(late, arrivals)]
    every_minute = max(need)
    budget = math.floor((1 - SLO_SHARE) * len(rows))
    print(f"per-minute need (99 % in the minute): {need}")
    print(f"late requests by replicas (1..{most}) per minute: {late}")
    print(f"static-peak: {peak} replicas (busiest 60 s by arrivals); every minute at 99 % needs "
          f"{every_minute}; mean per-minute need {sum(need) / count:.2f} "
          f"({sum(need) / count / peak:.2f}x static-peak, no cold starts)")
    print(f"error budget over the trace: {budget} late of {len(rows)}")
    # Fewer replicas than a minute needs are ruled out (infinitely late) in the first plan.
    per_minute_late = [[n if k + 1 >= need[m] else math.inf for k, n in enumerate(row)]
                       for m, row in enumerate(late)]
    for cold in cold_starts:
        for name, table in (("every minute", per_minute_late), ("whole trace", late)):
            cost, spent = cheapest_plan(table, budget if name == "whole trace" else len(rows),
                                        cold / 60)
            print(f"cold start {cold:.0f} s, 99 % {name}: {cost / count / peak:.3f}x static-peak "
                  f"({peak}), {cost / count / every_minute:.3f}x {every_minute} always on; "
                  f"{spent} late ({100 - 100 * spent / len(rows):.2f} % in SLO)")


if __name__ == "__main__":
    main()
