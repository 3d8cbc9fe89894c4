"""``EnvWrapper``: any ``GpuEnvironment``, batched on one backend, behind the trainer's protocol.

As in WarpDrive, the wrapper never names an environment: the environment hands over its
declaration (``state_fields``, ``policies``), its reference step and its kernels, and the
wrapper implements :class:`~ai_economist.warp_drive.env_protocol.BatchedPolicyEnv` (and
``StatefulEnv``) on top of a backend::

    env = RingChase(num_chasers=2, num_runners=3)
    wrapper = EnvWrapper(env, num_envs=64, env_backend="numba")
    wrapper.reset_all_envs()
    wrapper.step_all_envs({"chaser": np.ones((64, 2), int), "runner": np.zeros((64, 3), int)})
    wrapper.rewards("chaser")            # torch tensor (64, 2) on wrapper.device

The trainer-facing tensors are the backend's own memory: device tensors for ``pycuda`` and
``numba``, CPU tensors that share memory with the reference's numpy arrays for ``numpy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.backends import make_backend
from ai_economist.warp_drive.data_manager import DONE, close_matches_message
from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.env_state import EnvStateMismatch, check_header
from ai_economist.warp_drive.errors import UnknownNameError, cudasim_enabled
from ai_economist.warp_drive.obs_layout import flat_layout
from ai_economist.warp_drive.scenario import (
    ACTION_MASK,
    OBSERVATIONS,
    REWARDS,
    SAMPLED_ACTIONS,
    GpuEnvironment,
    PolicyGroup,
)


class PolicyArrays:
    """The trainer protocol's array side, shared by ``EnvWrapper`` and Foundation's
    ``FoundationEnvWrapper``: policy specs and the per-policy tensors, found by the naming
    convention of ``PolicyGroup`` in ``self.backend`` (which has ``tensor(name)``,
    ``pull(name)``, ``episode_metrics()`` and ``data_manager``), for ``self.groups``.
    """

    groups: dict[str, PolicyGroup]
    backend: Any

    @property
    def policy_specs(self) -> dict[str, PolicySpec]:
        """Policy tag -> (agents, observation size, actions)."""
        return {
            tag: PolicySpec(g.num_agents, g.obs_dim, g.num_actions)
            for tag, g in self.groups.items()
        }

    def _field(self, pattern: str, tag: str):
        if tag not in self.groups:
            raise UnknownNameError(close_matches_message(tag, self.groups, "policy tag"))
        return self.backend.tensor(self.groups[tag].field_name(pattern))

    def observations(self, tag: str):
        """float32 ``(num_envs, agents, obs_dim)`` of policy ``tag``."""
        return self._field(OBSERVATIONS, tag)

    def action_masks(self, tag: str):
        """float32 ``(num_envs, agents, num_actions)``, 1 = allowed."""
        return self._field(ACTION_MASK, tag)

    def actions(self, tag: str):
        """int32 ``(num_envs, agents)``: the trainer writes the sampled actions here."""
        return self._field(SAMPLED_ACTIONS, tag)

    def rewards(self, tag: str):
        """float32 ``(num_envs, agents)``: the last step's rewards."""
        return self._field(REWARDS, tag)

    def done(self):
        """int32 ``(num_envs,)``: 1 where the episode ended."""
        return self.backend.tensor(DONE)

    def episode_metrics(self) -> dict[str, float]:
        """The environment's metrics of completed episodes (host floats)."""
        return self.backend.episode_metrics()

    @property
    def cuda_data_manager(self):
        """The ``CUDADataManager`` holding every declared array."""
        return self.backend.data_manager

    def pull(self, name: str) -> np.ndarray:
        """A host copy of a declared field."""
        return self.backend.pull(name)

    # -- GraphCapturableEnv (the trainer's whole-rollout CUDA graph) --------------------------
    def step_capturable(self) -> bool:
        """True on the kernel backends: their step and reset only launch device work on
        torch's current stream (driver launches, torch ops), so a CUDA graph can record them."""
        return self.env_backend.is_gpu and not cudasim_enabled()

    def graph_capture(self) -> AbstractContextManager:
        """Around a CUDA graph capture: nothing on the host to restore here."""
        return nullcontext()

    def advance_host_steps(self, num_steps: int) -> None:
        """After a replay of ``num_steps`` recorded steps: no host bookkeeping here."""


