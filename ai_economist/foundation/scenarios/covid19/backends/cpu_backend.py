"""CPU backends of the COVID-19 scenario for ``FoundationEnvWrapper``.

* :class:`CovidNumpyBackend` (``env_backend="numpy"``) steps all envs at once through the
  batched array model (``CovidSimulation``): the fast CPU path for training.
* :class:`CovidPythonBackend` (``env_backend="cpu"``) steps ``num_envs`` copies of the
  Foundation env through its dict API, as the original CPU path did.

Both keep the trainer-facing buffers (``observations_a``, ``action_mask_p``,
``sampled_actions_a``, ``rewards_p``, ``_done_``, ...) as torch CPU tensors in a
``CUDADataManager(device="cpu")``, with the same names and shapes as the GPU backends; without
torch (``pip install ai-economist``, no extras) as numpy arrays in a
:class:`~ai_economist.foundation.host_data.NumpyDataManager`.
"""

from __future__ import annotations

import copy

import numpy as np

from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.model.metrics import (
    EPISODE_METRIC_NAMES,
    episode_metric_values,
)
from ai_economist.foundation.scenarios.covid19.model.observations import (
    FIELD_KINDS,
    ObservationLayout,
)
from ai_economist.foundation.scenarios.covid19.model.simulation import CovidSimulation
from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.env_state import check_keys, checked_array
from ai_economist.warp_drive.state import StateSpec


def placeholder_feed(
    num_envs: int, num_agents: int, layout: ObservationLayout, n_actions_a: int, n_actions_p: int
):
    """The trainer-facing buffers (name -> zero array), identical on every backend: the
    declared ``gpu_state.policy_fields`` with a leading env axis."""
    dims = {
        "num_agents": num_agents,
        "obs_dim_a": layout.obs_dim("a"),
        "obs_dim_p": layout.obs_dim("p"),
        "num_actions_a": n_actions_a,
        "num_actions_p": n_actions_p,
    }
    spec = StateSpec(gpu_state.policy_fields()).resolve(dims)
    return {f.name: np.zeros((num_envs, *f.shape), f.dtype) for f in spec}


class _HostBuffers:
    """The buffers in a CPU data store plus numpy views of them: a ``CUDADataManager``
    (torch CPU tensors) when torch is installed, else a numpy ``NumpyDataManager``."""

    def __init__(self, num_envs: int, num_agents: int, episode_length: int, feed: dict) -> None:
        from ai_economist.foundation.host_data import NumpyDataManager, torch_available

        names = list(feed) + ["_done_", "_timestep_"]
        if not torch_available():
            self.data_manager = NumpyDataManager(num_agents + 1, episode_length, num_envs, feed)
            self.views = {n: self.data_manager.data_on_device_via_torch(n) for n in names}
            return
        from ai_economist.warp_drive.data_manager import CUDADataManager, DataFeed

        self.data_manager = CUDADataManager(
            num_agents=num_agents + 1,
            episode_length=episode_length,
            num_envs=num_envs,
            device="cpu",
        )
        data = DataFeed()
        for name, value in feed.items():
            data.add_data(name, value)
        self.data_manager.push_data_to_device(data, torch_accessible=True)
        self.views = {n: self.data_manager.data_on_device_via_torch(n).numpy() for n in names}


