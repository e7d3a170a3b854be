#!/usr/bin/env python3
"""Tests of gen_traces.py.

Usage: python3 bench/autoscale/gen_traces_test.py
"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_traces  # noqa: E402


def arrivals_by_minute(path):
    """Requests per minute from the first arrival, empty minutes included."""
    with open(path) as f:
        stamps = [line.split(",")[0] for line in f.readlines()[1:]]
    seconds = [int(s[11:13]) * 3600 + int(s[14:16]) * 60 + float(s[17:]) for s in stamps]
    counts = [0] * (int((seconds[-1] - seconds[0]) // 60) + 1)
    for second in seconds:
        counts[int((second - seconds[0]) // 60)] += 1
    return counts


class GenTracesTest(unittest.TestCase):
    def test_same_arguments_give_the_same_trace_and_another_seed_another(self):
        first = gen_traces.generate("onoff", 0.5, "conv", 0.5, seed=7)
        self.assertEqual(first, gen_traces.generate("onoff", 0.5, "conv", 0.5, seed=7))
        self.assertNotEqual(first, gen_traces.generate("onoff", 0.5, "conv", 0.5, seed=8))

    def test_every_family_has_idle_minutes_and_reaches_its_top_rate(self):
        with tempfile.TemporaryDirectory() as work:
            for family in gen_traces.FAMILIES:
                path = os.path.join(work, f"{family}.csv")
                gen_traces.write(path, gen_traces.generate(family, 1.0, "conv", 2.0, seed=1))
                counts = arrivals_by_minute(path)
                top = 60 * gen_traces.reference_capacity("conv")
                self.assertIn(0, counts, family)
                self.assertGreater(max(counts), 0.5 * top, family)
                self.assertLess(max(counts), 1.3 * top, family)

    def test_load_scales_the_rate(self):
        low = len(gen_traces.generate("diurnal", 0.2, "short", 1.0, seed=3))
        high = len(gen_traces.generate("diurnal", 1.5, "short", 1.0, seed=3))
        self.assertAlmostEqual(high / low, 7.5, delta=1.0)

    def test_rows_are_in_the_public_traces_format_and_bounds(self):
        rows = gen_traces.generate("flash", 0.5, "long", 0.5, seed=2)
        self.assertEqual(rows, sorted(rows))
        for stamp, prompt, output in rows:
            self.assertRegex(stamp, r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{7}$")
            self.assertTrue(gen_traces.PROMPT_RANGE[0] <= prompt <= gen_traces.PROMPT_RANGE[1])
            self.assertTrue(gen_traces.OUTPUT_RANGE[0] <= output <= gen_traces.OUTPUT_RANGE[1])


if __name__ == "__main__":
    unittest.main()
