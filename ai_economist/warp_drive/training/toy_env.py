"""A tiny ``BatchedPolicyEnv`` with a known optimal policy, for tests and demos of the trainer.

Each agent sees a one-hot "target" action (plus a few noise features and the time) and gets
reward 1 when it picks that action, 0 otherwise.  The agent policy ``"a"`` has ``num_agents``
agents and the planner policy ``"p"`` one agent, each with its own number of actions.  Random
actions are masked out (never the NO-OP, index 0, and never the target), so a masked action is
never the right answer.  The optimal episode return is ``episode_length`` per agent; a uniform
random allowed action scores about ``1 / (number of allowed actions)`` per step.

All state lives in torch tensors on ``device`` (CPU or GPU) and the env draws its randomness
from its own ``torch.Generator``, so it does not disturb the trainer's random streams.  It
implements the optional ``state_dict()`` / ``load_state_dict()`` pair that lets a checkpoint
resume reproduce the uninterrupted run bit for bit.
"""

from __future__ import annotations

import torch

from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.env_state import check_keys, checked_array
from ai_economist.warp_drive.policy_tensors import PolicyTensors


class ToyTargetEnv(PolicyTensors):
    """``num_envs`` copies of the target-matching game, stepped together."""

    name = "toy"

    def __init__(
        self,
        num_envs: int = 4,
        num_agents: int = 3,
        episode_length: int = 8,
        num_actions_agents: int = 5,
        num_actions_planner: int = 3,
        num_noise_features: int = 2,
        mask_probability: float = 0.3,
        seed: int = 0,
        device: str | torch.device = "cpu",
    ) -> None:
        self.num_envs = int(num_envs)
        self.episode_length = int(episode_length)
        self._mask_probability = float(mask_probability)
        self._noise = int(num_noise_features)
        counts = {"a": int(num_agents), "p": 1}
        actions = {"a": int(num_actions_agents), "p": int(num_actions_planner)}
        specs = {
            tag: PolicySpec(counts[tag], actions[tag] + self._noise + 1, actions[tag])
            for tag in ("a", "p")
        }
        self._allocate_policy_tensors(specs, self.num_envs, device)
        e, dev = self.num_envs, self._device
        self._gen = torch.Generator(device=dev)
        self._gen.manual_seed(int(seed))
        self._targets = {
            t: torch.zeros(e, s.num_agents, dtype=torch.long, device=dev)
            for t, s in self._specs.items()
        }
        self._hits = {t: torch.zeros(e, device=dev) for t in self._specs}
        self._timestep = torch.zeros(e, dtype=torch.int32, device=dev)
        self._last_accuracy = {t: torch.zeros((), device=dev) for t in self._specs}

    # -- protocol (the array side: PolicyTensors) -----------------------------------------
    def reset_all_envs(self) -> None:
        everything = torch.ones(self.num_envs, dtype=torch.bool, device=self._device)
        self._reset(everything)

    def reset_only_done_envs(self) -> None:
        self._reset(self._done.bool())

    def step_all_envs(self) -> None:
        for tag in self._specs:
            hit = (self._actions[tag].long() == self._targets[tag]).float()
            self._rewards[tag].copy_(hit)
            self._hits[tag] += hit.mean(-1)
        self._timestep += 1
        self._done.copy_((self._timestep >= self.episode_length).int())
        ended = self._done.bool()
        for tag in self._specs:
            # accuracy of the episodes that just ended, kept on the device until asked for
            acc = (self._hits[tag] * ended).sum() / ended.sum().clamp(min=1) / self.episode_length
            self._last_accuracy[tag] = torch.where(ended.any(), acc, self._last_accuracy[tag])
        self._draw(None)

    def episode_metrics(self) -> dict[str, float]:
        return {f"accuracy_{t}": float(v) for t, v in self._last_accuracy.items()}

    # -- checkpoint support (optional extension of the protocol) --------------------------
    def state_dict(self) -> dict:
        state = {"timestep": self._timestep, "done": self._done, "gen": self._gen.get_state()}
        for group in ("obs", "masks", "targets", "rewards", "hits", "last_accuracy"):
            for tag, value in getattr(self, f"_{group}").items():
                state[f"{group}/{tag}"] = value
        return {k: v.clone() if torch.is_tensor(v) else v for k, v in state.items()}

    def load_state_dict(self, state: dict) -> None:
        current = self.state_dict()  # check every entry first: a mismatch changes nothing
        check_keys("toy env state", state, current)
        for key, value in current.items():
            if key != "gen":
                checked_array(key, state[key], tuple(value.shape))
        self._timestep.copy_(state["timestep"])
        self._done.copy_(state["done"])
        self._gen.set_state(state["gen"].cpu())
        for key, value in state.items():
            if "/" in key:
                group, tag = key.split("/")
                getattr(self, f"_{group}")[tag].copy_(value)

    # -- internals --------------------------------------------------------------------------
    def _reset(self, which: torch.Tensor) -> None:
        """Start new episodes in the environments selected by the bool (E,) tensor ``which``."""
        keep = (~which).int()
        self._timestep.mul_(keep)
        self._done.mul_(keep)
        for tag in self._specs:
            self._hits[tag].mul_(keep.float())
        self._draw(which)

    def _draw(self, which: torch.Tensor | None) -> None:
        """New targets, masks and observations for the selected environments (None: all)."""
        time = (self._timestep.float() / self.episode_length)[:, None]
        for tag, spec in self._specs.items():
            shape = (self.num_envs, spec.num_agents)
            gen, dev = self._gen, self._device
            target = torch.randint(0, spec.num_actions, shape, generator=gen, device=dev)
            u = torch.rand((*shape, spec.num_actions), generator=gen, device=dev)
            mask = (u >= self._mask_probability).float()
            mask[..., 0] = 1.0
            mask.scatter_(-1, target.unsqueeze(-1), 1.0)
            noise = torch.randn((*shape, self._noise), generator=gen, device=dev)
            one_hot = torch.nn.functional.one_hot(target, spec.num_actions).float()
            obs = torch.cat([one_hot, noise, time.expand(shape).unsqueeze(-1)], dim=-1)
            if which is None:
                self._targets[tag].copy_(target)
                self._masks[tag].copy_(mask)
                self._obs[tag].copy_(obs)
                continue
            sel = which[:, None]
            self._targets[tag].copy_(torch.where(sel, target, self._targets[tag]))
            self._masks[tag].copy_(torch.where(sel[..., None], mask, self._masks[tag]))
            self._obs[tag].copy_(torch.where(sel[..., None], obs, self._obs[tag]))


def toy_run_config(**trainer_overrides: object) -> dict:
    """A small run configuration for the toy env (tests, examples); trainer keys overridable."""
    trainer = {"num_envs": 8, "num_episodes": 80, "train_batch_size": 80, "progress_bar": False}
    trainer.update(trainer_overrides)
    policy = {
        "algorithm": "PPO",
        "gamma": 0.5,
        "lr": 0.01,
        "entropy_coeff": 0.001,
        "num_epochs": 4,
        "num_mini_batches": 2,
        "model": {"fc_dims": [32, 32]},
    }
    return {
        "name": "toy",
        "env": {"num_agents": 3, "episode_length": 10, "seed": 0},
        "trainer": trainer,
        "policy": {"a": dict(policy), "p": {**policy, "algorithm": "A2C", "num_epochs": 1}},
        "saving": {"metrics_log_freq": 1, "model_params_save_freq": 5, "tensorboard": False},
    }