class CovidNumpyBackend:
    """All envs in one :class:`CovidSimulation` (numpy, float64)."""

    name = EnvBackend.NUMPY

    def __init__(
        self,
        params,
        components,
        num_envs: int,
        use_real_world_policies: bool = False,
        real_world_subsidy_levels: np.ndarray | None = None,
    ) -> None:
        self.sim = CovidSimulation(
            params, components, num_envs, use_real_world_policies, real_world_subsidy_levels
        )
        self.num_envs, self.num_agents = num_envs, params.num_agents
        self.episode_length = params.episode_length
        self.layout = ObservationLayout.for_keys(self.sim.observation_fields(), params.num_agents)
        feed = placeholder_feed(
            num_envs,
            params.num_agents,
            self.layout,
            1 + params.num_stringency_levels,
            1 + components.num_subsidy_levels,
        )
        self._buffers = _HostBuffers(num_envs, params.num_agents, params.episode_length, feed)
        self.data_manager = self._buffers.data_manager
        self.views = self._buffers.views
        self.last_episode = {}

    def _write_outputs(self) -> None:
        v, sim = self.views, self.sim
        fields = sim.observation_fields()
        self.layout.flatten(fields, "a", out=v["observations_a"])
        self.layout.flatten(fields, "p", out=v["observations_p"])
        v["action_mask_a"][...], v["action_mask_p"][...] = sim.action_masks()
        v["_timestep_"][:] = sim.timestep

    def reset_all(self) -> None:
        self.sim.reset()
        self.views["_done_"][:] = 0
        self._write_outputs()

    def reset_done(self) -> None:
        done = self.views["_done_"].astype(bool)
        if done.any():
            self._remember_episode(done)
            self.sim.reset_envs(done)
            self.views["_done_"][done] = 0
            self._write_outputs()

    def step(self) -> None:
        v = self.views
        agent_rewards, planner_rewards = self.sim.step(
            v["sampled_actions_a"], v["sampled_actions_p"][:, 0]
        )
        v["rewards_a"][...] = agent_rewards
        v["rewards_p"][:, 0] = planner_rewards
        self._write_outputs()
        v["_done_"][:] = self.sim.timestep >= self.episode_length

    def state_dict(self) -> dict:
        """Host copies of the simulation state, the trainer-facing buffers and the metrics of
        the last finished episodes: everything the next steps depend on."""
        sim = self.sim
        return {
            "simulation": {a: np.array(getattr(sim, a), copy=True) for a in sim.STATE_ATTRS},
            "buffers": {name: view.copy() for name, view in self.views.items()},
            "last_episode": dict(self.last_episode),
        }

    def load_state_dict(self, state: dict) -> None:
        """Undo :meth:`state_dict` (raises ``EnvStateMismatch`` for a state that does not fit).

        Simulation arrays keep the saved dtypes and get this simulation's memory layouts
        (the slot-major stringency history), so later steps are bitwise those of the run
        that saved ``state``.
        """
        sim = self.sim
        check_keys("numpy backend", state, ("simulation", "buffers", "last_episode"))
        check_keys("numpy backend simulation", state["simulation"], sim.STATE_ATTRS)
        check_keys("numpy backend buffers", state["buffers"], self.views)
        arrays = {}
        for attr in sim.STATE_ATTRS:  # check everything before changing anything
            current = np.asarray(getattr(sim, attr))
            value = state["simulation"][attr]
            arrays[attr] = checked_array(f"simulation/{attr}", value, current.shape)
        buffers = {
            name: checked_array(f"buffers/{name}", state["buffers"][name], view.shape, view.dtype)
            for name, view in self.views.items()
        }
        for attr, value in arrays.items():
            restored = np.empty_like(getattr(sim, attr), dtype=value.dtype)  # same layout
            restored[...] = value
            setattr(sim, attr, restored)
        for name, value in buffers.items():
            self.views[name][...] = value  # in place: the views share the trainer's tensors
        self.last_episode = {str(k): float(v) for k, v in state["last_episode"].items()}

    def tensor(self, name: str):
        """The live buffer of a trainer-facing array (a CPU tensor; numpy without torch)."""
        return self.data_manager.data_on_device_via_torch(name)

    def pull(self, name: str) -> np.ndarray:
        if name in self.views:
            return self.views[name].copy()
        if name in CovidSimulation.STATE_ATTRS:
            return np.array(getattr(self.sim, name), copy=True)
        known = sorted(set(self.views) | set(CovidSimulation.STATE_ATTRS))
        raise KeyError(f"unknown array {name!r}; known: {known}")

    def set_parameter_modulations(
        self, beta_intercept=None, beta_slope=None, unemployment=None, env_ids=None
    ):
        rows = slice(None) if env_ids is None else np.asarray(env_ids)
        for value, target in (
            (beta_intercept, self.sim.beta_intercept_modulation),
            (beta_slope, self.sim.beta_slope_modulation),
            (unemployment, self.sim.unemployment_modulation),
        ):
            if value is not None:
                target[rows] = value

    def _remember_episode(self, done: np.ndarray) -> None:
        sim = self.sim
        values = episode_metric_values(
            sim.deaths[done],
            sim.vaccinated[done],
            sim.planner_health_index[done],
            sim.planner_economic_index[done],
            sim.params.us_population,
        )
        self.last_episode = {
            name: float(np.mean(v)) for name, v in zip(EPISODE_METRIC_NAMES, values)
        }

    def episode_metrics(self) -> dict[str, float]:
        return dict(self.last_episode)


