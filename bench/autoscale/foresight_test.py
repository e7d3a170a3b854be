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

    def test_a_floor_keeps_replicas_the_plan_would_give_back(self):
        self.assertEqual(foresight.cheapest_plan(self.LATE, 3, 82 / 60, [2, 2]), (6.0, 2))

    def test_pareto_drops_states_beaten_on_both_spent_and_cost(self):
        self.assertEqual(foresight.pareto({(1, 0): 5.0, (1, 2): 6.0, (1, 3): 4.0, (2, 0): 7.0}),
                         {(1, 0): 5.0, (1, 3): 4.0, (2, 0): 7.0})


class UnforeseenRiseTest(unittest.TestCase):
    # A base needing 1 replica, then a crowd from minute 4 needing 3 (late[m][k], k = 0..3).
    NEED = [1, 1, 1, 1, 3, 3, 1]
    LATE = [[10, 0, 0, 0]] * 4 + [[90, 60, 0, 0], [90, 50, 5, 0], [10, 0, 0, 0]]

    def test_the_crowd_meets_what_the_base_needed_for_a_cold_start(self):
        rise = foresight.unforeseen_rise(self.NEED, self.LATE, 6, 82 / 60)
        self.assertEqual(rise, {"minute": 4, "held": 1, "need": 3, "late_held": 110,
                                "fewest": 2})

    def test_a_rise_no_higher_than_the_start_covered_is_none(self):
        self.assertIsNone(foresight.unforeseen_rise([2, 1, 2, 1], [[0, 0, 0]] * 4, 0, 1.0))

    def test_holding_for_the_rise_from_the_start_costs_more_than_foresight(self):
        whole = foresight.cheapest_plan(self.LATE, 6, 82 / 60)
        held = foresight.cheapest_plan(self.LATE, 6, 82 / 60, [2] * 4)
        self.assertGreater(held[0], whole[0])


if __name__ == "__main__":
    unittest.main()
