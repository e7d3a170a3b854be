#!/usr/bin/env python3
"""Seeded LLM request traces in the Mooncake format, for judging routing policies on families.

Usage:
  bench/serve/gen_traces.py --out DIR --grid [--minutes M] [--seed S]
  bench/serve/gen_traces.py --out DIR --arrivals A --reuse R --sharing H --lengths L --load X
                            [--replicas N] [--minutes M] [--seed S]

Writes JSON-lines traces with the Mooncake conversation trace's fields ({"timestamp": ms,
"input_length", "output_length", "hash_ids"}, one id per 512-token block) that `strata sim serve
--format mooncake` replays (with --replicas N and --rate-scale 1). Python 3 standard library only;
the same arguments give the same bytes. Write into a temporary directory: generated traces do not
belong in the repository, and no public trace is read.

Prompts are built from blocks as in Mooncake's trace: a block id names 512 tokens of content, a
prompt lists the ids of its blocks, and equal ids at equal positions after equal ids are a shared
prefix. A block is given an id the first time a prompt holds all of it; a prompt's partial last
block gets an id of its own, as Mooncake's hashes of partial blocks differ from the full block's.
Prefix reuse (the "ideal" figure `strata sim serve` prints: the share of prompt blocks an earlier
request's prompt already held, with the same blocks before them) comes from one of two kinds of
sharing:
  conv     multi-turn conversations (Mooncake's): a turn's prompt is the conversation so far
           (earlier questions and answers) plus a new question. Each arrival continues a
           conversation with probability q (a random one whose user has finished thinking, an
           exponential 2-60 s after its last turn, or the one closest to it when none has) and
           starts a new one otherwise. A conversation
           ends when its prompt would pass MAX_PROMPT tokens.
  system   single-turn requests behind a shared prefix (system prompts, documents: the Inference
           Extension's prefix workloads): SYSTEM_PROMPTS prefixes, drawn with Zipf(1) popularity,
           of a mean length S (0.5-1.5 x S), then a new question.
The knob (q or S) is found by bisection for the requested reuse on CALIBRATION requests of the
same sharing and lengths, so every arrival family and load of a cell has the same knob; the
written trace's own reuse is printed and stays within a few points of the target.

Length mixes (tokens of the new question per prompt, and of the output; log-normal, clipped to
QUESTION_RANGE and OUTPUT_RANGE):
  chat     question median 250 (sigma 0.9), output median 200 (sigma 0.8)
  rag      question median 1500 (sigma 0.6), output median 120 (sigma 0.7): prefill-heavy
  decode   question median 400 (sigma 0.8), output median 700 (sigma 0.6): decode-heavy

Offered load is a multiple of the capacity of `--replicas` replicas of the `8b-h100` engine
profile for this trace's mix: a request costs an engine W = 30 ms (prefill overhead) + 250 us x
its prompt tokens an ideal prefix cache would not hold + DECODE_S_PER_TOKEN (0.5 ms: a decode step
of the profile at a batch of 32, 12 ms x 1.31, shared by its 32 sequences) x its output tokens,
with the means over the calibration requests; capacity = replicas / W req/s. It assumes an ideal
cache and a perfect balance, so it is a scale: no router serves load 1.0 within the SLO, and the
prefix caches of replicas that each hold part of the working set lose more than the ideal.
`--load` sets the rate of the busy stretches (Poisson's only rate, an on spell, the diurnal crest,
a flash crowd's top) to load x capacity; the families are quieter between them.

Arrival families (Poisson within each second at the rate below):
  poisson  the top rate throughout.
  onoff    on spells of 20-60 s at 0.8-1.0 x the top rate, whose rate moves every 5 s by a gamma
           factor (CV 0.35), and off spells of 20-90 s at 10 % of it.
  diurnal  a day squeezed into the trace: a raised cosine from the crest at the start down to a
           night at 10 % of it at mid-trace and back, times a log-normal factor per 10 s (sigma
           0.15).
  flash    a base of 25 % of the top rate and a flash crowd every 3-5 min (a rise over 2-10 s to
           0.8-1.0 x the top rate, an exponential fall with a 20-60 s time constant).

`--grid` writes the grid bench/serve/grid.py judges on (GRID x LOADS: 12 cells at 6 loads).
"""
import argparse
import bisect
import heapq
import json
import math
import os
import random
import sys

