"""CPU-vs-backend consistency checker (WarpDrive's ``EnvironmentCPUvsGPU``, rebuilt).

Runs the reference Python env (``env_backend="cpu"``) and another backend side by side for
several envs and full episodes under the same random valid actions, and reports the first
observation field, env, agent and step where they differ beyond tolerance.

    python -m ai_economist.foundation.consistency --backend numba --num_envs 3 --num_episodes 2
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ai_economist.warp_drive.backend_names import EnvBackend

ARRAYS = (
    "observations_a",
    "observations_p",
    "action_mask_a",
    "action_mask_p",
    "rewards_a",
    "rewards_p",
    "_done_",
)


@dataclass
class Mismatch:
    array: str
    field: str
    step: int
    env: int
    agent: int
    reference: float
    candidate: float

    def __str__(self) -> str:
        return (
            f"{self.array}[{self.field}] differs at step {self.step}, env {self.env}, agent {self.agent}: "
            f"reference {self.reference!r} vs candidate {self.candidate!r}"
        )


@dataclass
class ConsistencyReport:
    backend: str
    num_envs: int
    steps: int = 0
    max_abs_diff: dict[str, float] = field(default_factory=dict)
    first_mismatch: Mismatch | None = None

    @property
    def ok(self) -> bool:
        return self.first_mismatch is None

    def __str__(self) -> str:
        head = f"{self.backend} vs cpu: {self.num_envs} envs, {self.steps} steps: "
        if self.ok:
            worst = ", ".join(f"{k} {v:.3g}" for k, v in self.max_abs_diff.items())
            return head + f"consistent (max abs diff: {worst})"
        return head + f"MISMATCH: {self.first_mismatch}"


def _field_name(wrapper, array: str, index: int) -> str:
    if not array.startswith("observations_"):
        return "value" if not array.startswith("action_mask") else f"action {index}"
    layout = wrapper.backend.layout
    for key, (offset, size) in layout.offsets(array[-1]).items():
        if offset <= index < offset + size:
            return f"{key}[{index - offset}]"
    return f"index {index}"


AFTER_RESET = ("observations_a", "observations_p", "action_mask_a", "action_mask_p", "_done_")


def _compare(report, ref, cand, step, rtol, atol, names=ARRAYS) -> None:
    for name in names:
        a, b = (
            ref.cuda_data_manager.pull_data_from_device(name),
            cand.cuda_data_manager.pull_data_from_device(name),
        )
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        diff = np.abs(a64 - b64)
        report.max_abs_diff[name] = max(
            report.max_abs_diff.get(name, 0.0), float(diff.max(initial=0.0))
        )
        bad = diff > atol + rtol * np.abs(a64)
        if report.first_mismatch is None and bad.any():
            where = np.argwhere(bad)[0]
            env = int(where[0])
            agent = int(where[1]) if a.ndim > 1 else 0
            index = int(where[2]) if a.ndim > 2 else 0
            report.first_mismatch = Mismatch(
                name,
                _field_name(ref, name, index),
                step,
                env,
                agent,
                float(a64[tuple(where)]),
                float(b64[tuple(where)]),
            )


def check_consistency(
    make_env,
    backend: str | EnvBackend = EnvBackend.NUMBA,
    num_envs: int = 3,
    num_episodes: int = 2,
    rtol: float = 1e-3,
    atol: float = 1e-5,
    seed: int = 0,
    max_steps: int | None = None,
    device=None,
) -> ConsistencyReport:
    """Step the ``cpu`` reference and ``backend`` with the same random valid actions.

    Args:
        make_env: zero-argument callable returning a fresh Foundation env.
        rtol, atol: |ref - cand| <= atol + rtol * |ref| counts as equal (float32 backends
            need a relative tolerance around 1e-3: their states are float32 sums of
            populations of millions).
        max_steps: stop after this many steps in total (default: num_episodes full episodes).
    """
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper

    backend = EnvBackend.parse(backend)
    ref = FoundationEnvWrapper(make_env(), num_envs=num_envs, env_backend=EnvBackend.CPU)
    cand = FoundationEnvWrapper(make_env(), num_envs=num_envs, env_backend=backend, device=device)
    report = ConsistencyReport(backend.value, num_envs)
    rng = np.random.default_rng(seed)
    ref.reset_all_envs()
    cand.reset_all_envs()
    _compare(report, ref, cand, 0, rtol, atol)
    total = max_steps or num_episodes * ref.episode_length
    for step in range(1, total + 1):
        actions = {}
        for tag in ("a", "p"):
            mask = ref.cuda_data_manager.pull_data_from_device(f"action_mask_{tag}")
            logits = np.where(mask > 0, rng.random(mask.shape), -1.0)
            actions[tag] = logits.argmax(-1).astype(np.int64)
        actions["p"] = actions["p"][:, 0]
        ref.step_all_envs(actions)
        cand.step_all_envs(actions)
        _compare(report, ref, cand, step, rtol, atol)
        report.steps = step
        if not report.ok:
            break
        ref.reset_only_done_envs()
        cand.reset_only_done_envs()
        if step % ref.episode_length == 0:  # rewards are not defined after a reset
            _compare(report, ref, cand, step, rtol, atol, AFTER_RESET)
    return report


def foundation_env_factory(
    env_name: str, config: str | None = None, episode_length: int | None = None
) -> Callable[[], Any]:
    """A zero-argument factory of the Foundation env registered for training as ``env_name``
    (``training.environments``), configured by the ``env`` block of its run config (``config``,
    default the env's packaged ``<env_name>.yaml``), with ``episode_length`` overriding that block's.

    Raises:
        UnknownNameError: ``env_name`` is not registered (with close matches).
        ValueError: the registered environment is not a Foundation scenario.
    """
    from ai_economist.foundation.base.base_env import BaseEnvironment
    from ai_economist.training.config import default_config_path, find_run_config, load_yaml
    from ai_economist.training.environments import ENVIRONMENTS

    entry = ENVIRONMENTS[env_name]
    env_class = entry.env_class() if entry.env_class else None
    if not (isinstance(env_class, type) and issubclass(env_class, BaseEnvironment)):
        raise ValueError(
            f"--env {env_name!r} is not a Foundation scenario; the consistency checker compares "
            "FoundationEnvWrapper backends (use ai_economist.warp_drive.checks.check_parity for "
            "GpuEnvironment classes)"
        )
    path = find_run_config(config) if config else default_config_path(env_name)
    block = dict(load_yaml(path)["env"])
    if episode_length is not None:
        block["episode_length"] = int(episode_length)
    return lambda: env_class(**block)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--env",
        default="covid_and_economy_environment",
        help="a Foundation environment registered for training (training_script --env)",
    )
    parser.add_argument("--config", help="run config for the env block (default: the env's)")
    candidates = [b.value for b in EnvBackend if b is not EnvBackend.CPU]
    parser.add_argument("--backend", default=EnvBackend.NUMBA.value, choices=candidates)
    parser.add_argument("--num_envs", type=int, default=3)
    parser.add_argument("--num_episodes", type=int, default=2)
    parser.add_argument("--episode_length", type=int, help="overrides the config's")
    parser.add_argument("--max_steps", type=int, help="stop after this many steps in total")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args(argv)
    report = check_consistency(
        foundation_env_factory(args.env, args.config, args.episode_length),
        args.backend,
        args.num_envs,
        args.num_episodes,
        args.rtol,
        args.atol,
        max_steps=args.max_steps,
    )
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
