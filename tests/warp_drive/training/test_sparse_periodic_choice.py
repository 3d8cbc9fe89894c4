"""The trainer learns a choice of the gather-trade-build planner's shape: seven agents of one
policy (one per bracket), each picking one of 21 rates on the first step of every 10-step
period (NO-OP only on the other nine: masked), paid once, at the period's end, for how close
the rates are to 0.3. A check that the masked, sparse, delayed-reward pipeline learns (session
17's probe: the GTB planner's failure to learn is not the pipeline's)."""

from __future__ import annotations

import json

import pytest
import torch

from ai_economist.warp_drive.env_protocol import PolicySpec
from ai_economist.warp_drive.policy_tensors import PolicyTensors
from ai_economist.warp_drive.training.trainer import Trainer

BEST_RATE = 0.3


class PeriodicChoice(PolicyTensors):
    """``num_envs`` envs of 10 periods x 10 steps; policy ``p`` with ``n_agents`` agents."""

    name = "periodic_choice"

    def __init__(self, num_envs: int, period: int = 10, periods: int = 10, num_rates: int = 21,
                 n_agents: int = 7) -> None:  # fmt: skip
        self.num_envs, self.period, self.episode_length = num_envs, period, period * periods
        self.num_rates, self.n_agents = num_rates, n_agents
        obs_dim = period + 2 + n_agents  # position one-hot, time, is-first-step, agent one-hot
        spec = PolicySpec(n_agents, obs_dim, num_rates + 1)
        self._allocate_policy_tensors({"p": spec}, num_envs, "cpu")
        self._t = torch.zeros(num_envs, dtype=torch.long)
        self._rates = torch.zeros(num_envs, n_agents)
        self._score = torch.zeros(num_envs)
        self.last_payoff = float("nan")

    def reset_all_envs(self) -> None:
        self._reset(torch.ones(self.num_envs, dtype=torch.bool))

    def reset_only_done_envs(self) -> None:
        self._reset(self._done.bool())

    def _reset(self, which: torch.Tensor) -> None:
        self._t[which] = 0
        self._done[which] = 0
        self._score[which] = 0.0
        self._write_obs_and_masks()

    def _write_obs_and_masks(self) -> None:
        pos = self._t % self.period
        obs = torch.zeros(self.num_envs, self.n_agents, self.period + 2 + self.n_agents)
        obs[torch.arange(self.num_envs), :, pos] = 1.0
        obs[..., self.period] = (self._t.float() / self.episode_length)[:, None]
        obs[..., self.period + 1] = (pos == 0).float()[:, None]
        obs[..., self.period + 2 :] = torch.eye(self.n_agents)
        self._obs["p"].copy_(obs)
        masks = torch.zeros(self.num_envs, self.n_agents, self.num_rates + 1)
        masks[..., 0] = 1.0
        masks[pos == 0, :, 1:] = 1.0
        self._masks["p"].copy_(masks)

    def step_all_envs(self) -> None:
        pos = self._t % self.period
        picked = (self._actions["p"].long() - 1).clamp(min=0).float() / (self.num_rates - 1)
        self._rates = torch.where((pos == 0)[:, None], picked, self._rates)
        period_end = pos == self.period - 1
        payoff = -4.0 * ((self._rates - BEST_RATE) ** 2).mean(-1)
        reward = torch.where(period_end, payoff, torch.zeros_like(payoff))
        self._score += reward
        self._rewards["p"].copy_(reward[:, None].expand(-1, self.n_agents))
        self._t += 1
        self._done.copy_((self._t >= self.episode_length).int())
        if self._done.any():
            periods = self.episode_length // self.period
            self.last_payoff = float(self._score[self._done.bool()].mean()) / periods
        self._write_obs_and_masks()

    def episode_metrics(self) -> dict:
        return {"payoff_per_period": self.last_payoff, "mean_rate": float(self._rates.mean())}


@pytest.mark.filterwarnings("ignore:PeriodicChoice has no state_dict")
def test_a_masked_periodic_choice_paid_at_the_period_end_is_learnt(tmp_path) -> None:
    env = PeriodicChoice(num_envs=32)
    batch = 32 * 200
    config = {
        "name": "periodic_choice",
        "env": {},
        "trainer": {
            "num_envs": 32,
            "num_episodes": 30 * batch // env.episode_length,
            "train_batch_size": batch,
            "progress_bar": False,
            "seed": 0,
        },
        "policy": {
            "p": {
                "algorithm": "PPO",
                "gamma": 1.0,
                "gae_lambda": 1.0,
                "lr": 3e-3,
                "entropy_coeff": 0.01,
                "num_epochs": 4,
                "num_mini_batches": 4,
                "vf_loss_coeff": 0.5,
                "clip_param": 0.3,
                "model": {"fc_dims": [64, 64]},
            }
        },
        "saving": {"metrics_log_freq": 1, "model_params_save_freq": 10**6, "tensorboard": False},
    }
    agents = {"p": [str(i) for i in range(env.n_agents)]}
    trainer = Trainer(env, config, agents, True, "first", results_directory=tmp_path,
                      verbose=False)  # fmt: skip
    trainer.train()
    trainer.graceful_close()
    rows = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    first, last = rows[0], rows[-1]
    assert first["env/payoff_per_period"] < -0.3  # uniform rates: -4 x E[(r - 0.3)^2] = -0.49
    assert last["env/payoff_per_period"] > -0.05
    assert abs(last["env/mean_rate"] - BEST_RATE) < 0.05
