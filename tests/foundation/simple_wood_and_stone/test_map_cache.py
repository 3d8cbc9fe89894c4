"""MapCache (per-layer refreshed copies of the maps) and egocentric_views_table give exactly
what Maps.state, dynamics.padded_views and dynamics.egocentric_views give."""

from __future__ import annotations

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone import configs, dynamics
from ai_economist.foundation.scenarios.simple_wood_and_stone.map_cache import MapCache


def reference_padded(maps, w):
    owners = dynamics.code_agent_indices(maps.owner_state)
    empty = np.zeros((1, *maps.size), dtype=np.int16)
    return dynamics.padded_views(
        [maps.get(k) for k in maps.keys()], np.concatenate([owners, empty]), w
    )


def test_map_cache_follows_every_kind_of_map_write():
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    env = foundation.make_env_instance(configs.SCENARIO_NAME, seed=0, **kwargs)
    env.reset()
    maps, cache, rng = env.world.maps, MapCache(), np.random.default_rng(0)
    h, w = maps.size
    held = []
    for step in range(60):
        kind = step % 4
        r, c = int(rng.integers(h)), int(rng.integers(w))
        if kind == 0:
            maps.set("Wood", (rng.random((h, w)) < 0.2).astype(float))
        elif kind == 1:
            maps.set_point("Stone", r, c, float(rng.integers(0, 3)))
        elif kind == 2 and maps.get("Water")[r, c] == 0:
            maps.set_point("House", r, c, 1, owner=int(rng.integers(4)))
        state = cache.state(maps)
        padded, padded_idx = cache.padded(maps, 5)
        ref_padded, ref_idx = reference_padded(maps, 5)
        np.testing.assert_array_equal(state, maps.state)
        assert state.dtype == np.float32
        np.testing.assert_array_equal(padded, ref_padded)
        np.testing.assert_array_equal(padded_idx, ref_idx)
        held.append((padded, padded.copy()))
    for array, values in held:  # arrays handed out earlier were never edited
        np.testing.assert_array_equal(array, values)
    assert (maps.owner_state >= 0).any()  # houses were placed


def random_padded_views(seed: int):
    """A 9 x 8 map with random owners and three agents: ``(padded, padded_idx, locs, r,
    owners)`` as the egocentric-view functions take them (window half-width 2)."""
    rng = np.random.default_rng(seed)
    h, w, r = 9, 8, 2
    owners = np.where(rng.random((h, w)) < 0.3, rng.integers(0, 3, (h, w)), -1)
    locs = [[0, 0], [4, 7], [8, 3]]
    loc_map = np.full((h, w), -1)
    for i, (row, col) in enumerate(locs):
        loc_map[row, col] = i
    idx_maps = dynamics.agent_idx_maps(owners[None].astype(np.int16), loc_map)
    padded, padded_idx = dynamics.padded_views([rng.random((h, w))], idx_maps, r)
    return padded, padded_idx, locs, r, owners


def test_egocentric_views_table_equals_egocentric_views():
    padded, padded_idx, locs, r, _ = random_padded_views(2)
    tables = dynamics.own_code_tables(len(locs))
    for (m1, i1), (m2, i2) in zip(
        dynamics.egocentric_views(padded, padded_idx, locs, r),
        dynamics.egocentric_views_table(padded, padded_idx, locs, r, tables),
    ):
        np.testing.assert_array_equal(m1, m2)
        np.testing.assert_array_equal(i1, i2)
        assert i1.dtype == i2.dtype and i2.flags.c_contiguous


def test_is_clear_is_no_resource_and_no_landmark_at_every_cell():
    kwargs = configs.env_config(configs.PHASE2_ENV_CONFIG)
    env = foundation.make_env_instance(configs.SCENARIO_NAME, seed=0, **kwargs)
    env.reset()
    maps, world = env.world.maps, env.world
    maps.set_point("House", 3, 4, 1, owner=0)  # a private landmark too
    h, w = maps.size
    kinds = set()
    for r in range(-1, h + 1):
        for c in range(-1, w + 1):
            expected = not world.location_resources(r, c) and not world.location_landmarks(r, c)
            kinds.add(expected)
            assert world.location_is_clear(r, c) == expected, (r, c)
    assert kinds == {True, False}
