#!/usr/bin/env python3
"""A lower bound for autoscaling the Azure conversation trace: perfect foresight, 99 % per minute.

Usage: bench/autoscale/foresight.py TRACE.csv STRATA_BINARY [COLD_START_SECONDS ...]

Splits the trace into its minutes (in a temporary directory), asks `strata sim autoscale
--policy static-peak` for the fewest always-on replicas that keep each minute alone at >= 99 %
TTFT <= 2 s (the same replay and picker the benchmark uses), then, for each cold start, holds
per minute what that minute needs, keeps a replica through a dip when it is needed again within a
cold start, and pays each added replica a cold start ahead. Prints the replica-minutes as a
ratio to static-peak's (the peak minute's need, always on). Every minute meeting 99 % is
stricter than the benchmark's 99 % over the whole trace, so this is a bound only in that sense.
"""
import csv
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile


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

    def replicas_for(path):
        out = subprocess.run([strata, "sim", "autoscale", "--trace", path, "--format", "azure",
                              "--policy", "static-peak", "-o", "json"],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)["replicas"]["initial"]

    with tempfile.TemporaryDirectory() as work:
        need = []
        for minute in range(max(minutes) + 1):
            path = os.path.join(work, f"{minute}.csv")
            with open(path, "w", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(header)
                writer.writerows(minutes.get(minute, []))
            need.append(replicas_for(path) if minutes.get(minute) else 0)
        peak = replicas_for(trace)
    print(f"per-minute need: {need}")
    print(f"static-peak: {peak} replicas; mean per-minute need {sum(need) / len(need):.2f} "
          f"({sum(need) / len(need) / peak:.2f}x, no cold starts)")
    for cold in cold_starts:
        ahead = math.ceil(cold / 60)
        held = []
        for m, n in enumerate(need):
            previous = held[-1] if held else n
            soon = max(need[m:m + 1 + ahead])
            held.append(max(n, min(previous, soon)))
        added = sum(max(0, b - a) for a, b in zip(held, held[1:]))
        paid = sum(held) + added * cold / 60
        print(f"cold start {cold:.0f} s: {paid / len(need) / peak:.2f}x static-peak "
              f"({added} replicas added)")


if __name__ == "__main__":
    main()