class EnvWrapper(PolicyArrays):
    """``num_envs`` copies of a ``GpuEnvironment`` stepped together on one backend.

    Args:
        env: the environment (a ``GpuEnvironment`` instance).
        num_envs: environments stepped together.
        env_backend: ``"numpy"`` (batched numpy reference, CPU tensors), ``"pycuda"`` or
            ``"numba"`` (an ``EnvBackend`` or its name).
        env_registrar: an ``EnvironmentRegistrar`` whose kernel source registered for
            ``env.name`` replaces the one of ``env.kernels()`` (custom registrations first).
        device: torch device of the kernel backends (default ``"cuda"``; ``"cpu"`` under
            ``NUMBA_ENABLE_CUDASIM=1``).
        seed: passed to ``env.initial_state`` (environments may start differently).
    """

    def __init__(
        self,
        env: GpuEnvironment,
        num_envs: int = 1,
        env_backend: str | EnvBackend = EnvBackend.NUMPY,
        env_registrar: Any = None,
        device: Any = None,
        seed: int | None = 0,
    ) -> None:
        if not isinstance(env, GpuEnvironment):
            raise TypeError(
                f"EnvWrapper needs a GpuEnvironment (ai_economist.warp_drive.scenario), got "
                f"{type(env).__name__}; Foundation environments use FoundationEnvWrapper"
            )
        self.env = env
        self.env_backend = EnvBackend.parse(env_backend)  # the one parse on this path
        self.num_envs = int(num_envs)
        self.episode_length = int(env.episode_length)
        self.seed = seed
        source = None
        if env_registrar is not None and self.env_backend.is_gpu:
            if env_registrar.has_env(env.name, self.env_backend.value):
                try:
                    source = env_registrar.get_cuda_env_src_path(env.name, self.env_backend.value)
                except KeyError:
                    source = None
        self.backend = make_backend(env, self.num_envs, self.env_backend, seed, device, source)
        self.groups = dict(env.policies())

    @classmethod
    def from_registry(
        cls,
        env_name: str,
        env_config: Mapping[str, Any] | None = None,
        num_envs: int = 1,
        env_backend: str | EnvBackend = EnvBackend.NUMPY,
        env_registrar: Any = None,
        device: Any = None,
        seed: int | None = 0,
    ) -> EnvWrapper:
        """WarpDrive style: build the environment registered as ``env_name`` for
        ``env_backend`` (custom registrar first, then the defaults) from ``env_config``."""
        from ai_economist.warp_drive.env_registrar import default_registrar

        backend = EnvBackend.parse(env_backend)
        registrar = env_registrar or default_registrar
        env_class = registrar.get(env_name, env_backend=backend.value)
        env = env_class(**dict(env_config or {}))
        return cls(env, num_envs, backend, env_registrar, device, seed)

    # ------------------------------------------------------------ protocol
    @property
    def name(self) -> str:
        """The environment's registry name."""
        return self.env.name

    @property
    def device(self):
        """The torch device of every trainer-facing tensor."""
        return self.backend.device

    def observation_layout(self, tag: str) -> tuple:
        """The segments of policy ``tag``'s observation vector as the environment declares
        them (its optional ``observation_layout(tag)``), else one plain segment
        (:mod:`~ai_economist.warp_drive.obs_layout`)."""
        declared = getattr(self.env, "observation_layout", None)
        if declared is None:
            return flat_layout(self.groups[tag].obs_dim)
        return tuple(declared(tag))

    @property
    def policy_tag_to_agent_id_map(self) -> dict[str, list[str]]:
        """Policy tag -> agent ids (thread indices as strings, WarpDrive style)."""
        return {tag: g.agent_ids for tag, g in self.groups.items()}

    def reset_all_envs(self) -> None:
        """Every environment back to its initial state."""
        self.backend.reset_all()

    def reset_only_done_envs(self) -> None:
        """Reset the environments whose ``done()`` flag is set."""
        self.backend.reset_done()

    def step_all_envs(self, actions: Mapping[str, Any] | None = None) -> None:
        """One step of every environment.

        Args:
            actions: optional host actions ``{tag: ints (num_envs, agents)}`` copied into the
                action buffers first; without it the buffers (written by the trainer) are used.
        """
        if actions is not None:
            self.set_actions(actions)
        self.backend.step()

    def set_actions(self, actions: Mapping[str, Any]) -> None:
        """Validate the host actions of every policy tag, then copy them into the action
        buffers: a rejected call leaves every buffer as it was."""
        import torch

        checked = {tag: self._checked_actions(tag, value) for tag, value in actions.items()}
        for tag, arr in checked.items():
            self.actions(tag).copy_(torch.from_numpy(arr))

    def _checked_actions(self, tag: str, value: Any) -> np.ndarray:
        """``value`` as contiguous int32 of the buffer's shape, inside ``[0, num_actions)``."""
        target = self.actions(tag)
        group = self.groups[tag]
        arr = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"actions[{tag!r}] must be integers, got dtype {arr.dtype}")
        if arr.shape != tuple(target.shape):
            raise ValueError(
                f"actions[{tag!r}] has shape {arr.shape}; expected (num_envs, agents) = "
                f"{tuple(target.shape)}"
            )
        if arr.size and (arr.min() < 0 or arr.max() >= group.num_actions):
            raise ValueError(
                f"actions[{tag!r}] must lie in [0, {group.num_actions}); got values from "
                f"{arr.min()} to {arr.max()}"
            )
        return np.ascontiguousarray(arr, dtype=np.int32)

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """Everything needed to continue stepping exactly (per-env arrays, time, done flags)."""
        return {"backend": self.env_backend.value, "state": self.backend.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        """Restore a ``state_dict`` of an identically configured wrapper."""
        check_header(state, {"backend": self.env_backend.value})
        if "state" not in state:
            raise EnvStateMismatch("env state lacks 'state'")
        self.backend.load_state_dict(state["state"])

    # ------------------------------------------------------------ WarpDrive names
    @property
    def cuda_function_manager(self):
        """The function manager of the kernel backends (``None`` for numpy)."""
        return self.backend.function_manager
