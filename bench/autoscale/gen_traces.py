#!/usr/bin/env python3
"""Seeded LLM request traces in the Azure 2023 format, for judging autoscalers on families.

Usage:
  bench/autoscale/gen_traces.py --out DIR [--grid] [--hours H] [--seed S]
  bench/autoscale/gen_traces.py --out DIR --family F --load L [--lengths M] [--hours H] [--seed S]

Writes CSVs with the public trace's columns (TIMESTAMP,ContextTokens,GeneratedTokens; the
timestamp as "YYYY-MM-DD HH:MM:SS.fffffff") that `strata sim autoscale --format azure` reads.
Python 3 standard library only; the same arguments give the same bytes. Write into a temporary
directory: generated traces do not belong in the repository.

Offered load is a multiple of a reference capacity: REF_REPLICAS replicas of the `8b-h100`
engine profile (30 ms prefill overhead + 250 us per prompt token), each busy prefilling 75 % of
the time (strata's busy-share target), for the trace's mean prompt: capacity =
REF_REPLICAS x 0.75 / (0.030 + 0.00025 x mean prompt) req/s. It ignores decode steps, so it is
a scale, not a promise that the reference fleet serves load 1.0 within the SLO. `--load` sets
the rate of the busiest stretch (an on spell, the diurnal crest, a flash crowd's top) to
load x capacity; between them the families are much quieter, and every family has idle minutes
(no request at all).

Families (arrivals are Poisson within each second at the rate below):
  onoff    on spells of 2-8 min at 0.6-1.0 x the top rate, off spells of 3-15 min that are idle
           (60 %) or a trickle of 4 % of the top rate; the on spells' rate moves every 10 s by
           a gamma factor (CV 0.35).
  diurnal  one day squeezed into the trace: a raised cosine to the power 1.5 from the crest at
           the start down to a night at mid-trace (its lowest ~15 % idle) and back, times a
           per-minute log-normal factor (sigma 0.15).
  flash    a base of 15 % of the top rate, 2-3 flash crowds per hour (a rise over 5-30 s to
           0.7-1.0 x the top rate, an exponential fall with a 1-5 min time constant) and one or
           two idle stretches of 5-15 min per two hours, anywhere (one at the very end is cut
           off with the trace, which ends at its last request).
Prompt and output lengths are log-normal, clipped to [16, 6000] and [1, 1500] tokens (every
prompt fits a 2 s TTFT on an idle replica):
  short    prompt median 300 (sigma 0.8), output median 60 (sigma 0.8)
  conv     prompt median 1000 (sigma 0.75), output median 150 (sigma 0.8); near the public
           trace (median 1,020 and 129, p99 4,142 and 601)
  long     prompt median 2000 (sigma 0.5), output median 350 (sigma 0.7)

`--grid` writes the small grid bench/autoscale/grid.py judges on: every family at a low and a
high load with the length mixes rotated (6 traces; 2 h each by default).
"""
import argparse
import datetime
import math
import os
import random
import sys

REF_REPLICAS = 4
PREFILL_OVERHEAD_S = 0.030
PREFILL_PER_TOKEN_S = 0.00025
BUSY_SHARE = 0.75
START = datetime.datetime(2023, 11, 16, 0, 0, 0)

LENGTHS = {
    "short": ((300, 0.8), (60, 0.8)),
    "conv": ((1000, 0.75), (150, 0.8)),
    "long": ((2000, 0.5), (350, 0.7)),
}
# 6,000 prompt tokens prefill in 1.53 s on an idle 8b-h100 replica: every request can meet a 2 s
# TTFT objective, so a miss is the autoscaler's (the public trace's p99.9 is 6,212).
PROMPT_RANGE = (16, 6000)
OUTPUT_RANGE = (1, 1500)

# (family, load, lengths): low and high loads, every length mix used twice.
GRID = [
    ("onoff", 0.3, "short"),
    ("onoff", 1.2, "long"),
    ("diurnal", 0.5, "long"),
    ("diurnal", 1.5, "conv"),
    ("flash", 0.2, "conv"),
    ("flash", 1.0, "short"),
]


def reference_capacity(lengths):
    """Requests/s the reference fleet serves at the busy-share target for this length mix."""
    (median, sigma), _ = LENGTHS[lengths]
    mean_prompt = median * math.exp(sigma * sigma / 2)
    return REF_REPLICAS * BUSY_SHARE / (PREFILL_OVERHEAD_S + PREFILL_PER_TOKEN_S * mean_prompt)


