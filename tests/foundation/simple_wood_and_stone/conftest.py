"""Fixtures for the gather-trade-build tests (small hand-made worlds)."""

from __future__ import annotations

import numpy as np
import pytest
from gtb_world_helpers import SMALL_LAYOUT, components

from ai_economist import foundation


@pytest.fixture
def layout_file(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text(SMALL_LAYOUT)
    return path


@pytest.fixture
def make_env(layout_file):
    """``make_env(**overrides)``: a 2-agent env on the small layout, reset, regrowth off."""

    def make(n_agents=2, comps=None, **kwargs):
        config = {
            "components": comps or components(),
            "n_agents": n_agents,
            "world_size": [5, 6],
            "episode_length": 20,
            "env_layout_file": str(layout_file),
            "resource_regen_prob": 0.0,
            "seed": 0,
        }
        config.update(kwargs)
        env = foundation.make_env_instance("layout_from_file/simple_wood_and_stone", **config)
        env.reset()
        return env

    return make


@pytest.fixture
def rng():
    return np.random.default_rng(123)
