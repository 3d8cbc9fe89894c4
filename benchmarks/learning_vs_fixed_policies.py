"""Does a trained federal planner beat the fixed policies? (issue: learning check)

    python benchmarks/learning_vs_fixed_policies.py --device cuda \\
        --config covid_and_economy_gpu_learning --minutes 20

Trains a COVID-19 run config (default: the published one, 540 days, m_a 0.3, m_p 0.45, PPO,
[256, 256] models; overrides as ``key.path=value``) until its ``num_episodes`` are done or
``--minutes`` of wall-clock time have passed, then evaluates the planner greedily (most likely
allowed action for every state and the planner) on one env, and compares its episode reward
sum with three fixed policies on the same config: all states open with no subsidy, all closed
with full subsidy, closed 180 days then open.  Prints the learning curve (mean planner episode
reward of the sampled policies at each logging step), a greedy evaluation every
``--eval_every_minutes`` (included in the wall-clock budget), the table, the verdict, and how
the greedy states fare against each fixed subsidy level (does the planner's choice pay?).

``--save_models FILE`` keeps the final models; ``--evaluate_models FILE`` evaluates such a
file without training (on the CPU in seconds).  ``--json FILE`` writes everything the run
printed as numbers (wall clock, iterations, env-steps, greedy and sampled planner sums, the
verdict against every fixed policy, the greedy policies' response to the epidemic, the
comparison with the real-world policies); ``learning_seeds.py`` runs several seeds of this
script side by side and summarises their files.  The greedy policies' response (monthly
table, "is it a constant?", ``policy_response.png``) goes into ``--report_dir`` (default
``<results_dir>/report``).
"""

from __future__ import annotations

import argparse
import copy
import csv
import sys
import time
from pathlib import Path

import numpy as np
import torch

from ai_economist import foundation
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.registration import build_env_wrapper
from ai_economist.training.config import default_config_path, find_run_config, load_run_config
from ai_economist.training.training_script import policy_tag_to_agent_id_map
from ai_economist.warp_drive.training.models import build_model, greedy_masked
from ai_economist.warp_drive.training.trainer import Trainer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import learning_report  # noqa: E402
from policy_landscape import BASELINES, evaluate  # noqa: E402


def fixed_policy_sums(env) -> dict[str, float]:
    """Planner episode reward sums of the fixed policies (``policy_landscape.BASELINES``), on
    the array model (float64)."""
    planner, _ = evaluate(env, np.array(list(BASELINES.values()), dtype=np.int64))
    return {name: float(total) for name, total in zip(BASELINES, planner)}


@torch.no_grad()
def greedy_episode(
    models: dict, run_config: dict, summary: bool = False, planner_level: int | None = None
) -> float:
    """Planner episode reward sum of the greedy policies on one env (numpy backend, CPU).

    With ``summary``, also prints what the greedy policies did: the states' mean stringency
    level per 30 days and the planner's subsidy level per subsidy interval.  With
    ``planner_level``, the planner picks that subsidy level at every decision instead of its
    greedy action (the states stay greedy): how the trained states respond to subsidies.
    """
    env = foundation.make_env_instance("CovidAndEconomySimulation", **run_config["env"])
    wrapper = FoundationEnvWrapper(env, num_envs=1, env_backend="numpy")
    wrapper.reset_all_envs()
    sim = wrapper.backend.sim
    total, levels, subsidies = 0.0, [], []
    for _ in range(wrapper.episode_length):
        for tag, model in models.items():
            logits, _ = model(wrapper.observations(tag))
            wrapper.actions(tag).copy_(
                greedy_masked(logits, wrapper.action_masks(tag)).to(torch.int32)
            )
        if planner_level is not None:
            allowed = wrapper.action_masks("p")[..., planner_level] > 0
            actions = wrapper.actions("p")
            actions.copy_(torch.where(allowed, planner_level, actions).to(actions.dtype))
        wrapper.step_all_envs()
        total += float(wrapper.rewards("p")[0, 0])
        levels.append(float(np.mean(sim.stringency_level[0])))
        subsidies.append(int(np.asarray(sim.subsidy_level).reshape(-1)[0]))
    if summary:
        monthly = [np.mean(levels[k : k + 30]) for k in range(0, len(levels), 30)]
        subsidy = [c for c in run_config["env"]["components"] if "FederalGovernmentSubsidy" in c]
        interval = (
            subsidy[0]["FederalGovernmentSubsidy"].get("subsidy_interval", 90) if subsidy else 90
        )
        print("greedy states, mean stringency level per 30 days: "
              + " ".join(f"{v:.1f}" for v in monthly))  # fmt: skip
        print(f"greedy {'planner' if planner_level is None else 'forced'}, subsidy level per interval: "
              + " ".join(str(subsidies[k]) for k in range(0, len(subsidies), interval)))  # fmt: skip
    return total


