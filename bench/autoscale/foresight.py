#!/usr/bin/env python3
"""Lower bounds for autoscaling a trace: plans made with perfect foresight of every minute.

Usage: bench/autoscale/foresight.py TRACE.csv STRATA_BINARY [COLD_START_SECONDS ...]

Splits the trace into its minutes (in a temporary directory) and replays each non-empty minute
alone with 1, 2, ... always-on replicas (`strata sim autoscale --policy static-peak
--static-replicas N`: the same replay, engine model and picker as the benchmark) until none of
its requests is late (their first token after 2 s), or until more replicas save none; an empty
minute needs no replica and is not replayed. Then, for each cold start, finds the cheapest plan
of replicas per minute, in replica-minutes, where each replica added pays its cold start ahead,
a replica may be kept through a dip rather than bought back, and a minute may hold none (every
request arriving in it is then late) (an exact dynamic programme over the minutes):
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
# `strata sim autoscale`'s --max-replicas default: the most replicas a minute is replayed with.
MAX_REPLICAS = 64


def replay(strata, path, replicas=0):
    """The replay's JSON for `path` with `replicas` always on (0: static-peak's own count)."""
    out = subprocess.run([strata, "sim", "autoscale", "--trace", path, "--format", "azure",
                          "--policy", "static-peak", "--static-replicas", str(replicas),
                          "-o", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def late_requests(report):
    return report["requests"] - round(report["slo_attainment"] * report["requests"])


def late_by_replicas(strata, path, arrivals):
    """late[k]: requests late in the minute at `path` with k always-on replicas, k = 0, 1, ...:
    every arrival with none, then replayed with 1, 2, ... until none is late, or two more
    replicas saved none (requests no count serves in time), or MAX_REPLICAS. An empty minute
    is never replayed (the replay refuses a trace without requests): nothing is late in it."""
    late = [arrivals]
    while late[-1] > 0 and len(late) <= MAX_REPLICAS:
        if len(late) >= 3 and late[-1] == late[-3]:
            break
        late.append(late_requests(replay(strata, path, len(late))))
    return late


def padded(late, most):
    """Each minute's late requests at 0..most replicas (the last count measured stands above)."""
    return [row + [row[-1]] * (most + 1 - len(row)) for row in late]


def pareto(states):
    """The states of `states` ({(k, spent): cost}) that no state with the same k beats on both
    late requests spent and cost: the others cannot lead to a cheaper plan."""
    kept, cheapest = {}, {}
    for (k, spent), cost in sorted(states.items()):
        if cost < cheapest.get(k, math.inf):
            cheapest[k] = cost
            kept[(k, spent)] = cost
    return kept


def cheapest_plan(late, budget, cold_minutes, floor=()):
    """Replica-minutes and late requests of the cheapest plan whose late requests stay within
    `budget`, or None when no plan does; late[m][k] is minute m's late requests with k
    replicas (k = 0 allowed: scaling to zero). A replica added in minute m costs `cold_minutes`
    more (its cold start, paid ahead, so it serves from the minute's start); the first minute's
    replicas are in place at the start, as in the benchmark. floor[m], where given, is the
    fewest replicas minute m may hold."""
    most = len(late[0]) - 1

    def fewest(m):
        return floor[m] if m < len(floor) else 0

    # best[(k, spent)] = the fewest replica-minutes so far ending with k replicas, `spent` late.
    best = {(k, late[0][k]): float(k) for k in range(fewest(0), most + 1)
            if late[0][k] <= budget}
    for m, minute in enumerate(late[1:], start=1):
        following = {}
        for (held, spent), cost in best.items():
            for k in range(fewest(m), most + 1):
                total = spent + minute[k]
                if total > budget:
                    continue
                value = cost + k + max(0, k - held) * cold_minutes
                if value < following.get((k, total), math.inf):
                    following[(k, total)] = value
        best = pareto(following)
    if not best:
        return None
    cost, spent = min((cost, spent) for (_, spent), cost in best.items())
    return cost, spent


def unforeseen_rise(need, late, budget, cold_minutes):
    """The rise to a need never seen before that costs a policy knowing only the past the most,
    and what meeting the budget through it takes; None when no minute needs more than the
    trace's first cold start did. A replica ordered when a rise begins is ready `cold_minutes`
    later, so the minutes of that first cold start are served by the replicas held before it.
    For each minute needing more than every earlier one (after the first cold start, whose
    need the benchmark's start covers): `late_held`, the late requests of its first cold start's
    minutes with the largest need seen before (`held`) in place, and `fewest`, the fewest
    replicas that keep them within the whole trace's budget (None: no count does). The rise
    with the most `late_held` is returned, with `minute` and its own `need`. Every minute is
    replayed alone from empty queues, so the late requests are a lower bound."""
    span = max(1, math.ceil(cold_minutes))
    seen = max(need[:span])
    worst = None
    for m in range(span, len(need)):
        if need[m] > seen:
            minutes = range(m, min(len(need), m + span))
            late_held = sum(late[j][seen] for j in minutes)
            fewest = next((k for k in range(len(late[0]))
                           if sum(late[j][k] for j in minutes) <= budget), None)
            if worst is None or late_held > worst["late_held"]:
                worst = {"minute": m, "held": seen, "need": need[m], "late_held": late_held,
                         "fewest": fewest}
        seen = max(seen, need[m])
    return worst


