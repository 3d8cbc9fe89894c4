"""benchmarks/gtb_tax_mechanics.py: under a random policy the free market collects nothing, and
a 100% flat tax rebated in equal shares leaves the coin almost equal (the mechanics that the
session-18 flat-tax runs are compared with)."""

from __future__ import annotations


def test_a_full_flat_tax_equalises_and_the_free_market_collects_nothing(import_benchmark) -> None:
    mechanics = import_benchmark("gtb_tax_mechanics")
    free = mechanics.run("free-market", envs=1, env_seed=3, action_seed=4)
    full = mechanics.run("fixed:1.0", envs=1, env_seed=3, action_seed=4)
    assert free["taxes_collected"] == 0.0 and full["taxes_collected"] > 0.0
    assert full["equality"] > 0.8 > free["equality"]
