#!/usr/bin/env python3
"""Tests of gen_variants.py, on a small made-up default trace (no shared data needed).

Usage: python3 bench/openb/gen_variants_test.py
"""
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_variants  # noqa: E402

NODES = [{"cpu_milli": 96000, "memory_mib": 786432, "gpu": 8, "model": "G2"}] * 20 + [
    {"cpu_milli": 64000, "memory_mib": 262144, "gpu": 4, "model": "V100M16"}] * 5 + [
    {"cpu_milli": 64000, "memory_mib": 262144, "gpu": 4, "model": "V100M32"}] * 5 + [
    {"cpu_milli": 32000, "memory_mib": 131072, "gpu": 2, "model": "T4"}] * 5


def pod(cpu, gpus, milli):
    return {"name": "", "cpu_milli": cpu, "memory_mib": 4096, "num_gpu": gpus,
            "gpu_milli": milli, "gpu_spec": "", "qos": "LS", "pod_phase": "Running",
            "creation_time": "0", "deletion_time": "1", "scheduled_time": "0"}


def default_trace():
    rng = random.Random(3)
    pods = []
    for i in range(400):
        kind = rng.random()
        if kind < 0.15:
            pods.append(pod(rng.choice([4000, 16000]), 0, 0))
        elif kind < 0.55:
            pods.append(pod(6000, 1, rng.choice([250, 460, 500])))
        elif kind < 0.95:
            pods.append(pod(12000, 1, 1000))
        else:
            pods.append(pod(48000, rng.choice([2, 4, 8]), 1000))
    for i, p in enumerate(pods):
        p["name"] = f"openb-pod-{i:04d}"
    return pods


class GenVariantsTest(unittest.TestCase):
    def test_same_seed_same_list_and_another_seed_another(self):
        base = default_trace()
        first = gen_variants.generate(base, NODES, 7, gpu_share=0.6, gpu_spec=0.2)
        self.assertEqual(first, gen_variants.generate(base, NODES, 7, gpu_share=0.6, gpu_spec=0.2))
        self.assertNotEqual(first,
                            gen_variants.generate(base, NODES, 8, gpu_share=0.6, gpu_spec=0.2))

    def test_gpu_share_reaches_its_target_and_keeps_pod_counts(self):
        base = default_trace()
        for target in (0.2, 0.5, 0.8):
            pods = gen_variants.generate(base, NODES, 1, gpu_share=target)
            self.assertAlmostEqual(gen_variants.share_of(pods, gen_variants.is_sharing), target,
                                   delta=0.02)
            self.assertEqual(len(pods), len(base))
            self.assertEqual(sum(1 for p in pods if not gen_variants.is_gpu(p)),
                             sum(1 for p in base if not gen_variants.is_gpu(p)))

    def test_multi_gpu_appends_copies_until_the_share_is_reached(self):
        base = default_trace()
        pods = gen_variants.generate(base, NODES, 1, multi_gpu=0.5)
        self.assertGreaterEqual(gen_variants.share_of(pods, gen_variants.is_multi), 0.5)
        self.assertGreater(len(pods), len(base))
        shape = lambda p: (p["cpu_milli"], p["num_gpu"], p["gpu_milli"])  # noqa: E731
        self.assertEqual([shape(p) for p in pods[:len(base)]], [shape(p) for p in base])
        with self.assertRaises(ValueError):
            gen_variants.generate(base, NODES, 1, multi_gpu=0.0)

    def test_cpu_only_scales_the_cpu_only_demand_and_keeps_gpu_pods(self):
        base = default_trace()
        cpu = lambda pods: sum(p["cpu_milli"] for p in pods if p["num_gpu"] == 0)  # noqa: E731
        pods = gen_variants.generate(base, NODES, 1, cpu_only=2.5)
        self.assertGreaterEqual(cpu(pods), 2.5 * cpu(base))
        self.assertLess(cpu(pods), 2.5 * cpu(base) + 16000)
        self.assertEqual(sum(1 for p in pods if p["num_gpu"] > 0),
                         sum(1 for p in base if p["num_gpu"] > 0))

    def test_gpu_spec_constrains_gpu_pods_only_to_models_that_can_hold_them(self):
        base = default_trace()
        pods = gen_variants.generate(base, NODES, 1, gpu_spec=0.3)
        gpu_pods = [p for p in pods if p["num_gpu"] > 0]
        constrained = [p for p in gpu_pods if p["gpu_spec"]]
        self.assertAlmostEqual(len(constrained) / len(gpu_pods), 0.3, delta=0.01)
        self.assertFalse(any(p["gpu_spec"] for p in pods if p["num_gpu"] == 0))
        for p in constrained:
            models = p["gpu_spec"].split("|")
            self.assertTrue(any(n["model"] in models and n["gpu"] >= p["num_gpu"]
                                and n["cpu_milli"] >= p["cpu_milli"] for n in NODES), p)
        self.assertTrue(any("|" in p["gpu_spec"] for p in constrained))

    def test_written_csv_reads_back_in_the_pod_list_format(self):
        pods = gen_variants.generate(default_trace(), NODES, 1, gpu_share=0.4, gpu_spec=0.1)
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "openb_pod_list_x.csv")
            gen_variants.write(path, pods)
            with open(path) as f:
                self.assertEqual(f.readline().strip(), ",".join(gen_variants.COLUMNS))
            self.assertEqual(gen_variants.read_pods(path), pods)
        names = [p["name"] for p in pods]
        self.assertEqual(len(set(names)), len(names))


if __name__ == "__main__":
    unittest.main()
