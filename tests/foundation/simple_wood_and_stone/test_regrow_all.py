"""dynamics.regrow_all (one draw for wood and stone) equals one dynamics.regrow per resource."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.foundation.scenarios.simple_wood_and_stone import dynamics


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regrow_all_equals_sequential_regrow_with_the_same_generator(seed):
    setup = np.random.default_rng(seed)
    sources = [(setup.random((6, 7)) < 0.4).astype(float) for _ in range(3)]
    sources[2][:] = 0  # a resource without source cells draws nothing
    maps = [np.where(s > 0, setup.integers(0, 3, s.shape), 0).astype(float) for s in sources]
    weights, max_healths = [0.5, 0.9, 0.3], [1.0, 2.0, 1.0]
    rng_all, rng_one = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(20):
        cells = [np.flatnonzero(s) for s in sources]
        inputs = [
            dynamics.regrow_inputs(m, s.take(c), c, w)
            for m, s, c, w in zip(maps, sources, cells, weights)
        ]
        together = dynamics.regrow_all(maps, cells, inputs, max_healths, rng_all)
        one_by_one = [
            dynamics.regrow(m, s, w, 0, h, rng_one)
            for m, s, w, h in zip(maps, sources, weights, max_healths)
        ]
        for before, a, b in zip(maps, together, one_by_one):
            np.testing.assert_array_equal(a, b)
            assert (a is before) == (b is before)  # unchanged maps are returned as they are
        maps = together
    assert rng_all.random() == rng_one.random()  # the same number of draws
    assert maps[0].max() <= 1.0 and maps[1].max() <= 2.0  # capped at max health


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regrow_from_table_equals_regrow_all(seed):
    setup = np.random.default_rng(seed)
    sources = [(setup.random((6, 7)) < 0.5).astype(float) for _ in range(3)]
    sources[2][:] = 0  # no source cells: no draws
    maps = [np.where(s > 0, setup.integers(0, 3, s.shape) / 2, 0).astype(float) for s in sources]
    weights, max_healths = [0.6, 0.9, 0.3], [1.0, 1.5, 1.0]
    maps = [np.minimum(m, h) for m, h in zip(maps, max_healths)]
    rng_all, rng_table = np.random.default_rng(seed), np.random.default_rng(seed)
    changed = 0
    for _ in range(30):
        cells = [np.flatnonzero(s) for s in sources]
        inputs = [
            dynamics.regrow_inputs(m, s.take(c), c, w)
            for m, s, c, w in zip(maps, sources, cells, weights)
        ]
        table = dynamics.regrow_table(cells, inputs, max_healths)
        assert table is not None
        expected = dynamics.regrow_all(maps, cells, inputs, max_healths, rng_all)
        got = dynamics.regrow_from_table(maps, table, rng_table)
        for before, a, b in zip(maps, expected, got):
            np.testing.assert_array_equal(a, b)
            assert (a is before) == (b is before)
            changed += a is not before
        maps = got
    assert changed  # some steps grew a cell
    assert rng_all.random() == rng_table.random()


@pytest.mark.parametrize("value", [2.0, np.nan, -0.0])
def test_regrow_table_declines_values_regrow_all_would_rewrite(value):
    cells = [np.array([0, 1])]
    before = np.array([0.0, value])
    assert dynamics.regrow_table(cells, [(before, before * 0.5)], [1.0]) is None
