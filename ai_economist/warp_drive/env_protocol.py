"""The contract between a batched multi-agent environment and the trainer.

Everything the trainer touches is a torch tensor that lives on ``env.device``: observations,
action masks, the action buffers the trainer writes sampled actions into, rewards and done
flags.  ``FoundationEnvWrapper`` implements this protocol on every backend (``cpu``,
``numba``, ``pycuda``); on a GPU backend the tensors are views of the simulator's own device
memory, so a training loop that follows this protocol never copies data to the host.

Policies are identified by tags (``"a"`` for the 51 US states, ``"p"`` for the federal
planner in the COVID-19 scenario).  Every agent of one policy shares the same observation
size and number of actions.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class PolicySpec:
    """Shapes of one policy's slice of the environment.

    Attributes:
        num_agents: agents that act with this policy in each environment.
        obs_dim: length of one agent's flat observation vector.
        num_actions: size of the (single) discrete action space, NO-OP included.
    """

    num_agents: int
    obs_dim: int
    num_actions: int


@runtime_checkable
class BatchedPolicyEnv(Protocol):
    """A batch of ``num_envs`` environments stepped together on ``device``.

    Tensor shapes (E = num_envs, N = policy_specs[tag].num_agents):

    * ``observations(tag)``: float32 (E, N, obs_dim), valid after reset and after each step.
    * ``action_masks(tag)``: float32 (E, N, num_actions), 1 = allowed. NO-OP (index 0) is always allowed.
    * ``actions(tag)``: int32 (E, N), written by the trainer before ``step()``.
    * ``rewards(tag)``: float32 (E, N), the rewards of the last step.
    * ``done()``: int32 (E,), 1 where the episode ended at the last step.
    """

    num_envs: int
    episode_length: int

    @property
    def device(self): ...  # torch.device

    @property
    def policy_specs(self) -> dict[str, PolicySpec]: ...

    def reset_all_envs(self) -> None:
        """Reset every environment; observations are valid afterwards."""

    def step_all_envs(self) -> None:
        """Advance every environment by one step using the action buffers."""

    def reset_only_done_envs(self) -> None:
        """Reset the environments whose ``done()`` flag is set; leave the others alone."""

    def observations(self, tag: str): ...

    def action_masks(self, tag: str): ...

    def actions(self, tag: str): ...

    def rewards(self, tag: str): ...

    def done(self): ...

    def episode_metrics(self) -> dict[str, float]:
        """Scenario metrics of the most recently completed episodes (host floats). May be empty."""


@runtime_checkable
class StatefulEnv(Protocol):
    """Optional extension of :class:`BatchedPolicyEnv`: the env's full state for checkpoints.

    ``state_dict()`` returns everything needed to continue stepping bit for bit (simulation
    arrays, time steps, done flags, observations, masks, random streams): a dict of numpy
    arrays, torch tensors and plain Python values, nested dicts allowed.  After
    ``load_state_dict(state)`` the env steps exactly as the one that produced ``state``.
    Either method may raise ``NotImplementedError`` (this env or backend cannot be captured)
    or :class:`ai_economist.warp_drive.env_state.EnvStateMismatch` (the state was saved by a
    differently configured env); the trainer then restarts the episodes, with a warning.
    """

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


@runtime_checkable
class GraphCapturableEnv(Protocol):
    """Optional extension of :class:`BatchedPolicyEnv`: its step can be recorded in a CUDA graph.

    The trainer (``trainer.cuda_graphs``) then captures a whole rollout -- policy, env step,
    reset of done envs -- once and replays it.  During a capture nothing runs: the calls are
    recorded, and they run at each replay, so the env's host-side bookkeeping must be kept
    apart from the device work:

    * ``step_capturable()``: True when ``step_all_envs`` and ``reset_only_done_envs`` only
      launch device work on torch's current stream (no host synchronisation, no reads of
      device values on the host, no allocation that must outlive the call);
    * ``graph_capture()``: a context manager around the capture that restores the host-side
      bookkeeping afterwards (the recorded steps have not happened yet);
    * ``advance_host_steps(n)``: after a replay of ``n`` recorded (step, reset-if-done) pairs,
      bring the host-side bookkeeping to where ``n`` eager calls would have left it.
    """

    def step_capturable(self) -> bool: ...

    def graph_capture(self) -> AbstractContextManager: ...

    def advance_host_steps(self, num_steps: int) -> None: ...