def cpu_models(trainer: Trainer) -> dict:
    """CPU copies of the trainer's current models, in eval mode."""
    return {
        tag: copy.deepcopy(policy.model).to("cpu").eval()
        for tag, policy in trainer.policies.items()
    }


def greedy_now(trainer: Trainer, config: dict, summary: bool = False) -> float:
    """Greedy planner reward sum of CPU copies of the trainer's current models."""
    return greedy_episode(cpu_models(trainer), config, summary)


def subsidy_response(models: dict, config: dict, levels=(0, 5, 10, 20)) -> dict[int, float]:
    """Print (and return) the planner reward sum of the greedy states against fixed subsidy
    levels."""
    print("greedy states against a fixed subsidy level (does the trained planner's choice pay?):")
    sums = {}
    for level in levels:
        sums[level] = greedy_episode(models, config, summary=True, planner_level=level)
        print(f"   subsidy level {level:2d}: planner reward sum {sums[level]:.2f}")
    return sums


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=15.0, help="wall-clock training budget")
    parser.add_argument("--device", default="cuda")
    parser.add_argument(
        "--eval_every_minutes",
        type=float,
        default=1.0,
        help="also evaluate the planner greedily every N minutes of training (0: only at the end)",
    )
    parser.add_argument(
        "--config",
        default="",
        help="run config (default: the published covid_and_economy_environment.yaml)",
    )
    parser.add_argument(
        "--results_dir", default="", help="run directory (default runs/learning_vs_fixed/<time>)"
    )
    parser.add_argument(
        "--save_models",
        default="",
        help="write the final models' state dicts ({tag: state_dict}) to this file",
    )
    parser.add_argument(
        "--evaluate_models",
        default="",
        help="train nothing: evaluate the models of a --save_models file greedily",
    )
    parser.add_argument("--json", default="", help="write the results to this JSON file")
    parser.add_argument(
        "--report_dir", default="", help="policy-response plots (default <results_dir>/report)"
    )
    parser.add_argument(
        "--sampled_episodes",
        type=int,
        default=4,
        help="sampled (stochastic) evaluation episodes on the CPU (0: none)",
    )
    parser.add_argument(
        "--no_real_world",
        action="store_true",
        help="skip the comparison with the real-world policies on the tutorial configuration",
    )
    parser.add_argument("overrides", nargs="*", help="run-config overrides, key.path=value")
    args = parser.parse_args(argv)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    args.results_dir = args.results_dir or str(Path("runs") / "learning_vs_fixed" / stamp)
    path = (
        find_run_config(args.config)
        if args.config
        else default_config_path("covid_and_economy_environment")
    )
    config = load_run_config(path, [f"trainer.device={args.device}", *args.overrides])
    device = torch.device(args.device)
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config["env"])
    fixed = fixed_policy_sums(env)
    best_fixed = max(fixed.values())
    report_dir = Path(args.report_dir or Path(args.results_dir) / "report")
    result = {"config": path, "overrides": args.overrides, "seed": config["trainer"]["seed"]}
    if args.evaluate_models:
        models = load_models(args.evaluate_models, config)
        result.update(report(models, config, fixed, report_dir, args.sampled_episodes))
        if args.json:
            learning_report.write_json(args.json, result)
        return
    wrapper = build_env_wrapper(config, device)
    trainer = Trainer(
        wrapper,
        config,
        policy_tag_to_agent_id_map(wrapper),
        True,
        "last",
        results_directory=args.results_dir,
    )
    hardware = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"training on {hardware}: {config['trainer']['num_envs']} envs, up to {args.minutes} min")
    print(f"run config: {path}")
    print(f"overrides: {' '.join(args.overrides) or '(none)'}")
    start = time.perf_counter()
    budget = args.minutes * 60  # wall clock, greedy evaluations included
    chunk = args.eval_every_minutes * 60 if args.eval_every_minutes > 0 else budget
    greedy_curve = []
    while True:
        remaining = budget - (time.perf_counter() - start)
        trainer.train(max_seconds=max(min(chunk, remaining), 0.0))
        finished = trainer.iteration >= trainer.num_iterations
        if finished or time.perf_counter() - start >= budget:
            break
        score = greedy_now(trainer, config)
        greedy_curve.append((trainer.iteration, trainer.env_steps, score))
        print(f"greedy evaluation: iteration {trainer.iteration}, {trainer.env_steps:,} env-steps, "
              f"planner reward sum {score:.2f} (best fixed {best_fixed:.2f})", flush=True)  # fmt: skip
    wall_clock = time.perf_counter() - start
    minutes = wall_clock / 60
    result.update(
        device=hardware,
        wall_clock_s=wall_clock,
        iterations=trainer.iteration,
        env_steps=trainer.env_steps,
        greedy_curve=greedy_curve,
        sampled_training_planner_sum=learning_report.last_sampled_training_reward(trainer.run_dir),
        checkpoint=str(trainer.last_checkpoint) if trainer.last_checkpoint else None,
    )
    if args.json:  # the training figures first, in case the evaluation is cut off
        learning_report.write_json(args.json, result)
    print(
        f"trained {trainer.iteration} iterations, {trainer.env_steps:,} env-steps in {minutes:.1f} min"
        " (wall clock, greedy evaluations included)"
    )
    print("curve (iteration, env-steps, planner episode reward, agent episode reward):")
    with open(trainer.run_dir / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        if row.get("p/episode_reward"):
            print(f"   {row['iteration']}, {row['env_steps']}, {row['p/episode_reward']}, "
                  f"{row.get('a/episode_reward')}")  # fmt: skip
    print("greedy curve (iteration, env-steps, planner reward sum):")
    for it, steps, score in greedy_curve:
        print(f"   {it}, {steps}, {score:.2f}")
    models = cpu_models(trainer)
    if args.save_models:
        torch.save({tag: m.state_dict() for tag, m in models.items()}, args.save_models)
        print(f"final models written to {args.save_models}")
    trainer.graceful_close()
    result.update(
        report(models, config, fixed, report_dir, args.sampled_episodes, result["checkpoint"],
               not args.no_real_world)
    )  # fmt: skip
    if args.json:
        print(f"results written to {learning_report.write_json(args.json, result)}")


def report(
    models: dict,
    config: dict,
    fixed: dict[str, float],
    report_dir: Path | None = None,
    sampled_episodes: int = 0,
    checkpoint: str | None = None,
    real_world: bool = True,
) -> dict:
    """The greedy evaluation against the fixed policies, the verdict, the greedy policies'
    response to the epidemic, the subsidy response, sampled episodes and (with a
    ``checkpoint``) the comparison with the real-world policies; returns them as a dict."""
    best_fixed = max(fixed.values())
    trace, response = learning_report.policy_response_section(models, config, report_dir)
    greedy = float(trace.planner_reward.sum())
    for name, total in {"trained planner (greedy)": greedy, **fixed}.items():
        print(f"{name:45s} planner reward sum {total:9.2f}")
    verdicts = learning_report.verdicts(greedy, fixed)
    for name, v in verdicts.items():
        print(f"   against {name}: {'beats' if v['beats'] else 'LOSES'} by {v['margin']:+.2f}")
    verdict = "beats" if greedy > best_fixed else "does NOT beat"
    print(f"the trained planner {verdict} every fixed policy (best fixed {best_fixed:.2f})")
    out = {
        "greedy_planner_sum": greedy,
        "fixed": fixed,
        "verdicts": verdicts,
        "beats_all_fixed": bool(greedy > best_fixed),
        "policy_response": response,
        "subsidy_response": subsidy_response(models, config),
    }
    seed = 1000 * int(config["trainer"].get("seed", 0))  # other action noise for each seed
    sampled = learning_report.sampled_planner_sums(models, config, sampled_episodes, seed)
    if sampled:
        print(f"sampled policies, {len(sampled)} episodes: planner reward sum mean "
              f"{np.mean(sampled):.2f} (min {min(sampled):.2f}, max {max(sampled):.2f})")  # fmt: skip
        out.update(sampled_planner_sums=sampled, sampled_planner_sum=float(np.mean(sampled)))
    if checkpoint and real_world:
        from real_world_comparison import report as real_world_report

        out["real_world"] = real_world_report(checkpoint, report_dir and report_dir / "tutorial")
    return out


def fresh_models(config: dict) -> dict:
    """Freshly initialised CPU models of the config's policies, sized from its env."""
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config["env"])
    wrapper = FoundationEnvWrapper(env, num_envs=1, env_backend="numpy")
    wrapper.reset_all_envs()
    return {
        tag: build_model(
            policy["model"],
            wrapper.observations(tag).shape[-1],
            wrapper.action_masks(tag).shape[-1],
        )
        for tag, policy in config["policy"].items()
    }


def load_models(path: str, config: dict) -> dict:
    """CPU models (eval mode) of a ``--save_models`` file."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    models = fresh_models(config)
    for tag, model in models.items():
        model.load_state_dict(state[tag])
        model.eval()
    return models


if __name__ == "__main__":
    main()
