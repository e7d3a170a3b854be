#!/usr/bin/env python3
"""Tests of foresight.py's plan search (no strata binary needed).

Usage: python3 bench/autoscale/foresight_test.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import foresight  # noqa: E402


class CheapestPlanTest(unittest.TestCase):
    # late[m][k]: minute m's late requests with k replicas.
    LATE = [[5, 1, 0], [0, 0, 0], [10, 2, 0], [3, 0, 0]]

    def test_no_budget_keeps_a_replica_through_a_dip_cheaper_than_buying_it_back(self):
        self.assertEqual(foresight.cheapest_plan(self.LATE, 0, 82 / 60), (7.0, 0))

    def test_a_budget_is_spent_where_it_saves_most(self):
        self.assertEqual(foresight.cheapest_plan(self.LATE, 3, 82 / 60), (4.0, 3))

    def test_an_empty_minute_may_hold_no_replica(self):
        self.assertEqual(foresight.cheapest_plan([[0, 0], [0, 0]], 0, 1.0), (0.0, 0))

    def test_no_plan_within_the_budget_is_none(self):
        self.assertIsNone(foresight.cheapest_plan([[5, 5, 5]], 1, 1.0))


    def test_pareto_drops_states_beaten_on_both_spent_and_cost(self):
        self.assertEqual(foresight.pareto({(1, 0): 5.0, (1, 2): 6.0, (1, 3): 4.0, (2, 0): 7.0}),
                         {(1, 0): 5.0, (1, 3): 4.0, (2, 0): 7.0})


if __name__ == "__main__":
    unittest.main()
