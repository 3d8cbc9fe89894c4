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
from typing import Any

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.checks.parity import ParityResult, check_wrappers

ARRAYS = (
    "observations_a",
    "observations_p",
    "action_mask_a",
    "action_mask_p",
    "rewards_a",
    "rewards_p",
    "_done_",
)
#: Compared after resetting done envs too (rewards are not defined after a reset).
AFTER_RESET = ("observations_a", "observations_p", "action_mask_a", "action_mask_p", "_done_")


class _FoundationArrays:
    """``check_wrappers``' view of a ``FoundationEnvWrapper``: arrays by name, and the
    planner's sampled actions ``(E, 1)`` handed over as the wrapper's host shape ``(E,)``."""

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper
        self.num_envs = wrapper.num_envs
        self.policy_specs = wrapper.policy_specs

    def pull(self, name: str) -> Any:
        return self.wrapper.cuda_data_manager.pull_data_from_device(name)

    def action_masks(self, tag: str) -> Any:
        return self.wrapper.action_masks(tag)

    def reset_all_envs(self) -> None:
        self.wrapper.reset_all_envs()

    def reset_only_done_envs(self) -> None:
        self.wrapper.reset_only_done_envs()

    def step_all_envs(self, actions: dict) -> None:
        self.wrapper.step_all_envs({"a": actions["a"], "p": actions["p"][:, 0]})


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
) -> ParityResult:
    """Step the ``cpu`` reference and ``backend`` with the same random valid actions
    (:func:`~ai_economist.warp_drive.checks.parity.check_wrappers`, the loop of the generic
    ``check_parity``); the result names the first array, env, agent and step that differ.

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
    return check_wrappers(
        _FoundationArrays(ref),
        _FoundationArrays(cand),
        ARRAYS,
        max_steps or num_episodes * ref.episode_length,
        seed=seed,
        rtol=rtol,
        atol=atol,
        label=ref.env.name,
        backend=backend.value,
        reference_name="the cpu backend (Python envs)",
        after_reset=AFTER_RESET,
    )


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
    print(report.message)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