BLOCK_TOKENS = 512
PREFILL_OVERHEAD_S = 0.030
PREFILL_PER_TOKEN_S = 0.00025
DECODE_S_PER_TOKEN = 0.0005
MAX_PROMPT = 32000
QUESTION_RANGE = (16, 6000)
OUTPUT_RANGE = (1, 2000)
SYSTEM_PROMPTS = 16
CALIBRATION = 4000

LENGTHS = {
    "chat": ((250, 0.9), (200, 0.8)),
    "rag": ((1500, 0.6), (120, 0.7)),
    "decode": ((400, 0.8), (700, 0.6)),
}
SHARING = ("conv", "system")
LOADS = [0.2, 0.5, 0.8, 1.0, 1.2, 1.5]
# (arrivals, reuse, sharing, lengths, replicas): every arrival family, reuse from 0 to 80 %, both
# kinds of sharing, every length mix; 8 replicas mostly, 4 and 12 for the balance-only cells.
GRID = [
    ("poisson", 0.0, "conv", "decode", 4),
    ("onoff", 0.0, "conv", "chat", 8),
    ("flash", 0.0, "conv", "rag", 12),
    ("poisson", 0.2, "system", "rag", 8),
    ("diurnal", 0.2, "conv", "chat", 8),
    ("onoff", 0.4, "conv", "decode", 8),
    ("flash", 0.4, "system", "chat", 8),
    ("poisson", 0.6, "conv", "rag", 8),
    ("diurnal", 0.6, "system", "decode", 8),
    ("onoff", 0.8, "system", "rag", 8),
    ("flash", 0.6, "conv", "chat", 8),
    ("poisson", 0.8, "conv", "chat", 8),
]


def clipped_lognormal(rng, median, sigma, bounds):
    return int(min(bounds[1], max(bounds[0], round(rng.lognormvariate(math.log(median), sigma)))))


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


def poisson_rates(rng, seconds, top):
    return [top] * seconds


