"""``FoundationEnvWrapper``: one Foundation scenario, ``num_envs`` copies, on a chosen backend.

Backends (``env_backend``, an ``EnvBackend`` or its name) come from the scenario itself
(``BaseEnvironment.batched_backend``; the wrapper names no scenario). COVID-19 has all four:

* ``"cpu"``: deep copies of the Python env stepped through the dict API (the original CPU path);
* ``"numpy"``: the batched array model, all envs at once on the CPU (fast CPU training);
* ``"pycuda"``: CUDA C kernels loaded with pycuda, one block per env, one thread per agent;
* ``"numba"``: the Numba twins of those kernels (also runs under ``NUMBA_ENABLE_CUDASIM=1``).

On GPU backends the first ``reset_all_envs()`` runs on the host and is copied to the device;
later resets run on the device.  On every backend the wrapper implements the trainer
contract :class:`ai_economist.warp_drive.env_protocol.BatchedPolicyEnv`, and
``cuda_data_manager.pull_data_from_device(name)`` returns a host copy of a named array
(``observations_a``, ``rewards_p``, ``_done_``, ...).  ``step_all_envs`` also accepts host
actions ``{"a": int (num_envs, n_agents), "p": int (num_envs,)}`` for tests and debugging.

Host actions follow the dict API's rules (``env.step``): a missing ``"a"`` or ``"p"`` entry
is the NO-OP (action 0) for that policy, and float arrays are accepted only when every value
is an integer (``as_integer_actions``).  Every env ends its episode after ``episode_length``
steps, all at once; stepping again before ``reset_only_done_envs()`` or ``reset_all_envs()``
raises a ``RuntimeError`` (the trainer resets done envs after every step, so it never does).
Without torch installed, the ``numpy`` and ``cpu`` backends keep their buffers as numpy arrays
(``foundation.host_data``); the GPU backends and the trainer need torch.

``state_dict()`` / ``load_state_dict()`` save and restore the envs mid-episode (simulation
arrays, time steps, done flags, observations, masks, episode metrics) on the ``numpy`` and
GPU backends, so a resumed run steps exactly as the uninterrupted one; the ``cpu`` backend
raises ``NotImplementedError``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ai_economist.foundation.base.collation import as_integer_actions
from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.env_state import check_header, check_keys
from ai_economist.warp_drive.env_wrapper import PolicyArrays
from ai_economist.warp_drive.scenario import PolicyGroup

BACKENDS: tuple[EnvBackend, ...] = tuple(EnvBackend)


def _box_space(value: Any):
    from gymnasium import spaces

    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        info = np.iinfo(arr.dtype)
        return spaces.Box(low=info.min, high=info.max, shape=arr.shape, dtype=arr.dtype)
    return spaces.Box(low=-1e20, high=1e20, shape=arr.shape, dtype=np.float32)


def _dict_space(obs: dict):
    from gymnasium import spaces

    return spaces.Dict(
        {k: _dict_space(v) if isinstance(v, dict) else _box_space(v) for k, v in obs.items()}
    )


def _layout(obs: dict) -> dict:
    """The nesting of ``obs`` with each leaf an uninitialised array of its shape and dtype: what
    the spaces need, safe from later changes to the returned observations."""
    return {
        k: _layout(v) if isinstance(v, dict) else np.empty_like(np.asarray(v))
        for k, v in obs.items()
    }


def split_collated(obs: dict, n_agents: int) -> dict:
    """Collated ``{"a": {k: (..., n)}, "p": ...}`` -> per-agent ``{"0": {...}, ..., "p": ...}``."""
    out = {str(i): {k: np.asarray(v)[..., i] for k, v in obs["a"].items()} for i in range(n_agents)}
    out["p"] = obs["p"]
    return out


class FoundationEnvWrapper(PolicyArrays):
    """Run ``num_envs`` copies of a Foundation env on the CPU or a GPU (see module docstring).

    The trainer protocol's array side (policy specs, ``observations`` / ``action_masks`` /
    ``actions`` / ``rewards`` / ``done``, ``episode_metrics``, ``pull``,
    ``cuda_data_manager``) is the generic ``EnvWrapper``'s (``PolicyArrays``), for the policy
    groups ``"a"`` (the mobile agents, threads ``0..n-1``) and ``"p"`` (the planner).

    Args:
        env_obj: a Foundation env instance (or give ``env_name`` + ``env_config`` + ``env_registrar``).
        env_name: registered env name, used with ``env_registrar``.
        env_config: kwargs for the env class.
        num_envs: number of environment copies stepped together.
        use_cuda: as the original: True selects the ``"pycuda"`` backend unless ``env_backend`` says otherwise.
        env_registrar: ``EnvironmentRegistrar`` for env classes / custom kernel sources.
        process_id: this process's GPU (``cuda:<process_id>``) when ``device`` is not given.
        env_backend: ``"cpu"``, ``"numpy"``, ``"pycuda"`` or ``"numba"``.
        device: torch device for GPU backends (default ``cuda:<process_id>``).
        fused_step: GPU backends step with the scenario's one fused kernel (fast) instead of
            launching its per-component step kernels and ``CudaComputeReward`` in turn; both
            give identical results (tested).

    The arguments after ``env_registrar`` are keyword-only: 1.7.1's ``event_messenger``
    (unused) is gone, so a positional ``process_id`` would otherwise land elsewhere.
    """

    def __init__(
        self,
        env_obj=None,
        env_name: str | None = None,
        env_config: dict | None = None,
        num_envs: int = 1,
        use_cuda: bool = False,
        env_registrar=None,
        *,
        process_id: int = 0,
        env_backend: str | EnvBackend | None = None,
        device=None,
        fused_step: bool = True,
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        backend = EnvBackend.parse(
            env_backend or (EnvBackend.PYCUDA if use_cuda else EnvBackend.CPU)
        )
        self.env = (
            env_obj
            if env_obj is not None
            else self._build_env(env_name, env_config, env_registrar, backend)
        )
        self.env_backend, self.use_cuda = backend, backend.is_gpu
        self.num_envs, self.process_id = int(num_envs), process_id
        self.n_agents = self.env.num_agents  # mobile agents + planner (52 for COVID-19)
        self.episode_length = self.env.episode_length
        self.env_registrar = env_registrar
        first_obs = self.env.reset()
        self._first_obs = (
            split_collated(first_obs, self.env.n_agents) if "a" in first_obs else first_obs
        )
        self._obs_layout = _layout(self._first_obs)  # the spaces are built on first use
        self.fused_step = bool(fused_step)
        self.backend = self._build_backend(device)
        self.groups = self._policy_groups()
        self._reset_on_host_done = False
        self._steps_in_episode = 0  # every env steps and ends its episodes in lockstep

    @functools.cached_property
    def observation_space(self) -> dict:
        """Per agent id, a gymnasium ``Dict`` of ``Box`` spaces shaped like the first reset's
        observations (built on first access, so training never imports gymnasium)."""
        return {k: _dict_space(v) for k, v in self._obs_layout.items()}

    @functools.cached_property
    def action_space(self) -> dict:
        """Per agent id, a gymnasium ``Discrete`` or ``MultiDiscrete`` (built on first access)."""
        return self._action_spaces()

    # ------------------------------------------------------------------ setup
    @staticmethod
    def _build_env(env_name, env_config, env_registrar, backend):
        if env_name is None or env_registrar is None:
            raise ValueError("give either env_obj, or env_name with env_config and env_registrar")
        return env_registrar.get(env_name, use_cuda=backend.is_gpu)(**(env_config or {}))

    def _action_spaces(self) -> dict:
        from gymnasium import spaces

        out = {}
        for agent in self.env.all_agents:
            n = agent.action_spaces
            if np.ndim(n) == 0:
                out[str(agent.idx)] = spaces.Discrete(int(n))
            else:
                out[str(agent.idx)] = spaces.MultiDiscrete(np.asarray(n, dtype=np.int64))
        return out

    def _policy_groups(self) -> dict[str, PolicyGroup]:
        """``"a"`` then ``"p"``, sized from the backend's trainer-facing arrays."""
        dm = self.backend.data_manager
        groups, first = {}, 0
        for tag in ("a", "p"):
            _, agents, obs_dim = dm.get_shape(f"observations_{tag}")
            actions = dm.get_shape(f"action_mask_{tag}")[2]
            groups[tag] = PolicyGroup(tag, first, int(agents), int(obs_dim), int(actions))
            first += int(agents)
        return groups

    def _build_backend(self, device):
        """The scenario's own backend (``env.batched_backend``): the wrapper names no scenario.
        GPU backends get the kernel source registered for ``env.name`` (custom first)."""
        source = None
        if self.env_backend.is_gpu:
            from ai_economist.warp_drive.registrar import default_registrar

            if device is None and self.process_id:
                device = f"cuda:{self.process_id}"  # one GPU per process
            registrar = self.env_registrar or default_registrar
            try:  # custom registrations come first, then the built-in kernels
                source = registrar.get_cuda_env_src_path(self.env.name, self.env_backend.value)
            except KeyError:
                source = None
        return self.env.batched_backend(
            self.env_backend,
            self.num_envs,
            device=device,
            fused_step=self.fused_step,
            source=source,
        )

    # --------------------------------------------------------- WarpDrive API
    @property
    def cuda_function_manager(self):
        return getattr(self.backend, "function_manager", None)

    def reset_all_envs(self) -> dict:
        """Reset every env. The first call returns the host observations of env 0 (per agent);
        later calls reset on the backend and return ``{}`` (GPU/numpy) or env 0's observations (cpu)."""
        first = not self._reset_on_host_done
        self._reset_on_host_done = True
        self.backend.reset_all()
        self._steps_in_episode = 0
        if first:
            return self._first_obs
        if self.env_backend is EnvBackend.CPU:
            return split_collated(self.backend.last_obs[0], self.env.n_agents)
        return {}

    @contextmanager
    def graph_capture(self) -> Iterator[None]:
        """Around a CUDA graph capture of steps: the recorded steps have not run, so the host
        step counter is put back afterwards."""
        saved = self._steps_in_episode
        try:
            yield
        finally:
            self._steps_in_episode = saved

    def advance_host_steps(self, num_steps: int) -> None:
        """After a replay of ``num_steps`` recorded (step, reset-if-done) pairs: every env
        ends its episode every ``episode_length`` steps, in lockstep."""
        self._steps_in_episode = (self._steps_in_episode + num_steps) % self.episode_length

    def reset_only_done_envs(self) -> None:
        """Reset the envs whose ``_done_`` flag is set (on the device for GPU backends)."""
        self.backend.reset_done()
        if self._steps_in_episode >= self.episode_length:
            self._steps_in_episode = 0  # all envs were done: they end their episodes together

    def step_all_envs(self, actions: dict | None = None):
        """Step every env. ``actions`` = None reads the action buffers; host actions
        ``{"a": (num_envs, n_agents), "p": (num_envs,)}`` are checked, then copied into them
        (a missing entry is the NO-OP; see the module docstring).

        On the ``"cpu"`` backend with one env, per-agent actions ``{"0": a0, ..., "p": ap}``
        (any key besides ``"a"`` and ``"p"``) step the Python env and return
        ``(obs, rew, done, info)`` per agent, as the original.

        Raises:
            RuntimeError: the envs finished their episode (``episode_length`` steps) and were
                not reset since.
        """
        if (
            actions is not None
            and self.env_backend is EnvBackend.CPU
            and any(key not in ("a", "p") for key in actions)
        ):
            return self._legacy_cpu_step(actions)
        if self._steps_in_episode >= self.episode_length:
            raise RuntimeError(
                f"all {self.num_envs} envs finished their episode after episode_length="
                f"{self.episode_length} steps; call reset_only_done_envs() (as the trainer does "
                "after every step) or reset_all_envs() before stepping again"
            )
        if actions is not None:
            self._load_actions(actions)
        self.backend.step()
        self._steps_in_episode += 1
        return None

    def _legacy_cpu_step(self, actions: dict):
        if self.num_envs != 1:
            raise ValueError(
                "per-agent action dicts need num_envs=1; pass {'a': (num_envs, n), 'p': (num_envs,)}"
            )
        if not self._reset_on_host_done:
            self.reset_all_envs()
        env = self.backend.envs[0]
        obs, rew, done, info = env.step(actions)
        n = env.n_agents
        rew_split = {str(i): float(r) for i, r in enumerate(np.asarray(rew["a"]))}
        rew_split["p"] = rew["p"]
        info_split = {str(i): {} for i in range(n)}
        info_split["p"] = {}
        return split_collated(obs, n), rew_split, done, info_split

    def _load_actions(self, actions: dict) -> None:
        """Check every host action array, then copy them into the action buffers."""
        n = self.env.n_agents
        unknown = sorted(str(k) for k in actions if k not in ("a", "p"))
        if unknown:
            raise KeyError(f"host actions take the keys 'a' and 'p', got {unknown}")
        checked = {}
        for tag, shape in (("a", (self.num_envs, n)), ("p", (self.num_envs,))):
            if tag not in actions:  # the NO-OP, as a missing entry in env.step
                checked[tag] = np.zeros(shape, np.int64)
                continue
            arr = as_integer_actions(f"actions[{tag!r}]", actions[tag])
            if arr.shape != shape:
                raise ValueError(f"actions[{tag!r}] must have shape {shape}, got {arr.shape}")
            limit = self.policy_specs[tag].num_actions
            if arr.min() < 0 or arr.max() >= limit:
                raise ValueError(
                    f"actions[{tag!r}] must be in 0..{limit - 1}, got {arr.min()}..{arr.max()}"
                )
            checked[tag] = arr
        for tag, arr in checked.items():
            buffer = self.actions(tag)
            if isinstance(buffer, np.ndarray):  # the numpy data store (no torch)
                buffer[...] = arr.reshape(buffer.shape)
                continue
            import torch

            buffer.copy_(torch.as_tensor(arr.reshape(buffer.shape), dtype=buffer.dtype))

    reset = reset_all_envs
    step = step_all_envs

    # ----------------------------------------------------- trainer protocol
    @property
    def device(self):
        """The torch device of the buffers (``"cpu"`` for the numpy data store, no torch)."""
        done = self.cuda_data_manager.data_on_device_via_torch("_done_")
        return "cpu" if isinstance(done, np.ndarray) else done.device

    def set_parameter_modulations(
        self, beta_intercept=None, beta_slope=None, unemployment=None, env_ids=None
    ):
        """Scale infection-rate intercepts/slopes and the unemployment response (per env on batched backends)."""
        self.backend.set_parameter_modulations(beta_intercept, beta_slope, unemployment, env_ids)

    # ------------------------------------------------------ checkpoint state
    STATE_FORMAT = 1

    def _state_header(self) -> dict[str, Any]:
        return {
            "format_version": self.STATE_FORMAT,
            "backend": self.env_backend.value,
            "num_envs": self.num_envs,
            "num_agents": self.env.n_agents,
            "episode_length": self.episode_length,
        }

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue stepping bit for bit, as host copies.

        Returns ``{"format_version", "backend", "num_envs", "num_agents", "episode_length",
        "reset_on_host_done", "backend_state"}``: ``backend_state`` holds numpy arrays (the
        numpy backend: the ``CovidSimulation`` state arrays, the trainer-facing buffers and the
        last episode metrics; GPU backends: every declared per-env device array, pulled to the
        host) and plain values.  No backend draws random numbers, so there is no RNG state.

        Raises:
            NotImplementedError: on the ``cpu`` backend (Python envs, see its message).
        """
        state = self._state_header()
        state["reset_on_host_done"] = bool(self._reset_on_host_done)
        state["backend_state"] = self.backend.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (numpy arrays or torch tensors on any device).

        Raises:
            EnvStateMismatch: the state was saved on another backend, with other sizes, or
                lacks a field (nothing is changed then).
            NotImplementedError: on the ``cpu`` backend.
        """
        header = self._state_header()
        check_header(state, header)
        check_keys("FoundationEnvWrapper", state, [*header, "reset_on_host_done", "backend_state"])
        self.backend.load_state_dict(state["backend_state"])
        self._reset_on_host_done = bool(state["reset_on_host_done"])
        self._steps_in_episode = int(np.max(self.backend.pull("_timestep_")))