def fields_from_collated_obs(obs: dict) -> dict[str, np.ndarray]:
    """Collated Foundation observations of one env -> layout fields with a batch axis of 1."""
    fields = {}
    for key, kind in FIELD_KINDS.items():
        if key not in obs["p"] and key not in obs["a"]:
            continue
        if kind == "shared":
            fields[key] = np.asarray(obs["p"][key], dtype=np.float64).reshape(1)
        elif kind == "own":
            fields[key] = np.asarray(obs["a"][key], dtype=np.float64)[None]
        elif kind == "own6":
            fields[key] = np.asarray(obs["a"][key], dtype=np.float64).T[None]
        else:
            fields[key] = np.empty(0)
    return fields


class CovidPythonBackend:
    """``num_envs`` deep copies of the Foundation env, stepped one by one (the original CPU path)."""

    name = EnvBackend.CPU

    def __init__(self, env, num_envs: int) -> None:
        self.envs = [env] + [copy.deepcopy(env) for _ in range(num_envs - 1)]
        self.num_envs, self.num_agents = num_envs, env.n_agents
        self.episode_length = env.episode_length
        obs = env.reset()
        self.layout = ObservationLayout.for_keys(
            [k for k in obs["a"] if k in FIELD_KINDS] + [k for k in obs["p"] if k in FIELD_KINDS],
            env.n_agents,
        )
        feed = placeholder_feed(
            num_envs,
            env.n_agents,
            self.layout,
            obs["a"]["action_mask"].shape[0],
            obs["p"]["action_mask"].shape[0],
        )
        self._buffers = _HostBuffers(num_envs, env.n_agents, env.episode_length, feed)
        self.data_manager = self._buffers.data_manager
        self.views = self._buffers.views
        self.last_obs = [None] * num_envs
        self.last_episode: dict[str, float] = {}

    def _write(self, e: int, obs: dict) -> None:
        v = self.views
        self.last_obs[e] = obs
        fields = fields_from_collated_obs(obs)
        self.layout.flatten(fields, "a", out=v["observations_a"][e : e + 1])
        self.layout.flatten(fields, "p", out=v["observations_p"][e : e + 1])
        v["action_mask_a"][e] = np.asarray(obs["a"]["action_mask"]).T
        v["action_mask_p"][e, 0] = obs["p"]["action_mask"]
        v["_timestep_"][e] = self.envs[e].world.timestep

    def reset_all(self) -> None:
        for e, env in enumerate(self.envs):
            self._write(e, env.reset())
        self.views["_done_"][:] = 0

    def reset_done(self) -> None:
        for e in np.flatnonzero(self.views["_done_"]):
            self.last_episode = {
                k: v
                for k, v in self.envs[e].previous_episode_metrics.items()
                if k.startswith("usa/")
            }
            self._write(e, self.envs[e].reset())
            self.views["_done_"][e] = 0

    def step(self) -> None:
        v = self.views
        for e, env in enumerate(self.envs):
            obs, rew, done, _ = env.step(
                {"a": v["sampled_actions_a"][e], "p": int(v["sampled_actions_p"][e, 0])}
            )
            v["rewards_a"][e] = rew["a"]
            v["rewards_p"][e, 0] = rew["p"]
            v["_done_"][e] = int(done["__all__"])
            self._write(e, obs)

    def state_dict(self) -> dict:
        """Not supported: the Python envs' state (agents, components, logs, RNG) is not arrays."""
        raise NotImplementedError(
            "env_backend='cpu' steps Python Foundation envs whose state (agents, components, "
            "episode logs, random generator) cannot be saved as arrays; use env_backend='numpy' "
            "(the same model, batched) for checkpoints that resume the envs exactly"
        )

    def load_state_dict(self, state: dict) -> None:
        """Not supported (see :meth:`state_dict`)."""
        self.state_dict()

    def tensor(self, name: str):
        """The live buffer of a trainer-facing array (a CPU tensor; numpy without torch)."""
        return self.data_manager.data_on_device_via_torch(name)

    def pull(self, name: str) -> np.ndarray:
        if name in self.views:
            return self.views[name].copy()
        return np.stack([np.array(getattr(env.world.simulation, name))[0] for env in self.envs])

    def set_parameter_modulations(
        self, beta_intercept=None, beta_slope=None, unemployment=None, env_ids=None
    ):
        ids = range(self.num_envs) if env_ids is None else env_ids
        for e in ids:
            self.envs[e].set_parameter_modulations(beta_intercept, beta_slope, unemployment)

    def episode_metrics(self) -> dict[str, float]:
        return dict(self.last_episode)
