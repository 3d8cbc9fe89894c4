"""``PolicyTensors``: the trainer protocol's array side for an environment that keeps its own
torch tensors (the toy env, the one-step economy's batched model).

A subclass calls ``_allocate_policy_tensors(specs, num_envs, device)`` in its constructor and
then reads and writes ``self._obs``, ``self._masks``, ``self._actions``, ``self._rewards``
(``{tag: tensor}``) and ``self._done``; the protocol's accessors return those tensors.
(``EnvWrapper`` gets the same side from its backend through ``env_wrapper.PolicyArrays``.)
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from ai_economist.warp_drive.env_protocol import PolicySpec


class PolicyTensors:
    """Per-policy tensors on one device, zero-initialised (masks: every action allowed)."""

    _specs: dict[str, PolicySpec]
    _device: torch.device

    def _allocate_policy_tensors(
        self, specs: Mapping[str, PolicySpec], num_envs: int, device: str | torch.device
    ) -> None:
        """Observations ``(E, agents, obs_dim)``, masks ``(E, agents, actions)`` of ones,
        int32 actions and float rewards ``(E, agents)`` per policy, and int32 ``done (E,)``."""
        self._specs = dict(specs)
        self._device = dev = torch.device(device)
        e, items = int(num_envs), self._specs.items()
        self._obs = {t: torch.zeros(e, s.num_agents, s.obs_dim, device=dev) for t, s in items}
        self._masks = {t: torch.ones(e, s.num_agents, s.num_actions, device=dev) for t, s in items}
        self._actions = {
            t: torch.zeros(e, s.num_agents, dtype=torch.int32, device=dev) for t, s in items
        }
        self._rewards = {t: torch.zeros(e, s.num_agents, device=dev) for t, s in items}
        self._done = torch.zeros(e, dtype=torch.int32, device=dev)

    @property
    def device(self) -> torch.device:
        """Where every tensor of the protocol lives."""
        return self._device

    @property
    def policy_specs(self) -> dict[str, PolicySpec]:
        """Policy tag -> (agents, observation size, actions)."""
        return dict(self._specs)

    def observations(self, tag: str) -> torch.Tensor:
        """float32 ``(num_envs, agents, obs_dim)`` of policy ``tag``."""
        return self._obs[tag]

    def action_masks(self, tag: str) -> torch.Tensor:
        """float32 ``(num_envs, agents, num_actions)``, 1 = allowed."""
        return self._masks[tag]

    def actions(self, tag: str) -> torch.Tensor:
        """int32 ``(num_envs, agents)``: the trainer writes the sampled actions here."""
        return self._actions[tag]

    def rewards(self, tag: str) -> torch.Tensor:
        """float32 ``(num_envs, agents)``: the last step's rewards."""
        return self._rewards[tag]

    def done(self) -> torch.Tensor:
        """int32 ``(num_envs,)``: 1 where the episode ended."""
        return self._done