def read_minutes(trace):
    """The trace's header, its rows, and its rows by minute from the first arrival (every
    minute up to the last, empty ones included)."""
    with open(trace, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]

    def at(stamp):
        return datetime.datetime.strptime(stamp[:26], "%Y-%m-%d %H:%M:%S.%f")

    start = at(rows[0][0])
    by_minute = {}
    for row in rows:
        by_minute.setdefault(int((at(row[0]) - start).total_seconds() // 60), []).append(row)
    return header, rows, [by_minute.get(m, []) for m in range(max(by_minute) + 1)]


def bounds(trace, strata, cold_starts, jobs=2):
    """The perfect-foresight plans of `trace` at each cold start (seconds): a dict with the
    static-peak count, the per-minute needs and, per cold start, both plans' replica-minutes
    and late requests (None where no plan exists)."""
    header, rows, minutes = read_minutes(trace)
    arrivals = [len(m) for m in minutes]
    with tempfile.TemporaryDirectory() as work:
        paths = []
        for index, minute in enumerate(minutes):
            paths.append(os.path.join(work, f"{index}.csv"))
            if minute:
                with open(paths[-1], "w", newline="") as f:
                    writer = csv.writer(f)
                    writer.writerow(header)
                    writer.writerows(minute)
        peak = replay(strata, trace)["replicas"]["initial"]
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            late = list(pool.map(lambda p, a: late_by_replicas(strata, p, a), paths, arrivals))
    most = max(len(row) for row in late) - 1
    late = padded(late, most)
    # A minute's need: the fewest replicas keeping 99 % of its requests in the SLO (0 when it is
    # empty; `most` when no count does).
    need = [next((k for k, n in enumerate(row) if n <= (1 - SLO_SHARE) * a), most)
            for row, a in zip(late, arrivals)]
    budget = math.floor((1 - SLO_SHARE) * len(rows))
    # Fewer replicas than a minute needs are ruled out (infinitely late) in the first plan.
    per_minute_late = [[n if k >= need[m] else math.inf for k, n in enumerate(row)]
                       for m, row in enumerate(late)]
    result = {"requests": len(rows), "minutes": len(minutes), "static_peak": peak,
              "every_minute_need": max(need), "need": need, "late": late, "budget": budget,
              "plans": {}}
    for cold in cold_starts:
        result["plans"][cold] = {
            "every minute": cheapest_plan(per_minute_late, len(rows), cold / 60),
            "whole trace": cheapest_plan(late, budget, cold / 60)}
        # The cheapest plan that, not knowing when the worst unforeseen rise comes, holds what
        # it takes from the start until it begins (perfect foresight everywhere else).
        rise = unforeseen_rise(need, late, budget, cold / 60)
        if rise and rise["fewest"] is not None and rise["fewest"] > rise["held"]:
            rise["plan"] = cheapest_plan(late, budget, cold / 60,
                                         [rise["fewest"]] * rise["minute"])
        result.setdefault("rises", {})[cold] = rise
    return result


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trace, strata = sys.argv[1], sys.argv[2]
    cold_starts = [float(c) for c in sys.argv[3:]] or [82.0, 294.0]
    r = bounds(trace, strata, cold_starts)
    count, peak, every_minute, need = r["minutes"], r["static_peak"], r["every_minute_need"], r["need"]
    print(f"per-minute need (99 % in the minute): {need}")
    print(f"late requests by replicas (0..{len(r['late'][0]) - 1}) per minute: {r['late']}")
    print(f"static-peak: {peak} replicas (busiest 60 s by arrivals); every minute at 99 % needs "
          f"{every_minute}; mean per-minute need {sum(need) / count:.2f} "
          f"({sum(need) / count / peak:.2f}x static-peak, no cold starts)")
    print(f"error budget over the trace: {r['budget']} late of {r['requests']}")
    for cold in cold_starts:
        for name, plan in r["plans"][cold].items():
            if plan is None:
                print(f"cold start {cold:.0f} s, 99 % {name}: no plan within the budget")
                continue
            cost, spent = plan
            print(f"cold start {cold:.0f} s, 99 % {name}: {cost / count / peak:.3f}x static-peak "
                  f"({peak}), {cost / count / every_minute:.3f}x {every_minute} always on, "
                  f"{cost / 60:.3f} GPU-hours; {spent} late "
                  f"({100 - 100 * spent / r['requests']:.2f} % in SLO)")
        rise = r["rises"][cold]
        if rise:
            print(f"cold start {cold:.0f} s, worst unforeseen rise: minute {rise['minute']} needs "
                  f"{rise['need']} (at most {rise['held']} before): {rise['late_held']} late in "
                  f"its first cold start with {rise['held']} held (budget {r['budget']}); "
                  f"{rise['fewest']} held keep it within the budget")
            whole = r["plans"][cold]["whole trace"]
            if rise.get("plan") and whole:
                print(f"  holding {rise['fewest']} from the start until then, foresight after: "
                      f"{rise['plan'][0] / 60:.3f} GPU-hours, "
                      f"{rise['plan'][0] / whole[0]:.2f}x the whole-trace plan")


if __name__ == "__main__":
    main()