def onoff_rates(rng, seconds, top):
    rates = []
    on = rng.random() < 0.5
    while len(rates) < seconds:
        if on:
            level = top * rng.uniform(0.8, 1.0)
            for _ in range(int(rng.uniform(20, 60)) // 5):
                rates.extend([min(top, level * rng.gammavariate(8, 1 / 8))] * 5)
        else:
            rates.extend([0.1 * top] * int(rng.uniform(20, 90)))
        on = not on
    return rates[:seconds]


def diurnal_rates(rng, seconds, top):
    rates = []
    factor = 1.0
    for second in range(seconds):
        if second % 10 == 0:
            factor = rng.lognormvariate(0, 0.15)
        day = 0.5 + 0.5 * math.cos(2 * math.pi * second / seconds)
        rates.append(min(top, top * (0.1 + 0.9 * day) * factor))
    return rates


def flash_rates(rng, seconds, top):
    rates = [0.25 * top] * seconds
    onset = rng.uniform(0, 120)
    while onset < seconds:
        rise, fall = rng.uniform(2, 10), rng.uniform(20, 60)
        height = top * rng.uniform(0.8, 1.0) - 0.25 * top
        for second in range(int(onset), min(seconds, int(onset + rise + 6 * fall))):
            t = second - onset
            rates[second] += height * (t / rise if t < rise else math.exp(-(t - rise) / fall))
        onset += rng.uniform(180, 300)
    return [min(rate, top) for rate in rates]


ARRIVALS = {"poisson": poisson_rates, "onoff": onoff_rates, "diurnal": diurnal_rates,
            "flash": flash_rates}


class BlockIds:
    """Hands out block ids: the next unused integer."""

    def __init__(self):
        self.next = 0

    def take(self):
        self.next += 1
        return self.next - 1


def prompt_blocks(ids, stream, stream_tokens, question):
    """The hash ids of a prompt holding `stream_tokens` tokens of a token stream whose full blocks
    are `stream` (ids, extended here as the prompt fills new blocks) and then a new question."""
    tokens = stream_tokens + question
    while len(stream) < tokens // BLOCK_TOKENS:
        stream.append(ids.take())
    blocks = list(stream[:tokens // BLOCK_TOKENS])
    if tokens % BLOCK_TOKENS:
        blocks.append(ids.take())
    return tokens, blocks


class Conversations:
    """Multi-turn users: each arrival continues a ready conversation with probability q."""

    def __init__(self, rng, ids, lengths, q):
        self.rng, self.ids, self.lengths, self.q = rng, ids, lengths, q
        self.ready = []      # conversations whose user has finished thinking
        self.thinking = []   # (ready at, serial, conversation), a heap by time
        self.serial = 0

    def request(self, now):
        while self.thinking and self.thinking[0][0] <= now:
            self.ready.append(heapq.heappop(self.thinking)[2])
        (q_median, q_sigma), (o_median, o_sigma) = LENGTHS[self.lengths]
        question = clipped_lognormal(self.rng, q_median, q_sigma, QUESTION_RANGE)
        output = clipped_lognormal(self.rng, o_median, o_sigma, OUTPUT_RANGE)
        conversation = None
        continues = self.rng.random() < self.q
        if continues and not self.ready and self.thinking:
            # Nobody has finished thinking: the user closest to it is quick this time, so that
            # the reuse does not depend on the arrival rate.
            self.ready.append(heapq.heappop(self.thinking)[2])
        if continues and self.ready:
            at = self.rng.randrange(len(self.ready))
            self.ready[at], self.ready[-1] = self.ready[-1], self.ready[at]
            conversation = self.ready.pop()
            if conversation["tokens"] + question > MAX_PROMPT:
                conversation = None
        if conversation is None:
            conversation = {"tokens": 0, "stream": []}
        tokens, blocks = prompt_blocks(self.ids, conversation["stream"], conversation["tokens"],
                                       question)
        conversation["tokens"] = tokens + output
        self.serial += 1
        think = min(60.0, 2.0 + self.rng.expovariate(1 / 15))
        heapq.heappush(self.thinking, (now + think, self.serial, conversation))
        return tokens, output, blocks


class SystemPrompts:
    """Single-turn requests behind one of SYSTEM_PROMPTS shared prefixes of mean length S."""

    def __init__(self, rng, ids, lengths, mean_tokens):
        self.rng, self.ids, self.lengths = rng, ids, lengths
        # Lengths from 0.5 to 1.5 x the mean, in an order unrelated to popularity, the same in
        # every trace of a cell.
        self.prefixes = [{"tokens": round(mean_tokens * (0.5 + (rank * 7 % SYSTEM_PROMPTS) /
                                                         (SYSTEM_PROMPTS - 1))), "stream": []}
                         for rank in range(SYSTEM_PROMPTS)]
        weights = [1 / (rank + 1) for rank in range(SYSTEM_PROMPTS)]
        self.cumulative = [sum(weights[:i + 1]) for i in range(SYSTEM_PROMPTS)]

    def request(self, now):
        (q_median, q_sigma), (o_median, o_sigma) = LENGTHS[self.lengths]
        question = clipped_lognormal(self.rng, q_median, q_sigma, QUESTION_RANGE)
        output = clipped_lognormal(self.rng, o_median, o_sigma, OUTPUT_RANGE)
        pick = self.rng.random() * self.cumulative[-1]
        prefix = self.prefixes[bisect.bisect_left(self.cumulative, pick)]
        # The shared part is the prefix's full blocks: the block where it meets the question is
        # this request's own.
        shared = prefix["stream"]
        while len(shared) < prefix["tokens"] // BLOCK_TOKENS:
            shared.append(self.ids.take())
        tokens = prefix["tokens"] + question
        blocks = shared + [self.ids.take()
                           for _ in range(math.ceil(tokens / BLOCK_TOKENS) - len(shared))]
        return tokens, output, blocks


def make_source(rng, sharing, lengths, knob):
    ids = BlockIds()
    if sharing == "conv":
        return Conversations(rng, ids, lengths, knob)
    return SystemPrompts(rng, ids, lengths, knob)


def ideal_reuse(requests):
    """(share of prompt blocks an earlier prompt held with the same blocks before them, mean
    prompt tokens an ideal cache does not hold): `strata sim serve`'s ideal reuse."""
    seen = set()
    blocks = reused = 0
    uncached = 0
    for tokens, _, ids in requests:
        chain = ()
        for position, block in enumerate(ids):
            chain = (chain, block)
            blocks += 1
            if chain in seen:
                reused += 1
            else:
                seen.add(chain)
                uncached += min(BLOCK_TOKENS, tokens - position * BLOCK_TOKENS)
    return (reused / blocks if blocks else 0.0), uncached / max(1, len(requests))


def calibration_sample(sharing, lengths, knob, seed):
    rng = random.Random(f"calibrate/{seed}/{sharing}/{lengths}/{knob!r}")
    source = make_source(rng, sharing, lengths, knob)
    # Arrivals of a busy Poisson stream: 4 per second, so that conversations find ready users.
    return [source.request(i / 4) for i in range(CALIBRATION)]


_KNOBS = {}


def knob_for(sharing, lengths, reuse, seed):
    """The continuation probability (conv) or mean shared-prefix tokens (system) that gives
    `reuse` on the calibration requests, by bisection; 0 for no reuse."""
    key = (sharing, lengths, reuse, seed)
    if key in _KNOBS:
        return _KNOBS[key]
    knob = 0.0
    if reuse > 0:
        low, high = (0.0, 0.995) if sharing == "conv" else (0.0, 40000.0)
        best = None
        for _ in range(14):
            middle = (low + high) / 2
            got = ideal_reuse(calibration_sample(sharing, lengths, middle, seed))[0]
            if best is None or abs(got - reuse) < abs(best[1] - reuse):
                best = (middle, got)
            if got < reuse:
                low = middle
            else:
                high = middle
        knob = best[0]
    _KNOBS[key] = knob
    return knob


def capacity(sharing, lengths, reuse, replicas, seed):
    """Requests/s `replicas` replicas serve at 100 % busy with an ideal cache (module doc)."""
    sample = calibration_sample(sharing, lengths, knob_for(sharing, lengths, reuse, seed), seed)
    _, uncached = ideal_reuse(sample)
    mean_output = sum(output for _, output, _ in sample) / len(sample)
    work = PREFILL_OVERHEAD_S + PREFILL_PER_TOKEN_S * uncached + DECODE_S_PER_TOKEN * mean_output
    return replicas / work


def generate(arrivals, reuse, sharing, lengths, load, replicas, minutes, seed):
    """The trace's rows (ms timestamp, prompt tokens, output tokens, hash ids), in time order."""
    name = f"{seed}/{arrivals}/{reuse}/{sharing}/{lengths}/{load}/{replicas}/{minutes}"
    rng = random.Random(name)
    seconds = int(minutes * 60)
    top = load * capacity(sharing, lengths, reuse, replicas, seed)
    source = make_source(random.Random("requests/" + name), sharing, lengths,
                         knob_for(sharing, lengths, reuse, seed))
    rows = []
    for second, rate in enumerate(ARRIVALS[arrivals](rng, seconds, top)):
        for stamp in sorted(second + rng.random() for _ in range(poisson(rng, rate))):
            tokens, output, blocks = source.request(stamp)
            rows.append((round(stamp * 1000), tokens, output, blocks))
    return rows


def trace_name(arrivals, reuse, sharing, lengths, load, replicas, seed):
    return (f"{arrivals}-reuse{round(reuse * 100):02d}-{sharing}-{lengths}-r{replicas}"
            f"-load{load:g}-seed{seed}.jsonl")


def write(path, rows):
    with open(path, "w") as f:
        for stamp, tokens, output, blocks in rows:
            f.write(json.dumps({"timestamp": stamp, "input_length": tokens,
                                "output_length": output, "hash_ids": blocks}) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory to write into (not the repo)")
    parser.add_argument("--grid", action="store_true", help="write the grid of grid.py")
    parser.add_argument("--arrivals", choices=sorted(ARRIVALS))
    parser.add_argument("--reuse", type=float, default=0.0, help="ideal prefix reuse, 0-0.8")
    parser.add_argument("--sharing", choices=SHARING, default="conv")
    parser.add_argument("--lengths", choices=sorted(LENGTHS), default="chat")
    parser.add_argument("--load", type=float, help="busy-stretch rate over the capacity")
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.grid == (args.arrivals is not None):
        parser.error("give either --grid or --arrivals with --load")
    if args.arrivals and not (args.load and args.load > 0):
        parser.error("--load: must be > 0")
    if not 0 <= args.reuse <= 0.8:
        parser.error("--reuse: must be in [0, 0.8]")
    if args.replicas < 1:
        parser.error("--replicas: must be >= 1")
    cells = ([cell[:4] + (load, cell[4]) for cell in GRID for load in LOADS] if args.grid else
             [(args.arrivals, args.reuse, args.sharing, args.lengths, args.load, args.replicas)])
    os.makedirs(args.out, exist_ok=True)
    for arrivals, reuse, sharing, lengths, load, replicas in cells:
        rows = generate(arrivals, reuse, sharing, lengths, load, replicas, args.minutes, args.seed)
        if not rows:
            sys.exit(f"{arrivals} at load {load}: no requests generated")
        path = os.path.join(args.out, trace_name(arrivals, reuse, sharing, lengths, load,
                                                 replicas, args.seed))
        write(path, rows)
        got = ideal_reuse([(tokens, output, blocks) for _, tokens, output, blocks in rows])[0]
        print(f"{path}: {len(rows)} requests, ideal reuse {got * 100:.1f} %")


if __name__ == "__main__":
    main()
