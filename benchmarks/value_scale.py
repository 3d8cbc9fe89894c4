"""How the scale of the value targets steers COVID-19 training, and what PopArt changes.

    python benchmarks/value_scale.py                       # both parts, about 6 min on 2 cores
    python benchmarks/value_scale.py --iterations 0        # part 1 only (about 1 min)

Part 1 (gradients at the start): a fresh published actor-critic ([256, 256] shared trunk),
states' data from random-action episodes of the training configuration; the gradient norm of
each loss term (policy, value x vf_loss_coeff 1, entropy x 0.05) in the trunk and the heads, for
several states' gammas, with the value targets in reward units and normalised (PopArt).

Part 2 (a short CPU training): ``covid_and_economy_gpu_learning.yaml`` with fewer envs (and
any ``key.path=value`` overrides), trained for ``--iterations`` with ``normalize_value`` off
and on for both policies, same seed.  Every ``--every`` iterations it prints, for the states'
policy: the explained variance of the values (in reward units) against the GAE targets of
the rollout they were made for, the mean value and the mean target, the gradient norm before
clipping and the entropy.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ai_economist import foundation
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.configs import env_config
from ai_economist.foundation.scenarios.covid19.registration import build_env_wrapper
from ai_economist.training.config import default_config_path, load_run_config
from ai_economist.training.training_script import policy_tag_to_agent_id_map
from ai_economist.warp_drive.training.algorithms import STAT_NAMES
from ai_economist.warp_drive.training.gae import compute_gae
from ai_economist.warp_drive.training.models import build_model, masked_log_prob_entropy
from ai_economist.warp_drive.training.trainer import Trainer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_machine import cpu_name  # noqa: E402

LEARNING_CONFIG = "covid_and_economy_gpu_learning"


def random_state_episodes(num_envs: int, seed: int) -> tuple[torch.Tensor, ...]:
    """(observations, masks, actions, rewards (T, E, N)) of the states under uniformly random
    allowed actions, planner at subsidy 0, training configuration."""
    env = foundation.make_env_instance("CovidAndEconomySimulation", **env_config())
    wrapper = FoundationEnvWrapper(env, num_envs=num_envs, env_backend="numpy")
    wrapper.reset_all_envs()
    generator = torch.Generator().manual_seed(seed)
    obs, masks, actions, rewards = [], [], [], []
    for _ in range(env.episode_length):
        mask = wrapper.action_masks("a").bool()
        noise = torch.rand(mask.shape, generator=generator)
        action = torch.where(mask, noise, -1.0).argmax(-1)
        obs.append(wrapper.observations("a").clone())
        masks.append(mask)
        actions.append(action)
        wrapper.actions("a").copy_(action.to(wrapper.actions("a").dtype))
        wrapper.actions("p").zero_()
        wrapper.step_all_envs()
        rewards.append(wrapper.rewards("a").double().clone())
    flat = [torch.stack(x).flatten(0, 2) for x in (obs, masks, actions)]
    return (*flat, torch.stack(rewards))


def discounted_returns(rewards: torch.Tensor, gamma: float) -> torch.Tensor:
    out, running = torch.zeros_like(rewards), torch.zeros_like(rewards[0])
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out.reshape(-1).float()


def gradient_norms(model, loss: torch.Tensor) -> tuple[float, float, float]:
    model.zero_grad()
    loss.backward(retain_graph=True)

    def norm(module) -> float:
        grads = [p.grad for p in module.parameters() if p.grad is not None]
        return float(torch.sqrt(sum((g**2).sum() for g in grads))) if grads else 0.0

    return norm(model.trunk), norm(model.policy_head), norm(model.value_head)


def part1(gammas: list[float], num_envs: int, seed: int) -> None:
    torch.manual_seed(seed)
    x, masks, actions, rewards = random_state_episodes(num_envs, seed)
    sample = torch.randperm(len(x), generator=torch.Generator().manual_seed(seed))[:65536]
    print(f"part 1: gradient norms of a fresh model, {len(sample):,} state-days of "
          f"{num_envs} random-action episodes (training configuration)")  # fmt: skip
    print(f"{'gamma':>6} {'targets':>10} {'mean R':>7} {'term':>8} {'loss':>10} "
          f"{'trunk':>9} {'p.head':>9} {'v.head':>9} {'clip x':>7}")  # fmt: skip
    for gamma in gammas:
        returns = discounted_returns(rewards, gamma)[sample]
        for scaled in (False, True):
            model = build_model({"fc_dims": [256, 256]}, x.shape[-1], masks.shape[-1])
            logits, values = model(x[sample])
            log_prob, entropy = masked_log_prob_entropy(logits, masks[sample], actions[sample])
            targets = (returns - returns.mean()) / returns.std() if scaled else returns
            adv = returns - (
                values.detach() * returns.std() + returns.mean() if scaled else values.detach()
            )
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            terms = {
                "policy": -(log_prob * adv).mean(),
                "value": 0.5 * (values - targets).pow(2).mean(),
                "entropy": -0.05 * entropy.mean(),
            }
            norms = {k: gradient_norms(model, v) for k, v in terms.items()}
            total = np.sqrt(sum(sum(n**2 for n in v) for v in norms.values()))
            clip = min(1.0, 10.0 / total)
            for k, loss in terms.items():
                trunk, ph, vh = norms[k]
                label = "PopArt" if scaled else "reward"
                print(f"{gamma:6.3f} {label:>10} {float(returns.mean()):7.1f} {k:>8} "
                      f"{float(loss.detach()):10.3f} {trunk:9.2e} {ph:9.2e} {vh:9.2e} {clip:7.3f}")  # fmt: skip


def explained_variance(values: torch.Tensor, targets: torch.Tensor) -> float:
    return float(1.0 - (targets - values).var() / targets.var().clamp_min(1e-12))


def train(config: dict, iterations: int, every: int) -> list[tuple]:
    wrapper = build_env_wrapper(config, torch.device("cpu"))
    trainer = Trainer(wrapper, config, policy_tag_to_agent_id_map(wrapper), True, "last")
    rows = []
    try:
        for it in range(1, iterations + 1):
            trainer._collect_rollout()
            p = trainer.policies["a"]
            if it % every == 0 or it == 1:
                values = p.buffer.values.clone()
                last = trainer.rollout.last_values["a"]
                if p.value_norm is not None:
                    values, last = p.value_norm.denormalize(values), p.value_norm.denormalize(last)
                _, targets = compute_gae(
                    p.buffer.rewards, values, trainer.dones, last,
                    p.config["gamma"], p.config["gae_lambda"],
                )  # fmt: skip
            before = p.window_stats.clone()
            trainer._update()
            trainer.iteration += 1
            trainer.env_steps += trainer.steps_per_iteration
            if it % every == 0 or it == 1:
                stats = dict(zip(STAT_NAMES, (p.window_stats - before).tolist(), strict=True))
                rows.append((it, trainer.env_steps, explained_variance(values, targets),
                             float(values.mean()), float(targets.mean()),
                             stats["grad_norm"], stats["entropy"]))  # fmt: skip
                print("  " + format_row(rows[-1]), flush=True)
    finally:
        trainer.graceful_close()
    return rows


def format_row(row: tuple) -> str:
    it, steps, ev, value, target, grad, entropy = row
    return (f"{it:5d} {steps:10,d} {ev:8.3f} {value:8.2f} {target:8.2f} {grad:10.3f} "
            f"{entropy:8.3f}")  # fmt: skip


def part2(args: argparse.Namespace) -> None:
    path = default_config_path(LEARNING_CONFIG)
    base = [
        "trainer.device=cpu", f"trainer.num_envs={args.num_envs}",
        f"trainer.train_batch_size={args.num_envs * 90}", "trainer.num_episodes=100000",
        "trainer.progress_bar=false", f"trainer.seed={args.seed}", *args.overrides,
    ]  # fmt: skip
    print(f"\npart 2: {path} with {' '.join(base)}")
    for normalize in (setting == "on" for setting in args.normalize_value):
        flags = [f"policy.{t}.normalize_value={str(normalize).lower()}" for t in ("a", "p")]
        config = load_run_config(path, base + flags)
        print(
            f"normalize_value={normalize}: states' policy (gamma {config['policy']['a']['gamma']})"
        )
        print("   it  env-steps  expl.var  value    target   grad-norm  entropy")
        start = time.perf_counter()
        train(config, args.iterations, args.every)
        print(f"  ({time.perf_counter() - start:.0f} s)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gammas", type=float, nargs="+", default=[0.98, 0.99, 0.998])
    parser.add_argument("--episodes", type=int, default=4, help="random episodes for part 1")
    parser.add_argument("--iterations", type=int, default=150, help="part 2; 0 skips it")
    parser.add_argument("--every", type=int, default=15)
    parser.add_argument("--num_envs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--normalize_value", nargs="+", default=["off", "on"], choices=("off", "on"),
                        help="part 2: the settings to train, in order")  # fmt: skip
    parser.add_argument("overrides", nargs="*", help="part 2 run-config overrides")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    print(f"CPU: {cpu_name()}, torch threads {torch.get_num_threads()}")
    part1(args.gammas, args.episodes, args.seed)
    if args.iterations > 0:
        part2(args)


if __name__ == "__main__":
    main()
