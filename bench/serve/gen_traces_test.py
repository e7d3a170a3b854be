#!/usr/bin/env python3
"""Tests of gen_traces.py.

Usage: python3 bench/serve/gen_traces_test.py
"""
import json
import math
import os
import statistics
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_traces  # noqa: E402


def per_ten_seconds(rows):
    counts = [0] * (rows[-1][0] // 10000 + 1)
    for stamp, _, _, _ in rows:
        counts[stamp // 10000] += 1
    return counts


def reuse_of(rows):
    return gen_traces.ideal_reuse([(tokens, output, ids) for _, tokens, output, ids in rows])[0]


class GenTracesTest(unittest.TestCase):
    def test_same_arguments_give_the_same_trace_and_another_seed_another(self):
        first = gen_traces.generate("onoff", 0.4, "conv", "chat", 0.5, 4, 2, seed=7)
        self.assertEqual(first, gen_traces.generate("onoff", 0.4, "conv", "chat", 0.5, 4, 2,
                                                     seed=7))
        self.assertNotEqual(first, gen_traces.generate("onoff", 0.4, "conv", "chat", 0.5, 4, 2,
                                                        seed=8))

    def test_every_grid_cell_reaches_its_reuse(self):
        for arrivals, reuse, sharing, lengths, replicas in gen_traces.GRID:
            rows = gen_traces.generate(arrivals, reuse, sharing, lengths, 0.2, replicas, 10, seed=1)
            self.assertAlmostEqual(reuse_of(rows), reuse, delta=0.05,
                                   msg=f"{arrivals} {sharing} {lengths} at {reuse}")

    def test_a_conversation_turn_extends_an_earlier_prompt(self):
        rows = gen_traces.generate("poisson", 0.6, "conv", "chat", 0.5, 4, 3, seed=2)
        prompts = set()
        continued = 0
        for _, tokens, _, ids in rows:
            full = tokens // gen_traces.BLOCK_TOKENS
            # The full blocks of an earlier prompt, then new blocks: the history it extends.
            if any(tuple(ids[:n]) in prompts for n in range(1, full + 1)):
                continued += 1
            prompts.update(tuple(ids[:n]) for n in range(1, full + 1))
        self.assertGreater(continued / len(rows), 0.3)
        self.assertEqual(reuse_of(gen_traces.generate("poisson", 0.0, "conv", "chat", 0.5, 4, 3,
                                                      seed=2)), 0.0)

    def test_load_and_replicas_scale_the_rate(self):
        def count(load, replicas):
            return len(gen_traces.generate("poisson", 0.2, "system", "rag", load, replicas, 3,
                                           seed=3))
        self.assertAlmostEqual(count(1.5, 8) / count(0.2, 8), 7.5, delta=0.8)
        self.assertAlmostEqual(count(1.0, 8) / count(1.0, 4), 2.0, delta=0.2)
        # Poisson at load 1 offers the capacity the module doc defines.
        rate = gen_traces.capacity("system", "rag", 0.2, 8, 3)
        self.assertAlmostEqual(count(1.0, 8) / (180 * rate), 1.0, delta=0.05)

    def test_bursty_families_are_burstier_than_poisson(self):
        def cv(arrivals):
            counts = per_ten_seconds(gen_traces.generate(arrivals, 0.0, "conv", "chat", 0.5, 8, 10,
                                                         seed=4))
            return statistics.pstdev(counts) / statistics.mean(counts)
        base = cv("poisson")
        for arrivals in ("onoff", "diurnal", "flash"):
            self.assertGreater(cv(arrivals), 2 * base, arrivals)

    def test_rows_replay_as_the_mooncake_trace(self):
        rows = gen_traces.generate("flash", 0.4, "system", "decode", 0.5, 4, 2, seed=5)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "t.jsonl")
            gen_traces.write(path, rows)
            with open(path) as f:
                lines = [json.loads(line) for line in f]
        self.assertEqual(len(lines), len(rows))
        stamps = [line["timestamp"] for line in lines]
        self.assertEqual(stamps, sorted(stamps))
        for line in lines:
            self.assertEqual(sorted(line), ["hash_ids", "input_length", "output_length",
                                            "timestamp"])
            self.assertEqual(len(line["hash_ids"]),
                             math.ceil(line["input_length"] / gen_traces.BLOCK_TOKENS))
            self.assertTrue(all(isinstance(i, int) and i >= 0 for i in line["hash_ids"]))
            self.assertTrue(gen_traces.OUTPUT_RANGE[0] <= line["output_length"] <=
                            gen_traces.OUTPUT_RANGE[1])
            self.assertLessEqual(line["input_length"], gen_traces.MAX_PROMPT)


if __name__ == "__main__":
    unittest.main()