def onoff_rates(rng, seconds, top):
    rates = []
    on = True
    while len(rates) < seconds:
        if on:
            level = top * rng.uniform(0.6, 1.0)
            for _ in range(int(rng.uniform(2, 8) * 60) // 10):
                factor = rng.gammavariate(8, 1 / 8)
                rates.extend([level * factor] * 10)
        else:
            level = 0.0 if rng.random() < 0.6 else 0.04 * top
            rates.extend([level] * int(rng.uniform(3, 15) * 60))
        on = not on
    return rates[:seconds]


def diurnal_rates(rng, seconds, top):
    rates = []
    factor = 1.0
    for second in range(seconds):
        if second % 60 == 0:
            factor = rng.lognormvariate(0, 0.15)
        day = 0.5 + 0.5 * math.cos(2 * math.pi * second / seconds)
        # The night: the lowest part of the day (shape below 0.08) is idle.
        shape = max(0.0, (day ** 1.5 - 0.08) / 0.92)
        rates.append(top * shape * factor)
    return rates


def flash_rates(rng, seconds, top):
    rates = [0.15 * top] * seconds
    hours = seconds / 3600
    for _ in range(max(1, round(hours * rng.uniform(2, 3)))):
        onset = rng.uniform(0, seconds)
        rise = rng.uniform(5, 30)
        fall = rng.uniform(60, 300)
        height = top * rng.uniform(0.7, 1.0) - 0.15 * top
        for second in range(int(onset), min(seconds, int(onset + rise + 6 * fall))):
            t = second - onset
            envelope = t / rise if t < rise else math.exp(-(t - rise) / fall)
            rates[second] += height * envelope
    for _ in range(max(1, round(hours / 2 * rng.uniform(1, 2)))):
        begin = int(rng.uniform(0, seconds))
        for second in range(begin, min(seconds, begin + int(rng.uniform(5, 15) * 60))):
            rates[second] = 0.0
    return [min(rate, top) for rate in rates]


FAMILIES = {"onoff": onoff_rates, "diurnal": diurnal_rates, "flash": flash_rates}


def poisson(rng, mean):
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    limit, count, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


def clipped_lognormal(rng, median, sigma, bounds):
    return int(min(bounds[1], max(bounds[0], round(rng.lognormvariate(math.log(median), sigma)))))


def generate(family, load, lengths, hours, seed):
    """The trace's rows (timestamp string, prompt tokens, output tokens), in time order."""
    rng = random.Random(f"{seed}/{family}/{load}/{lengths}/{hours}")
    seconds = int(hours * 3600)
    top = load * reference_capacity(lengths)
    (prompt_median, prompt_sigma), (output_median, output_sigma) = LENGTHS[lengths]
    rows = []
    for second, rate in enumerate(FAMILIES[family](rng, seconds, top)):
        stamps = sorted(second + rng.random() for _ in range(poisson(rng, rate)))
        for stamp in stamps:
            at = START + datetime.timedelta(microseconds=round(stamp * 1e6))
            rows.append((at.strftime("%Y-%m-%d %H:%M:%S.%f") + "0",
                         clipped_lognormal(rng, prompt_median, prompt_sigma, PROMPT_RANGE),
                         clipped_lognormal(rng, output_median, output_sigma, OUTPUT_RANGE)))
    return rows


def trace_name(family, load, lengths, seed):
    return f"{family}-load{load:g}-{lengths}-seed{seed}.csv"


def write(path, rows):
    with open(path, "w", newline="") as f:
        f.write("TIMESTAMP,ContextTokens,GeneratedTokens\n")
        for stamp, prompt, output in rows:
            f.write(f"{stamp},{prompt},{output}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory to write into (not the repo)")
    parser.add_argument("--grid", action="store_true", help="write the grid of grid.py")
    parser.add_argument("--family", choices=sorted(FAMILIES))
    parser.add_argument("--load", type=float, help="top rate over the reference capacity")
    parser.add_argument("--lengths", choices=sorted(LENGTHS), default="conv")
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.grid == (args.family is not None):
        parser.error("give either --grid or --family with --load")
    if args.family and not (args.load and args.load > 0):
        parser.error("--load: must be > 0")
    cells = GRID if args.grid else [(args.family, args.load, args.lengths)]
    os.makedirs(args.out, exist_ok=True)
    for family, load, lengths in cells:
        rows = generate(family, load, lengths, args.hours, args.seed)
        if not rows:
            sys.exit(f"{family} at load {load}: no requests generated")
        path = os.path.join(args.out, trace_name(family, load, lengths, args.seed))
        write(path, rows)
        print(path)


if __name__ == "__main__":
    main()
