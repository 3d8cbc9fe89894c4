"""What the GPU market and the GPU tax, each on its own (:mod:`.market_env`,
:mod:`.tax_env`), share: their fields' declaration, the component of an env config they
test, the episode length check and the host reset of every env."""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist import foundation
from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.state import (
    UnsupportedGpuConfig,
)
from ai_economist.warp_drive.scenario import GpuEnvironment
from ai_economist.warp_drive.state import StateField

F64, I32 = np.float64, np.int32
GOODS = ("n_agents", "n_goods")


def field(name: str, dtype: Any, shape: tuple = (), reset: str = "none",
          per_env: bool = True) -> StateField:  # fmt: skip
    """A declared field (reset ``"none"``: the reset kernel re-initialises it)."""
    return StateField(name, dtype, shape, per_env=per_env, reset=reset)


def clock_fields() -> list[StateField]:
    """``_timestep_`` and ``_done_``, restored from the snapshot."""
    return [field("_timestep_", I32, reset="snapshot"), field("_done_", I32, reset="snapshot")]


def goods_fields() -> list[StateField]:
    """Every agent's ``inventory`` and ``escrow`` (Coin, Stone, Wood)."""
    return [field("inventory", F64, GOODS), field("escrow", F64, GOODS)]


def config_component(env_config: dict[str, Any], component: str) -> tuple[Any, Any]:
    """``(component, env)``: the first ``component`` of the env a config builds (seed 0);
    :class:`~.state.UnsupportedGpuConfig` when it has none."""
    config = dict(env_config)
    name = config.pop("scenario_name", "layout_from_file/simple_wood_and_stone")
    config.pop("seed", None)
    env = foundation.make_env_instance(name, seed=0, **config)
    found = [c for c in env.components if c.name == component]
    if not found:
        raise UnsupportedGpuConfig(f"{name}: the config has no {component}")
    return found[0], env


def checked_episode_length(name: str, episode_length: Any) -> int:
    """``episode_length`` as an int; ``ValueError`` below 1."""
    value = int(episode_length)
    if value < 1:
        raise ValueError(f"{name}: episode_length={episode_length}: needs >= 1")
    return value


class StandaloneGpuEnv(GpuEnvironment):
    """A component on its own on the generic GPU path: every env reset on the host from
    zeros and the constants (:meth:`constants`, :meth:`prepare`, ``reference_reset``)."""

    def constants(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Host values of the constant fields."""
        raise NotImplementedError

    def prepare(self, state: dict[str, np.ndarray]) -> None:
        """Start values before the first reset (none by default)."""

    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Every env reset (see the class docstring)."""
        state = {f.name: np.zeros((num_envs, *f.shape), dtype=f.dtype)
                 for f in self.state_spec() if f.per_env}  # fmt: skip
        state.update(self.constants(seed))
        self.prepare(state)
        self.reference_reset(state)
        return {k: v for k, v in state.items() if k not in ("_timestep_", "_done_")}
