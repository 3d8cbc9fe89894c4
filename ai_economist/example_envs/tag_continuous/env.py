"""WarpDrive's continuous Tag (rl-warp-drive 1.7 ``TagContinuous``) on the generic GPU path.

Taggers chase runners on a square ``grid_length x grid_length`` field. Every agent has a
position, a heading, a speed and an acceleration; its action picks an acceleration level and a
turn level (flattened into one index, see ``TagContinuous.num_actions``). A runner closer than
``tagging_distance * grid_length`` to a tagger is tagged: the tagger gains
``tag_reward_for_tagger``, the runner gets ``tag_penalty_for_runner`` and, with
``runner_exits_game_after_tagged``, leaves the game. Runners still in the game at the last step
get ``end_of_game_reward_for_runner``. The episode ends after ``episode_length`` steps or when
no runner is left.

Agents ``0 .. num_taggers - 1`` are the taggers (policy ``"tagger"``), the others the runners
(policy ``"runner"``). The numpy functions in ``dynamics.py`` are the truth;
``tag_continuous_step.cu`` and ``tag_continuous_numba.py`` mirror them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai_economist.example_envs.tag_continuous import dynamics
from ai_economist.example_envs.tag_continuous.arguments import (  # noqa: F401  (re-exported)
    DEFAULTS,
    MAX_OBSERVED,
    checked_arguments,
    search_threads_per_agent,
)
from ai_economist.example_envs.tag_continuous.declaration import state_fields
from ai_economist.warp_drive.scenario import GpuEnvironment, KernelSpec, PolicyGroup
from ai_economist.warp_drive.state import StateField

STEP_KERNEL = "TagContinuousStep"
SOURCE_DIR = Path(__file__).resolve().parent
CONSTANT_ATTRIBUTES = {"num_other_agents_observed": "num_observed"}
"""Constant fields whose value is an attribute of another name."""


def _levels(low: float, high: float, count: int) -> np.ndarray:
    """``count`` evenly spaced levels in ``[low, high]`` after a no-op level 0 (as the original)."""
    return np.insert(np.linspace(low, high, count), 0, 0.0).astype(np.float32)


class TagContinuous(GpuEnvironment):
    """Continuous Tag; keyword arguments as rl-warp-drive 1.7's ``TagContinuous``.

    Differences (see ``docs/differences.md``): taggers are the first ``num_taggers`` agents,
    the action is one flat index ``accel_idx * num_turn_actions + turn_idx``, every environment
    draws its own starting positions and headings from ``initial_state(num_envs, seed)``.
    """

    name = "tag_continuous"

    def __init__(self, **kwargs: Any) -> None:
        self._config = checked_arguments(kwargs)
        cfg = self._config
        self.num_taggers = int(cfg["num_taggers"])
        self.num_runners = int(cfg["num_runners"])
        self.num_agents = self.num_taggers + self.num_runners
        self.episode_length = int(cfg["episode_length"])
        f32 = np.float32
        self.grid_length = f32(cfg["grid_length"])
        self.max_speed = f32(cfg["max_speed"])
        self.use_full_observation = bool(cfg["use_full_observation"])
        self.num_other_agents_observed = int(cfg["num_other_agents_observed"])
        self.runner_exits_game_after_tagged = bool(cfg["runner_exits_game_after_tagged"])
        self.observe_own_state = bool(cfg["observe_own_state"])
        self.egocentric_observation = bool(cfg["egocentric_observation"])
        self.acceleration_actions = _levels(
            cfg["min_acceleration"], cfg["max_acceleration"], int(cfg["num_acceleration_levels"])
        )
        self.turn_actions = _levels(cfg["min_turn"], cfg["max_turn"], int(cfg["num_turn_levels"]))
        is_tagger = np.arange(self.num_agents) < self.num_taggers
        self.agent_types = is_tagger.astype(np.int32)
        self.skill_levels = np.where(
            is_tagger, f32(cfg["skill_level_tagger"]), f32(cfg["skill_level_runner"])
        ).astype(f32)
        self.max_speeds = (self.max_speed * self.skill_levels).astype(f32)
        self.step_rewards = np.where(
            is_tagger, f32(cfg["step_penalty_for_tagger"]), f32(cfg["step_reward_for_runner"])
        ).astype(f32)
        self.edge_hit_penalty = f32(cfg["edge_hit_penalty"])
        self.tagging_margin = f32(f32(cfg["tagging_distance"]) * self.grid_length)
        self.tag_reward_for_tagger = f32(cfg["tag_reward_for_tagger"])
        self.tag_penalty_for_runner = f32(cfg["tag_penalty_for_runner"])
        self.end_of_game_reward_for_runner = f32(cfg["end_of_game_reward_for_runner"])
        self.seed = cfg["seed"]
        self._starts = {
            key: self._check_start(key, cfg[key])
            for key in ("starting_location_x", "starting_location_y", "starting_directions")
        }
        if (self._starts["starting_location_x"] is None) != (
            self._starts["starting_location_y"] is None
        ):
            raise ValueError(
                "TagContinuous: give both starting_location_x and starting_location_y, or neither."
            )

    def _check_start(self, key: str, value: Any) -> np.ndarray | None:
        if value is None:
            return None
        arr = np.asarray(value, dtype=np.float32)
        if arr.shape != (self.num_agents,):
            raise ValueError(
                f"TagContinuous: {key} must have one value per agent ({self.num_agents}), "
                f"got shape {arr.shape}."
            )
        return arr

    # ------------------------------------------------------------ sizes
    @property
    def num_observed(self) -> int:
        """Agents each observation describes: all others, or the nearest ``N``."""
        return self.num_agents - 1 if self.use_full_observation else self.num_other_agents_observed

    @property
    def obs_dim(self) -> int:
        """``7 * num_observed + 1`` (the features of the observed agents, then the time), plus
        ``5`` with ``observe_own_state`` (the agent's own state last)."""
        own = dynamics.NUM_OWN_FEATURES if self.observe_own_state else 0
        return dynamics.NUM_FEATURES * self.num_observed + 1 + own

    @property
    def num_turn_actions(self) -> int:
        """``num_turn_levels + 1`` (the no-op first)."""
        return len(self.turn_actions)

    @property
    def num_actions(self) -> int:
        """``(num_acceleration_levels + 1) * (num_turn_levels + 1)``; action 0 is the no-op."""
        return len(self.acceleration_actions) * self.num_turn_actions

    # ------------------------------------------------------------ declaration
    def dims(self) -> dict[str, int]:
        """Named sizes used in the field shapes."""
        return {
            "num_agents": self.num_agents,
            "num_taggers": self.num_taggers,
            "num_runners": self.num_runners,
            "episode_length": self.episode_length,
            "obs_dim": self.obs_dim,
            "num_actions": self.num_actions,
            "num_acceleration_actions": len(self.acceleration_actions),
            "num_turn_actions": self.num_turn_actions,
        }

    def state_fields(self) -> Sequence[StateField]:
        """See ``declaration.state_fields``."""
        return state_fields()

    def policies(self) -> dict[str, PolicyGroup]:
        """Taggers (agents ``0 .. T-1``) and runners (the rest)."""
        return {
            "tagger": PolicyGroup("tagger", 0, self.num_taggers, self.obs_dim, self.num_actions),
            "runner": PolicyGroup(
                "runner", self.num_taggers, self.num_runners, self.obs_dim, self.num_actions
            ),
        }

    def kernels(self) -> KernelSpec:
        """One fused step kernel, in CUDA C and in Numba."""
        return KernelSpec(
            step_kernels=(STEP_KERNEL,),
            cuda_source=SOURCE_DIR / "tag_continuous_step.cu",
            numba_module="ai_economist.example_envs.tag_continuous.tag_continuous_numba",
            threads_per_env=self.threads_per_env,
        )

    @property
    def threads_per_env(self) -> int:
        """Threads of one environment's block: ``num_agents`` times the threads that share an
        agent's nearest-agent search (``search_threads_per_agent``: 4 at the published size,
        110 agents observing their nearest 10); more than 1,024 agents fail with an error that
        says so."""
        split = search_threads_per_agent(
            self.num_agents, self.use_full_observation, self.num_observed
        )
        return split * self.num_agents

    def config(self) -> dict[str, Any]:
        """The constructor arguments (arrays as lists)."""
        return {
            k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self._config.items()
        }

    # ------------------------------------------------------------ behaviour
    def constants(self) -> dict[str, Any]:
        """Host values of the constant fields, in declaration order: the attribute of the same
        name (``num_other_agents_observed``: ``num_observed``), integer scalars as int32."""
        values = {}
        for field in state_fields():
            if not field.per_env:
                value = getattr(self, CONSTANT_ATTRIBUTES.get(field.name, field.name))
                scalar_int = field.dtype == np.int32 and field.shape == ()
                values[field.name] = np.int32(value) if scalar_int else value
        return values

    def initial_state(self, num_envs: int, seed: int | None) -> dict[str, np.ndarray]:
        """Per-env starting positions (uniform in the grid) and headings (0, pi/2, pi or 3 pi/2).

        Drawn with ``np.random.default_rng`` seeded by the constructor's ``seed`` and ``seed``
        (either may be None); fixed ``starting_*`` arguments apply to every environment.
        """
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"TagContinuous: num_envs must be an integer >= 1, got {num_envs!r}.")
        entropy = [int(s) for s in (self.seed, seed) if s is not None]
        rng = np.random.default_rng(entropy or None)
        shape = (num_envs, self.num_agents)
        x, y, heading = (
            self._starts[k]
            for k in ("starting_location_x", "starting_location_y", "starting_directions")
        )
        if x is None:
            x = self.grid_length * rng.random(shape, dtype=np.float32)
            y = self.grid_length * rng.random(shape, dtype=np.float32)
        if heading is None:
            choices = np.array([0, np.pi / 2, np.pi, 3 * np.pi / 2], np.float32)
            heading = rng.choice(choices, size=shape)
        state = {
            "loc_x": np.broadcast_to(x, shape).astype(np.float32),
            "loc_y": np.broadcast_to(y, shape).astype(np.float32),
            "speed": np.zeros(shape, np.float32),
            "direction": np.broadcast_to(heading, shape).astype(np.float32),
            "acceleration": np.zeros(shape, np.float32),
            "still_in_the_game": np.ones(shape, np.int32),
            "tagged_by": np.full(shape, -1, np.int32),
            "runners_left": np.full(num_envs, self.num_runners, np.int32),
        }
        obs = self._observe(state, np.zeros(num_envs, np.int32))
        for tag, group in self.policies().items():
            rows = slice(group.first_agent, group.first_agent + group.num_agents)
            state[f"observations_{tag}"] = obs[:, rows]
            state[f"action_mask_{tag}"] = np.ones(
                (num_envs, group.num_agents, self.num_actions), np.float32
            )
        return {**self.constants(), **state}

    def _observe(
        self, state: dict[str, np.ndarray], timestep: np.ndarray, d2: np.ndarray | None = None
    ) -> np.ndarray:
        x, y, still_in = state["loc_x"], state["loc_y"], state["still_in_the_game"]
        if self.use_full_observation:
            ids = dynamics.all_other_agents(x.shape[0], self.num_agents)
        else:
            d2 = dynamics.squared_distances(x, y) if d2 is None else d2
            ids = dynamics.nearest_neighbors(d2, still_in, self.num_other_agents_observed)
        obs = dynamics.observe(
            x, y, state["speed"], state["direction"], state["acceleration"], self.agent_types,
            still_in, ids, timestep, self.episode_length, self.grid_length, self.max_speed,
            self.use_full_observation,
        )  # fmt: skip
        if self.egocentric_observation:
            m = ids.shape[-1]
            obs[:, :, :m], obs[:, :, m : 2 * m] = dynamics.heading_frame(
                obs[:, :, :m], obs[:, :, m : 2 * m], state["direction"]
            )
        if not self.observe_own_state:
            return obs
        own = dynamics.own_state(
            x, y, state["speed"], state["direction"], still_in, self.grid_length, self.max_speed
        )
        return np.concatenate([obs, own], axis=-1)

    def _actions(self, state: dict[str, np.ndarray]) -> np.ndarray:
        actions = np.concatenate(
            [state["sampled_actions_tagger"], state["sampled_actions_runner"]], axis=1
        ).astype(np.int64)
        bad = (actions < 0) | (actions >= self.num_actions)
        if bad.any():
            env, agent = np.argwhere(bad)[0]
            raise ValueError(
                f"TagContinuous: action {actions[env, agent]} of agent {agent} in env {env} is "
                f"outside [0, {self.num_actions})."
            )
        return actions

    def reference_step(self, state: dict[str, np.ndarray]) -> None:
        """One step of every environment, in place (see the module docstring)."""
        accel_idx, turn_idx = dynamics.decode_actions(self._actions(state), self.num_turn_actions)
        timestep = state["_timestep_"] + 1
        still_in = state["still_in_the_game"]
        in_before = still_in.copy()
        edge_penalty = dynamics.move_agents(
            state["loc_x"], state["loc_y"], state["speed"], state["direction"],
            state["acceleration"], still_in, self.acceleration_actions[accel_idx],
            self.turn_actions[turn_idx], self.max_speeds, self.grid_length, self.edge_hit_penalty,
        )  # fmt: skip
        d2 = dynamics.squared_distances(state["loc_x"], state["loc_y"])
        obs = self._observe(state, timestep, d2)
        tagged_by = dynamics.tag_runners(d2, in_before, self.num_taggers, self.tagging_margin)
        rewards = dynamics.compute_rewards(
            in_before, edge_penalty, self.step_rewards, tagged_by, self.num_taggers,
            self.tag_reward_for_tagger, self.tag_penalty_for_runner,
        )  # fmt: skip
        tagged = tagged_by >= 0
        if self.runner_exits_game_after_tagged:
            still_in[tagged] = 0
        last_step = (timestep == self.episode_length)[:, None]
        bonus = last_step & (self.agent_types == 0) & still_in.astype(bool)
        rewards = np.where(bonus, rewards + self.end_of_game_reward_for_runner, rewards)
        tags = tagged.sum(axis=1).astype(np.int32)
        state["episode_tags"] += tags
        if self.runner_exits_game_after_tagged:
            state["runners_left"] -= tags
        done = (timestep == self.episode_length) | (state["runners_left"] == 0)
        state["last_episode_tags"][...] = np.where(
            done, state["episode_tags"], state["last_episode_tags"]
        )
        state["completed_episodes"] += done.astype(np.int32)
        state["tagged_by"][...] = tagged_by
        for tag, group in self.policies().items():
            rows = slice(group.first_agent, group.first_agent + group.num_agents)
            state[f"observations_{tag}"][...] = obs[:, rows]
            state[f"rewards_{tag}"][...] = rewards[:, rows]
        state["_timestep_"][...] = timestep
        state["_done_"][...] = np.maximum(state["_done_"], done.astype(np.int32))

    def episode_metrics(self, pull: Callable[[str], np.ndarray]) -> dict[str, float]:
        """Tags per episode and the fraction of runners tagged, over the environments' last
        completed episodes (empty before any episode has ended)."""
        completed = np.asarray(pull("completed_episodes")) > 0
        if not completed.any():
            return {}
        tags = float(np.asarray(pull("last_episode_tags"))[completed].mean())
        return {
            "tags per episode": tags,
            "fraction of runners tagged": tags / self.num_runners,
        }


# The constructor's keywords, visible to inspect.signature (the run-config key check uses it).
TagContinuous.__init__.__signature__ = inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    + [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in DEFAULTS.items()]
)
