"""Recurrent policies in the rollout and the update (``model.type: conv_lstm``).

The scheme, chosen as the simplest one that is exact:

* **Acting.**  Each recurrent policy has one state per env and agent, ``(E, N, state_size)``
  on the trainer's device (:class:`RecurrentStates`), updated in place at every step (fixed
  addresses, so the rollout can be recorded in a CUDA graph) and zeroed for the envs whose
  episode ended at that step, before the reset env's first observation is read.
* **Storing.**  The rollout buffer keeps the state each step *started from*
  (``RolloutBuffer.states``, (T, E, N, state_size)).
* **Update: truncated back-propagation through time.**  The rollout is cut into sequences of
  ``model.seq_len`` steps (0: the whole rollout) per env and agent (:func:`sequence_batch`);
  the update re-runs each sequence from its stored first state, zeroing the state where an
  episode began inside it, and back-propagates through the sequence.  At the first epoch the
  re-run reproduces the acting log-probabilities (same weights, same states), so PPO's ratio
  starts at 1 as for the fully connected model; minibatches are drawn over sequences.
* **Checkpoints** hold every recurrent policy's current states, so a resume continues the
  interrupted episodes with the memory they had.
"""

from __future__ import annotations

from typing import Any

import torch

from ai_economist.warp_drive.training.conv_lstm import is_recurrent


def state_size(model: Any) -> int:
    """The recurrent state length of ``model`` (0: not recurrent)."""
    return int(model.state_size) if is_recurrent(model) else 0


class RecurrentStates:
    """The current recurrent state of every recurrent policy, ``{tag: (E, N, state_size)}``."""

    def __init__(self, policies: dict[str, Any], num_envs: int, device: torch.device) -> None:
        self.states = {
            tag: torch.zeros(num_envs, p.spec.num_agents, state_size(p.model), device=device)
            for tag, p in policies.items()
            if state_size(p.model)
        }

    def __contains__(self, tag: str) -> bool:
        return tag in self.states

    def __getitem__(self, tag: str) -> torch.Tensor:
        return self.states[tag]

    def reset_done(self, done: torch.Tensor) -> None:
        """Zero the states of the envs where ``done`` (E,) is non-zero (in place)."""
        if not self.states:
            return
        keep = (done == 0).to(torch.float32)[:, None, None]
        for state in self.states.values():
            state.mul_(keep)

    def zero_(self) -> None:
        """Every state back to an episode's start (after a reset of every env)."""
        for state in self.states.values():
            state.zero_()

    def state_dict(self) -> dict[str, torch.Tensor]:
        """CPU copies of the states (for checkpoints)."""
        return {tag: s.detach().cpu().clone() for tag, s in self.states.items()}

    def load_state_dict(self, saved: dict[str, torch.Tensor]) -> None:
        """Restore :meth:`state_dict` (raises ValueError naming a policy whose shape differs)."""
        for tag, state in self.states.items():
            if tag not in saved:
                raise ValueError(f"the checkpoint has no recurrent state of policy '{tag}'")
            if tuple(saved[tag].shape) != tuple(state.shape):
                raise ValueError(
                    f"policy '{tag}': the checkpoint's recurrent state has shape "
                    f"{tuple(saved[tag].shape)}, this run's {tuple(state.shape)}"
                )
            state.copy_(saved[tag])


def sequence_length(policy_config: dict, num_steps: int) -> int:
    """``model.seq_len`` resolved (0: the whole rollout of ``num_steps`` steps)."""
    return int(policy_config["model"].get("seq_len", 0) or num_steps)


def update_rows(policy: Any, num_steps: int, num_envs: int) -> int:
    """The rows a policy's update batch has: agent-steps, or sequences when recurrent."""
    return update_rows_of(policy.model, policy.config, policy.spec, num_steps, num_envs)


def update_rows_of(model: Any, config: dict, spec: Any, num_steps: int, num_envs: int) -> int:
    """:func:`update_rows` of a model, its policy config and its ``PolicySpec``."""
    rows = num_envs * spec.num_agents
    if is_recurrent(model):
        return rows * (num_steps // sequence_length(config, num_steps))
    return rows * num_steps


def _to_sequences(x: torch.Tensor, seq_len: int) -> torch.Tensor:
    """(T, E, N, ...) to (T / L * E * N, L, ...): sequence-major, steps in order."""
    t, e, n = x.shape[:3]
    rest = x.shape[3:]
    x = x.reshape(t // seq_len, seq_len, e, n, *rest).movedim(1, 3)
    return x.reshape(t // seq_len * e * n, seq_len, *rest)


def sequence_fields(
    buf: Any, dones: torch.Tensor, advantages: torch.Tensor, returns: torch.Tensor, seq_len: int
) -> dict[str, torch.Tensor]:
    """The fields of a recurrent policy's update batch (see :class:`.algorithms.Batch`):
    each (S, L, ...), with ``states`` (S, state_size) the state each sequence started from
    and ``resets`` (S, L) True where the step is an episode's first (the previous step was
    done)."""
    t, e, n = buf.actions.shape
    if t % seq_len:
        raise ValueError(f"model.seq_len ({seq_len}) must divide the rollout's {t} steps")
    starts = torch.zeros(t, e, dtype=torch.bool, device=dones.device)
    starts[1:] = dones[:-1] != 0
    starts = starts[:, :, None].expand(t, e, n)
    first = buf.states[::seq_len]  # (T / L, E, N, state_size)
    return {
        "obs": _to_sequences(buf.obs, seq_len),
        "masks": _to_sequences(buf.masks, seq_len),
        "actions": _to_sequences(buf.actions, seq_len),
        "log_probs": _to_sequences(buf.log_probs, seq_len),
        "advantages": _to_sequences(advantages, seq_len),
        "returns": _to_sequences(returns, seq_len),
        "states": first.reshape(-1, first.shape[-1]),
        "resets": _to_sequences(starts, seq_len),
    }
