"""BaseEnvironment: the scenario base class that runs components, observations and logs.

A scenario subclasses :class:`BaseEnvironment`, sets ``name``, ``agent_subclasses`` and
``required_entities``, registers itself with ``@scenario_registry.add`` and implements
``reset_starting_layout``, ``reset_agent_states``, ``scenario_step``,
``generate_observations`` and ``compute_reward`` (optionally ``additional_reset_steps`` and
``scenario_metrics``).

Dict contract: ``reset() -> obs`` and ``step(actions) -> (obs, rew, done, info)``, keyed by
``str(agent.idx)`` and ``"p"`` (collated mode: ``"a"`` and ``"p"``).

Differences from Foundation 1.7.1 (also listed in docs/differences.md, "Foundation core"):

* No global RNG. Each environment owns a ``numpy.random.Generator`` (``env.rng``, also
  ``env.world.rng``). ``env.seed(seed)`` is an instance method taking any int >= 0 (``None``
  = fresh entropy). The replay log stores ``bit_generator.state`` dicts, which
  ``reset(seed_state=...)`` / ``step(..., seed_state=...)`` restore.
* Collated fast path: with ``collate_agent_step_and_reset_data=True`` the scenario's
  ``generate_observations``/``compute_reward`` and the components' observations/masks may
  return ``{"a": <arrays with agents on the last axis>, "p": ...}``, which pass through
  untouched; ``step`` accepts ``{"a": int array (n_agents,), "p": ...}``. Rewards are
  ``rew["a"]`` float array and ``rew["p"]`` float. Flattening in collated mode yields
  ``"flat"`` of shape ``(obs_dim, n_agents)``.
* ``step`` checks every action before it applies any (a rejected step changes nothing) and
  raises ``RuntimeError`` before the first ``reset()`` and after the episode's last step.
* Flattened masks are always float32; constructor arguments are validated with
  TypeError/ValueError instead of asserts; ``previous_episode_dense_log`` is refreshed at
  every episode end (empty lists when the episode was not dense-logged).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from ai_economist.foundation.base import episode_logs as logs
from ai_economist.foundation.base.base_agent import BaseAgent
from ai_economist.foundation.base.base_component import BaseComponent, component_registry
from ai_economist.foundation.base.collation import (
    CollatedLayout,
    MaskBuilder,
    collate_rewards,
    split_rewards,
)
from ai_economist.foundation.base.direct_obs import DirectObservations
from ai_economist.foundation.base.env_actions import EnvironmentActions
from ai_economist.foundation.base.env_views import EnvironmentViews
from ai_economist.foundation.base.flat_assembly import FusedFlattener, merge_and_flatten
from ai_economist.foundation.base.observations import ObservationMerger, PackagerCache
from ai_economist.foundation.base.registrar import Registry
from ai_economist.foundation.base.rng import get_state, make_generator, set_state, validate_seed
from ai_economist.foundation.base.validation import (
    check_bool,
    check_int,
    check_optional_int,
    check_scenario_attributes,
    check_world_size,
    parse_component_specs,
    register_entities,
)
from ai_economist.foundation.base.world import World


class BaseEnvironment(EnvironmentActions, EnvironmentViews, ABC):
    """Base class of every scenario. See the module docstring and §2 of the reference.

    Args:
        components: ``[("Name", {kwargs}), ...]`` or ``[{"Name": {kwargs}}, ...]``; the order
            fixes the order of reset, step, observations and masks.
        n_agents: number of mobile agents (int >= 2).
        world_size: ``[H, W]``.
        episode_length: steps per episode (int >= 1).
        multi_action_mode_agents: one action per sub-space for mobile agents.
        multi_action_mode_planner: one action per sub-space for the planner.
        flatten_observations: concatenate scalar/1-D fields into ``"flat"``.
        flatten_masks: one mask vector per agent (else ``{sub_space: mask}``).
        allow_observation_scaling: ``inv_scale`` 0.01 and ``time`` = t / episode_length.
        dense_log_frequency: dense-log every N-th episode (None: only when forced).
        world_dense_log_frequency: world snapshot every N steps of a dense-logged episode.
        collate_agent_step_and_reset_data: key all mobile agents as ``"a"``.
        seed: seed of the environment's generator (int >= 0; None = fresh entropy).
    """

    name: str = ""
    agent_subclasses: list[str] = []
    required_entities: list[str] = []

    def __init__(
        self,
        components: Sequence[Any] | None = None,
        n_agents: int | None = None,
        world_size: Sequence[int] | None = None,
        episode_length: int = 1000,
        multi_action_mode_agents: bool = False,
        multi_action_mode_planner: bool = True,
        flatten_observations: bool = True,
        flatten_masks: bool = True,
        allow_observation_scaling: bool = True,
        dense_log_frequency: int | None = None,
        world_dense_log_frequency: int = 50,
        collate_agent_step_and_reset_data: bool = False,
        seed: int | None = None,
    ) -> None:
        check_scenario_attributes(self)
        specs = parse_component_specs(components)
        self.n_agents = check_int("n_agents", n_agents, 2)
        self.num_agents = self.n_agents + 1
        self.world_size = check_world_size(world_size)
        self.episode_length = check_int("episode_length", episode_length, 1)
        self.multi_action_mode_agents = check_bool(
            "multi_action_mode_agents", multi_action_mode_agents
        )
        self.multi_action_mode_planner = check_bool(
            "multi_action_mode_planner", multi_action_mode_planner
        )
        self._flatten_observations = check_bool("flatten_observations", flatten_observations)
        self._flatten_masks = check_bool("flatten_masks", flatten_masks)
        self._allow_observation_scaling = check_bool(
            "allow_observation_scaling", allow_observation_scaling
        )
        self._dense_log_frequency = check_optional_int(
            "dense_log_frequency", dense_log_frequency, 1
        )
        self._world_dense_log_frequency = check_int(
            "world_dense_log_frequency", world_dense_log_frequency, 1
        )
        self.collate_agent_step_and_reset_data = check_bool(
            "collate_agent_step_and_reset_data", collate_agent_step_and_reset_data
        )
        seed = validate_seed(seed)

        component_classes = [(component_registry.get(n), kw) for n, kw in specs]
        self._entities = register_entities(
            [(self.name, self.required_entities)]
            + [(cls.name, cls.required_entities) for cls, _ in component_classes]
        )
        self.world = World(
            self.world_size,
            self.n_agents,
            self.resources,
            self.landmarks,
            self.multi_action_mode_agents,
            self.multi_action_mode_planner,
            rng=make_generator(seed),
        )
        self._build_components(component_classes)
        self._register_agents()
        self._init_runtime_state()

    # ------------------------------------------------------------- construction
    def _build_components(self, component_classes: Sequence[tuple[type, dict[str, Any]]]) -> None:
        self._components: list[BaseComponent] = []
        self._components_dict: dict[str, BaseComponent] = {}
        self._shorthand_lookup: dict[str, BaseComponent] = {}
        for cls, kwargs in component_classes:
            if cls.name in self._components_dict:
                raise ValueError(f"Component {cls.name!r} is listed more than once in components")
            component = cls(
                self.world, self.episode_length, inventory_scale=self.inv_scale, **kwargs
            )
            self._components.append(component)
            self._components_dict[component.name] = component
            self._shorthand_lookup[component.shorthand] = component

    def _register_agents(self) -> None:
        for agent in self.world.agents:
            agent.register_inventory(self.resources)
            agent.register_endogenous(self.endogenous)
            agent.register_components(self._components)
        self.world.planner.register_inventory(self.resources)
        self.world.planner.register_components(self._components)

    def _init_runtime_state(self) -> None:
        self._completions = 0
        self._episode_started = False  # step() needs a reset() first
        self._logger = logs.EpisodeLogger(
            self._dense_log_frequency, self._world_dense_log_frequency
        )
        self._logger.replay_log["reset"]["seed_state"] = get_state(self.rng)
        self._merger = ObservationMerger(self.n_agents, self.collate_agent_step_and_reset_data)
        self._packagers = PackagerCache(self.n_agents, self.collate_agent_step_and_reset_data)
        # One-pass merge + flatten once the layout is known (uncollated, flattened only).
        self._obs_keys = [*(str(a.idx) for a in self.world.agents), "p"]
        self._fused: FusedFlattener | None = None
        if self._flatten_observations and not self.collate_agent_step_and_reset_data:
            self._fused = FusedFlattener(self._obs_keys[:-1])
        # Direct path (None: not tried yet, False: not available); see base/direct_obs.py.
        self._direct: DirectObservations | None | bool = None
        self._agents_and_planner: tuple[BaseAgent, ...] = tuple(self.all_agents)
        self._agent_keys = [str(a.idx) for a in self.world.agents]
        self._agent_lookup: dict[str, BaseAgent] = {str(a.idx): a for a in self.all_agents}
        self._collated_layout: CollatedLayout | None = None
        if self.collate_agent_step_and_reset_data:
            self._collated_layout = CollatedLayout(self.world.agents)
        self._masks = MaskBuilder(self._agent_lookup, self._flatten_masks, self._collated_layout)

    # ---------------------------------------------------------------- RNG/seed
    def seed(self, seed: int | None = None) -> None:
        """Re-seed the environment's generator (int >= 0; None = fresh entropy)."""
        self._install_rng_state(make_generator(seed).bit_generator.state)

    def _install_rng_state(self, seed_state: Any) -> None:
        self.world.rng = set_state(self.world.rng, seed_state)

    # ------------------------------------------------------------------- reset
    def reset(
        self, seed_state: Mapping[str, Any] | None = None, force_dense_logging: bool = False
    ) -> dict[str, Any]:
        """Start a new episode and return the observations.

        Args:
            seed_state: a ``bit_generator.state`` dict (e.g. from a replay log) to restore first.
            force_dense_logging: dense-log this episode regardless of ``dense_log_frequency``.
        """
        if seed_state is not None:
            self._install_rng_state(seed_state)
        self._logger.start_episode(self._completions, force_dense_logging, get_state(self.rng))
        self.world.timestep = 0
        self.world.step_collated_actions = None
        self._episode_started = True
        self.reset_starting_layout()
        self.reset_agent_states()
        for component in self._components:
            component.reset()
        self.additional_reset_steps()
        for agent in self.all_agents:
            agent.reset_actions()
        return self._generate_observations()

    # -------------------------------------------------------------------- step
    def step(
        self, actions: Mapping[Any, Any] | None = None, seed_state: Mapping[str, Any] | None = None
    ) -> tuple[dict, dict, dict, dict]:
        """Advance one step; return ``(obs, rew, done, info)``.

        Every action is checked before any is applied: a rejected step (TypeError,
        ValueError, KeyError naming the agent and the value) changes nothing.  A missing
        agent (or a missing ``"a"``/``"p"`` entry in collated mode) takes the NO-OP.

        Raises:
            RuntimeError: ``reset()`` was never called, or the episode is over (the last
                step returned ``done["__all__"]``): call ``reset()`` first.
        """
        if not self._episode_started:
            raise RuntimeError(f"{self.name}: call reset() before the first step()")
        if self.world.timestep >= self.episode_length:
            raise RuntimeError(
                f"{self.name}: the episode ended after episode_length={self.episode_length} "
                "steps (done['__all__'] was True); call reset() to start a new episode"
            )
        checked = None if actions is None else self._check_actions(actions)
        if seed_state is not None:
            self._install_rng_state(seed_state)
        collated, mobile_written = None, True
        if checked is not None:
            mobile_written = self._apply_actions(
                checked,
                self._logger.dense_this_episode or self._collated_actions_to_agent_dicts(),
            )
            if self._collated_layout is not None:
                collated = self._collated_layout.parsed
        # Components may read this step's collated actions from here instead of the agents'
        # dicts (BaseComponent.get_agent_actions); cleared with the actions.
        self.world.step_collated_actions = collated
        self._logger.record_step(actions, get_state(self.rng), self.world, self._agents_and_planner)
        self.world.timestep += 1
        for component in self._components:
            component.component_step()
        self.scenario_step()
        obs = self._generate_observations()
        rew = self._generate_rewards()
        done = {"__all__": self.world.timestep >= self.episode_length}
        if self.collate_agent_step_and_reset_data:
            info: dict[str, Any] = {"a": {k: {} for k in self._agent_keys}, "p": {}}
        else:
            info = {k: {} for k in obs}
        if self._logger.dense_this_episode:
            self._logger.record_rewards(split_rewards(rew, self.n_agents))
        self._reset_all_actions(mobile_written)
        if done["__all__"]:
            self._logger.finalize(self.world, self.all_agents, self._components, self.metrics)
            self._completions += 1
        return obs, rew, done, info

    # ----------------------------------------------------- observations/rewards
    def _generate_observations(self) -> dict[str, Any]:
        scale = self.episode_length if self._allow_observation_scaling else 1
        time_value = self.world.timestep / scale
        direct = self._direct.assemble(time_value) if self._direct else None
        if direct is not None:
            obs, planner_obs = direct
        else:
            obs, planner_obs = self._merged_observations(time_value)
        for key, mask in self._masks.build(self._components, self._completions).items():
            obs[key]["action_mask"] = mask
        if planner_obs:
            if len(planner_obs) != self.n_agents:
                raise ValueError(
                    f"Agent-wise planner observations must cover all {self.n_agents} agents, got {sorted(planner_obs)}"
                )
            obs["p"].update(planner_obs)
        return obs

    def _merged_observations(self, time_value: float) -> tuple[dict[str, Any], dict[str, Any]]:
        """The general path: every source's ``generate_observations`` dict, merged and
        flattened; once the layout is learned, the direct path is set up if every source
        offers a writer (``base/direct_obs.py``)."""
        sources = [("world-", self.generate_observations())]
        # generate_observations, not obs(): the merger casts the agent keys to str itself
        sources += [(c.name + "-", c.generate_observations()) for c in self._components]
        flattener = self._packagers if self._flatten_observations else None
        obs, planner_obs = merge_and_flatten(
            sources, time_value, self._merger, flattener, self._fused, self._obs_keys
        )
        if self._direct is None and self._fused is not None and self._fused.layout()[0]:
            objects = [("world-", self), *((c.name + "-", c) for c in self._components)]
            self._direct = DirectObservations.build(self._fused, objects, self._obs_keys) or False
        return obs, planner_obs

    def observation_writer(self, slots: Any) -> Any:
        """The scenario's direct-path observation writer (``base/direct_obs.py``); None
        (the default): the scenario has none and the env keeps the general path."""
        return None

    def _generate_rewards(self) -> dict[str, Any]:
        rew = self.compute_reward()
        if not isinstance(rew, dict):
            raise TypeError(f"compute_reward must return a dict, got {type(rew).__name__}")
        rew = {str(k): v for k, v in rew.items()}
        if self.collate_agent_step_and_reset_data:
            return collate_rewards(rew, self.n_agents)
        if "a" not in rew:  # already per agent: split_rewards would return a copy of it
            return rew
        return split_rewards(rew, self.n_agents)

    def generate_rewards(self) -> dict[str, Any]:
        """``compute_reward()`` with str keys (collated in collated mode)."""
        return self._generate_rewards()

    # ------------------------------------------------------ scenario interface
    @abstractmethod
    def reset_starting_layout(self) -> None:
        """Reset the world maps at the start of an episode."""

    @abstractmethod
    def reset_agent_states(self) -> None:
        """Reset agent states (inventories, locations, ...) at the start of an episode."""

    @abstractmethod
    def scenario_step(self) -> None:
        """Scenario dynamics, run after every component's ``component_step``."""

    @abstractmethod
    def generate_observations(self) -> dict[Any, dict[str, Any]]:
        """Scenario observations keyed by agent idx (or collated ``"a"``/``"p"``)."""

    @abstractmethod
    def compute_reward(self) -> dict[Any, Any]:
        """Rewards keyed by agent idx (or collated ``"a"`` array and ``"p"``)."""

    def additional_reset_steps(self) -> None:
        """Extra reset logic, run after the components have been reset."""
        return None

    def scenario_metrics(self) -> dict[str, Any] | None:
        """Scenario metrics (merged into ``metrics``)."""
        return None

    def batched_backend(self, env_backend: Any, num_envs: int, **options: Any) -> Any:
        """The backend that steps ``num_envs`` copies of this scenario for
        ``FoundationEnvWrapper`` (``env_backend``: an ``EnvBackend``; ``options``: ``device``,
        ``fused_step``, ``source`` = a kernel source registered for the scenario or None).

        Scenarios with batched backends override this; the default has none.
        """
        raise NotImplementedError(
            f"{type(self).__name__} provides no batched backends, so FoundationEnvWrapper cannot "
            f"run it on env_backend={str(env_backend)!r}; override "
            f"{type(self).__name__}.batched_backend (see scenarios/covid19/backends.py)"
        )


scenario_registry = Registry(BaseEnvironment)
