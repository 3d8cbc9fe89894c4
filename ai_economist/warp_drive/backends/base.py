"""What every backend of the generic path shares: checked allocation, resets, pulls, state.

The state of all ``num_envs`` environments lives in one ``CUDADataManager`` (torch tensors on
the backend's device, CPU tensors for the numpy backend), allocated from the environment's
declaration with per-env initial values. Done environments are reset on the device by
``CUDAEnvironmentReset``: fields with reset ``"snapshot"`` go back to their initial values,
``"zeros"`` fields to zero, ``"none"`` fields are left alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.checks.declaration import (
    check_declaration,
    check_initial_state,
    threads_per_env,
)
from ai_economist.warp_drive.data_manager import CUDADataManager
from ai_economist.warp_drive.env_reset import CUDAEnvironmentReset
from ai_economist.warp_drive.env_state import (
    EnvStateMismatch,
    as_numpy,
    check_header,
    check_keys,
    checked_array,
)
from ai_economist.warp_drive.scenario import GpuEnvironment


def shared_snapshot_row(name: str, saved: Any, live_shape: tuple[int, ...]) -> Any:
    """A saved snapshot for a shared (one-row) one: as saved, or the first row of one saved
    per env (checkpoints written before snapshots were shared), which must then be the same
    for every env (``EnvStateMismatch`` names ``name`` otherwise)."""
    arr = as_numpy(saved)
    if arr.shape != tuple(live_shape) or arr.shape[0] < 2:
        return saved
    alike = np.broadcast_to(arr[:1], arr.shape)
    if not np.array_equal(arr, alike, equal_nan=arr.dtype.kind in "fc"):
        raise EnvStateMismatch(
            f"env state 'snapshots/{name}' differs between envs; this environment resets "
            "every env to one shared row (it starts every env alike)"
        )
    return arr[:1]


class BatchedBackend:
    """Base class of the backends: ``reset_all``, ``step``, ``reset_done``, ``pull``,
    ``tensor``, ``state_dict`` / ``load_state_dict``, ``episode_metrics``, ``data_manager``.

    Subclasses implement ``step()`` and may run extra checks in ``_check_kernels()``, which is
    called after the declaration checks and before anything is allocated.
    """

    backend: EnvBackend
    function_manager: Any = None

    def __init__(self, env: GpuEnvironment, num_envs: int, seed: int | None, device: Any) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.env = env
        self.num_envs = int(num_envs)
        self.spec = env.state_spec()
        check_declaration(env, self.spec)
        self.threads_per_env = threads_per_env(env)
        self._check_kernels()
        initial = env.initial_state(self.num_envs, seed)
        check_initial_state(env, self.spec, initial, self.num_envs)
        self.data_manager = CUDADataManager(
            num_agents=int(env.num_agents),
            episode_length=int(env.episode_length),
            num_envs=self.num_envs,
            device=device,
            downcast_64bit=False,
        )
        self.spec.allocate(self.data_manager, initial, batched=not env.replicated_initial_state)
        self.resetter = CUDAEnvironmentReset(self.data_manager)

    def _check_kernels(self) -> None:
        """Kernel checks of the subclass (nothing for the numpy reference)."""

    # ------------------------------------------------------------ stepping
    def step(self) -> None:
        """Advance every environment one step with the actions in ``sampled_actions_<tag>``."""
        raise NotImplementedError

    def reset_all(self) -> None:
        """Every environment back to its initial state."""
        self.resetter.reset_when_done(self.data_manager, "force_reset")
        self._after_reset()

    def reset_done(self) -> None:
        """Reset the environments whose ``_done_`` flag is set."""
        self.resetter.reset_when_done(self.data_manager, "if_done")
        self._after_reset()

    def _after_reset(self) -> None:
        """The environment's own reset step (``KernelSpec.reset_kernels`` or
        ``GpuEnvironment.reference_reset``), run by the subclasses."""

    # ------------------------------------------------------------ data
    @property
    def device(self):
        """The torch device of the state tensors."""
        return self.data_manager.device

    def tensor(self, name: str):
        """The live torch tensor of a declared array (no copy)."""
        return self.data_manager.data_on_device_via_torch(name)

    def pull(self, name: str) -> np.ndarray:
        """A host copy of a declared field."""
        return self.data_manager.pull_data_from_device(name)

    def episode_metrics(self) -> dict[str, float]:
        """The environment's metrics of completed episodes (``GpuEnvironment.episode_metrics``)."""
        return self.env.episode_metrics(self.pull)

    def _per_env_names(self) -> list[str]:
        return [f.name for f in self.spec if f.per_env]

    def _snapshot_names(self) -> list[str]:
        return self.data_manager.reset_snapshot_names()

    def state_dict(self) -> dict:
        """Host copies of every per-env field and of the reset snapshots (each env's initial
        state, which depends on the seed); constants come from the environment."""
        dm = self.data_manager
        return {
            "env": self.env.name,
            "num_envs": self.num_envs,
            "arrays": {name: self.pull(name) for name in self._per_env_names()},
            "snapshots": {
                name: dm.snapshot(name).detach().cpu().numpy().copy()
                for name in self._snapshot_names()
            },
        }

    def load_state_dict(self, state: dict) -> None:
        """Copy a ``state_dict`` back in place; ``EnvStateMismatch`` if it does not fit."""
        import torch

        check_header(state, {"env": self.env.name, "num_envs": self.num_envs})
        check_keys(
            f"environment {self.env.name!r}", state, ("env", "num_envs", "arrays", "snapshots")
        )
        dm = self.data_manager
        targets = {}
        for group, names, get in (
            ("arrays", self._per_env_names(), self.tensor),
            ("snapshots", self._snapshot_names(), dm.snapshot),
        ):
            check_keys(f"environment {self.env.name!r} {group}", state[group], names)
            for name in names:  # everything checked before anything changes
                saved = state[group][name]
                if group == "snapshots" and dm.snapshot_is_shared(name):
                    saved = shared_snapshot_row(name, saved, dm.get_shape(name))
                value = checked_array(
                    f"{group}/{name}", saved, tuple(get(name).shape), dm.get_dtype(name)
                )
                targets[(group, name)] = (get(name), value)
        for target, value in targets.values():
            target.copy_(torch.from_numpy(np.array(value, order="C")))

    def memory_bytes(self) -> int:
        """Bytes held by the state (snapshots included)."""
        return self.data_manager.memory_bytes()
