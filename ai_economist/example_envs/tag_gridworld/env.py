"""Grid-world Tag (WarpDrive's ``TagGridWorld``): taggers chase one runner on a square grid.

``num_taggers`` taggers (agents ``0 .. num_taggers - 1``) and one runner (the last agent) live
on the integer grid ``[0, grid_length] x [0, grid_length]``.  Each step every agent takes one
of five actions (``ACTIONS``: stay, +x, -x, +y, -y); a move that would leave the grid is
clipped back and costs ``wall_hit_penalty``.  The runner is tagged when a tagger stands on its
cell after the move; then every tagger earns ``tag_reward_for_tagger``, the runner loses
``tag_penalty_for_runner`` and the episode ends.  Otherwise every tagger pays
``step_cost_for_tagger`` and the runner earns it.  Episodes also end at ``episode_length``.

Observations (float32, positions divided by ``grid_length``, time divided by
``episode_length``):

* full (``use_full_observation=True``), ``4 * num_agents + 1`` values per agent: every agent's
  x, every agent's y, every agent's type (runner = 1), a one-hot of the observing agent, time;
* partial, 6 values: own x, own y, the target's x and y (taggers: the runner; the runner: its
  nearest tagger, the lowest index on ties), own type, time.

The numpy functions of ``dynamics.py`` are the truth; ``tag_gridworld_step.cu`` (CUDA C) and
``tag_gridworld_numba.py`` (Numba) mirror them, one block per environment and one thread per
agent (or several agents per thread, see ``threads_per_env``).  Per agent the step costs O(1)
work and the block O(1) shared memory, except the full observation, which (as in the
original) writes ``num_agents`` rows per agent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.example_envs.tag_gridworld.dynamics import (
    NUM_ACTIONS,
    PARTIAL_OBS_DIM,
    move_agents,
    observations,
    runner_tagged,
    tag_rewards,
)
from ai_economist.warp_drive.scenario import (
    ACTION_MASK,
    OBSERVATIONS,
    REWARDS,
    SAMPLED_ACTIONS,
    GpuEnvironment,
    KernelSpec,
    PolicyGroup,
)
from ai_economist.warp_drive.state import StateField

STEP_KERNEL = "CudaTagGridWorldStep"
POLICY = "shared"
MAX_GRID_LENGTH = 32767  # squared distances (2 * grid_length**2) must fit an int32
MAX_THREADS = 1024  # threads of a CUDA block
STARTS = ("random", "center")


def _positive_int(name: str, value: Any, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"TagGridWorld: {name} must be a positive integer, got {value!r}.")
    if maximum is not None and value > maximum:
        raise ValueError(f"TagGridWorld: {name}={value} exceeds the maximum {maximum}.")
    return int(value)


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"TagGridWorld: {name} must be a number, got {value!r}.")
    if not math.isfinite(float(value)):
        raise ValueError(f"TagGridWorld: {name} must be finite, got {value!r}.")
    return float(value)


class TagGridWorld(GpuEnvironment):
    """Grid-world Tag with ``num_taggers`` taggers and one runner (see the module docstring).

    Args mirror WarpDrive's ``TagGridWorld``; ``start`` and ``seed`` choose starting cells:
    explicit ``starting_location_x/y`` (one per agent, every env alike) win; otherwise
    ``start="random"`` draws every agent's cell uniformly per env from
    ``np.random.default_rng(seed)`` and ``start="center"`` is the original's default (taggers
    at ``grid_length // 2``, the runner at ``(0, 0)``).  All agents act with one policy,
    ``"shared"``, as in the original's run config.  ``threads_per_env`` (default
    ``min(num_agents, 1024)``) sets the block size: with fewer threads than agents each thread
    steps several agents, so more than 1,024 agents run in one block per env.
    """

    name = "tag_gridworld"

    def __init__(
        self,
        num_taggers: int = 10,
        grid_length: int = 10,
        episode_length: int = 100,
        starting_location_x: Sequence[int] | None = None,
        starting_location_y: Sequence[int] | None = None,
        seed: int | None = None,
        wall_hit_penalty: float = 0.1,
        tag_reward_for_tagger: float = 10.0,
        tag_penalty_for_runner: float = 2.0,
        step_cost_for_tagger: float = 0.01,
        use_full_observation: bool = True,
        start: str = "random",
        threads_per_env: int | None = None,
    ) -> None:
        self.num_taggers = _positive_int("num_taggers", num_taggers)
        self.num_agents = self.num_taggers + 1
        self.grid_length = _positive_int("grid_length", grid_length, MAX_GRID_LENGTH)
        self.episode_length = _positive_int("episode_length", episode_length)
        self.wall_hit_penalty = _finite("wall_hit_penalty", wall_hit_penalty)
        self.tag_reward_for_tagger = _finite("tag_reward_for_tagger", tag_reward_for_tagger)
        self.tag_penalty_for_runner = _finite("tag_penalty_for_runner", tag_penalty_for_runner)
        self.step_cost_for_tagger = _finite("step_cost_for_tagger", step_cost_for_tagger)
        if not isinstance(use_full_observation, (bool, np.bool_)):
            raise ValueError(
                f"TagGridWorld: use_full_observation must be True or False, "
                f"got {use_full_observation!r}."
            )
        self.use_full_observation = bool(use_full_observation)
        if start not in STARTS:
            raise ValueError(f"TagGridWorld: start must be one of {STARTS}, got {start!r}.")
        self.start = start
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"TagGridWorld: seed must be an integer or None, got {seed!r}.")
        self.seed = None if seed is None else int(seed)
        self.starting_location = self._check_locations(starting_location_x, starting_location_y)
        self.obs_dim = 4 * self.num_agents + 1 if self.use_full_observation else PARTIAL_OBS_DIM
        self.threads_per_env = (
            min(self.num_agents, MAX_THREADS)
            if threads_per_env is None
            else _positive_int("threads_per_env", threads_per_env, MAX_THREADS)
        )

    def _check_locations(self, xs, ys) -> tuple[np.ndarray, np.ndarray] | None:
        if xs is None and ys is None:
            return None
        if xs is None or ys is None:
            raise ValueError("TagGridWorld: give both starting_location_x and _y, or neither.")
        out = []
        for label, values in (("starting_location_x", xs), ("starting_location_y", ys)):
            arr = np.asarray(values)
            if arr.shape != (self.num_agents,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(
                    f"TagGridWorld: {label} must hold {self.num_agents} integers (num_taggers + "
                    f"1 runner), got {values!r}."
                )
            if arr.min() < 0 or arr.max() > self.grid_length:
                raise ValueError(
                    f"TagGridWorld: {label} must lie in [0, grid_length={self.grid_length}], "
                    f"got {values!r}."
                )
            out.append(arr.astype(np.int32))
        return out[0], out[1]

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        """``num_agents`` (taggers + runner), ``obs_dim`` and ``num_actions``."""
        return {"num_agents": self.num_agents, "obs_dim": self.obs_dim, "num_actions": NUM_ACTIONS}

    def state_fields(self) -> list[StateField]:
        """Positions, the policy's arrays, the built-ins, episode records and the constants."""
        i32, f32, agents = np.int32, np.float32, ("num_agents",)
        obs, mask = OBSERVATIONS.format(tag=POLICY), ACTION_MASK.format(tag=POLICY)
        actions, rewards = SAMPLED_ACTIONS.format(tag=POLICY), REWARDS.format(tag=POLICY)

        def const(name: str, dtype: Any, doc: str) -> StateField:
            return StateField(name, dtype, (), per_env=False, doc=doc)

        def record(name: str, doc: str) -> StateField:
            return StateField(name, i32, (), reset="none", doc=doc)

        return [
            StateField("loc_x", i32, agents, doc="x cell in [0, grid_length]"),
            StateField("loc_y", i32, agents, doc="y cell in [0, grid_length]"),
            StateField(actions, i32, agents, reset="zeros", doc="action index (ACTIONS)"),
            StateField("_done_", i32, (), reset="zeros", doc="1 once the episode has ended"),
            StateField(rewards, f32, agents, reset="zeros", doc="the last step's rewards"),
            StateField(obs, f32, ("num_agents", "obs_dim"), doc="observations (module doc)"),
            StateField(mask, f32, ("num_agents", "num_actions"), kernel_arg=False,
                       doc="every action allowed (constant ones)"),  # fmt: skip
            StateField("_timestep_", i32, (), reset="zeros", doc="steps taken this episode"),
            record("episodes_completed", "episodes this env has finished"),
            record("last_episode_tagged", "1 if the last finished episode ended in a tag"),
            record("last_episode_length", "steps of the last finished episode"),
            const("wall_hit_penalty", f32, "reward lost by a move into a wall"),
            const("tag_reward_for_tagger", f32, "every tagger's reward on a tag"),
            const("tag_penalty_for_runner", f32, "the runner's penalty on a tag"),
            const("step_cost_for_tagger", f32, "taggers pay it per untagged step, the runner earns it"),
            const("use_full_observation", i32, "1: full observation, 0: partial"),
            const("grid_length", i32, "cells span [0, grid_length] on both axes"),
            const("episode_length", i32, "steps per episode"),
            const("num_agents", i32, "taggers + 1 runner (the last agent)"),
        ]  # fmt: skip

    def policies(self) -> dict[str, PolicyGroup]:
        """One policy, ``"shared"``, for taggers and runner (the original's run config)."""
        return {POLICY: PolicyGroup(POLICY, 0, self.num_agents, self.obs_dim, NUM_ACTIONS)}

    def kernels(self) -> KernelSpec:
        """``CudaTagGridWorldStep`` in ``tag_gridworld_step.cu`` and the Numba twin."""
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            cuda_source=Path(__file__).with_name("tag_gridworld_step.cu"),
            numba_module="ai_economist.example_envs.tag_gridworld.tag_gridworld_numba",
            threads_per_env=self.threads_per_env,
        )

    def config(self) -> dict[str, Any]:
        """Constructor arguments that rebuild this environment."""
        locations = self.starting_location
        return {
            "num_taggers": self.num_taggers,
            "grid_length": self.grid_length,
            "episode_length": self.episode_length,
            "starting_location_x": None if locations is None else locations[0].tolist(),
            "starting_location_y": None if locations is None else locations[1].tolist(),
            "seed": self.seed,
            "wall_hit_penalty": self.wall_hit_penalty,
            "tag_reward_for_tagger": self.tag_reward_for_tagger,
            "tag_penalty_for_runner": self.tag_penalty_for_runner,
            "step_cost_for_tagger": self.step_cost_for_tagger,
            "use_full_observation": self.use_full_observation,
            "start": self.start,
            "threads_per_env": self.threads_per_env,
        }

    # ------------------------------------------------------------ behaviour
    def starting_locations(self, num_envs: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
        """int32 ``(num_envs, num_agents)`` starting cells (see the class docstring)."""
        shape = (_positive_int("num_envs", num_envs), self.num_agents)
        if self.starting_location is not None:
            x, y = self.starting_location
            return np.broadcast_to(x, shape).copy(), np.broadcast_to(y, shape).copy()
        if self.start == "center":
            x = np.full(shape, self.grid_length // 2, np.int32)
            x[:, -1] = 0
            return x, x.copy()
        rng = np.random.default_rng(self.seed if seed is None else seed)
        x = rng.integers(0, self.grid_length + 1, size=shape, dtype=np.int32)
        y = rng.integers(0, self.grid_length + 1, size=shape, dtype=np.int32)
        return x, y

    def constants(self) -> dict[str, Any]:
        """The scalar constants, typed as declared."""
        return {
            "wall_hit_penalty": np.float32(self.wall_hit_penalty),
            "tag_reward_for_tagger": np.float32(self.tag_reward_for_tagger),
            "tag_penalty_for_runner": np.float32(self.tag_penalty_for_runner),
            "step_cost_for_tagger": np.float32(self.step_cost_for_tagger),
            "use_full_observation": np.int32(self.use_full_observation),
            "grid_length": np.int32(self.grid_length),
            "episode_length": np.int32(self.episode_length),
            "num_agents": np.int32(self.num_agents),
        }

    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Starting cells per env, their observations at time 0, masks of ones, constants."""
        x, y = self.starting_locations(num_envs, seed)
        obs = observations(
            x, y, np.zeros(num_envs, np.int32), self.grid_length, self.episode_length,
            self.use_full_observation,
        )  # fmt: skip
        mask = np.ones((num_envs, self.num_agents, NUM_ACTIONS), np.float32)
        return {
            "loc_x": x,
            "loc_y": y,
            OBSERVATIONS.format(tag=POLICY): obs,
            ACTION_MASK.format(tag=POLICY): mask,
            **{k: np.asarray(v) for k, v in self.constants().items()},
        }

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        """Advance every environment one step in place (numpy; the kernels mirror it)."""
        actions = np.asarray(state[SAMPLED_ACTIONS.format(tag=POLICY)])
        if actions.size and (actions.min() < 0 or actions.max() >= NUM_ACTIONS):
            bad = actions[(actions < 0) | (actions >= NUM_ACTIONS)][0]
            raise ValueError(
                f"TagGridWorld: {SAMPLED_ACTIONS.format(tag=POLICY)} holds action {bad}; "
                f"expected 0..{NUM_ACTIONS - 1} (stay, +x, -x, +y, -y)."
            )
        t = state["_timestep_"] + 1
        state["_timestep_"][...] = t
        x, y, hit = move_agents(state["loc_x"], state["loc_y"], actions, self.grid_length)
        state["loc_x"][...], state["loc_y"][...] = x, y
        tagged = runner_tagged(x, y)
        state[REWARDS.format(tag=POLICY)][...] = tag_rewards(
            hit, tagged, self.wall_hit_penalty, self.tag_reward_for_tagger,
            self.tag_penalty_for_runner, self.step_cost_for_tagger,
        )  # fmt: skip
        state[OBSERVATIONS.format(tag=POLICY)][...] = observations(
            x, y, t, self.grid_length, self.episode_length, self.use_full_observation
        )
        done = (t >= self.episode_length) | tagged
        state["_done_"][...] = np.where(done, 1, state["_done_"])
        state["episodes_completed"][...] += done
        state["last_episode_tagged"][...] = np.where(done, tagged, state["last_episode_tagged"])
        state["last_episode_length"][...] = np.where(done, t, state["last_episode_length"])

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """Over envs that finished an episode: the share of last episodes that ended in a tag,
        their mean length, and the episodes finished so far."""
        completed = np.asarray(pull("episodes_completed"))
        seen = completed > 0
        if not seen.any():
            return {}
        return {
            "tag rate": float(np.mean(np.asarray(pull("last_episode_tagged"))[seen])),
            "episode length": float(np.mean(np.asarray(pull("last_episode_length"))[seen])),
            "episodes completed": float(completed.sum()),
        }
