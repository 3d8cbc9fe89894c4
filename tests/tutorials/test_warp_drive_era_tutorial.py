"""The WarpDrive-era tutorial code (1.7.1's ``multi_agent_gpu_training_with_warp_drive``) runs.

It registers the COVID-19 kernels by their 1.7.1 path, wraps the env with
``FoundationEnvWrapper`` and trains it with ``Trainer(...,
create_separate_placeholders_for_each_policy=True, obs_dim_corresponding_to_num_agents="last")``
then ``train()`` / ``graceful_close()``, with ``ai_economist.warp_drive`` in place of
``warp_drive``.  On the CPU the wrapper steps the Python envs (``use_cuda=False``) at a tiny
scale; the GPU test (``test_warp_drive_era_tutorial_gpu.py``) runs the same code with
``use_cuda=True``, so the registered ``.cu`` file is what gets compiled.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import ai_economist
from ai_economist.training.config import find_run_config, load_run_config

#: 1.7.1's path of the build entry, relative to the package (the tutorial's registration).
BUILD_CU = os.path.join("foundation", "scenarios", "covid19", "covid19_build.cu")
TINY = [
    "trainer.num_envs=2",
    "trainer.train_batch_size=20",
    "trainer.num_episodes=4",
    "env.episode_length=10",
    "trainer.cuda_graphs=false",
    "saving.metrics_log_freq=1",
    "saving.tensorboard=false",
    "policy.a.model.fc_dims=[8,8]",
    "policy.p.model.fc_dims=[8,8]",
]


def tutorial_run(results_dir: Path, use_cuda: bool, device: str) -> tuple:
    """The tutorial's cells: registration, the wrapped env, the trainer, training."""
    from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
    from ai_economist.foundation.scenarios.covid19.covid19_env import (
        CovidAndEconomyEnvironment,
    )
    from ai_economist.warp_drive.registrar import EnvironmentRegistrar
    from ai_economist.warp_drive.training.trainer import Trainer

    run_config = load_run_config(
        find_run_config("covid_and_economy_environment"), [*TINY, f"trainer.device={device}"]
    )
    env_registrar = EnvironmentRegistrar()
    env_registrar.add_cuda_env_src_path(
        CovidAndEconomyEnvironment.name,
        os.path.join(os.path.dirname(ai_economist.__file__), BUILD_CU),
    )
    env_wrapper = FoundationEnvWrapper(
        CovidAndEconomyEnvironment(**run_config["env"]),
        num_envs=run_config["trainer"]["num_envs"],
        use_cuda=use_cuda,
        env_registrar=env_registrar,
    )
    policy_tag_to_agent_id_map = {
        "a": [str(agent_id) for agent_id in range(env_wrapper.env.n_agents)],
        "p": ["p"],
    }
    trainer = Trainer(
        env_wrapper=env_wrapper,
        config=run_config,
        policy_tag_to_agent_id_map=policy_tag_to_agent_id_map,
        create_separate_placeholders_for_each_policy=True,
        obs_dim_corresponding_to_num_agents="last",
        results_directory=results_dir,
        verbose=False,
    )
    trainer.train()
    trainer.graceful_close()
    return env_registrar, env_wrapper, trainer


@pytest.mark.filterwarnings("ignore:checkpoints do not include the env state")
def test_registration_by_the_1_7_1_path_and_training_on_the_cpu(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # nothing on this path is deprecated
        registrar, wrapper, trainer = tutorial_run(tmp_path / "run", use_cuda=False, device="cpu")
    registered = Path(registrar.get_cuda_env_src_path("CovidAndEconomySimulation"))
    assert registered == Path(ai_economist.__file__).parent / BUILD_CU
    assert registered.is_file() and "CudaComputeReward" in registered.read_text()
    assert wrapper.env_backend.value == "cpu" and wrapper.env.n_agents == 51
    assert trainer.iteration == trainer.num_iterations == 2  # 4 episodes x 10 steps / 20
    assert trainer.env_steps == 40
    params = [p for policy in trainer.policies.values() for p in policy.model.parameters()]
    assert all(np.isfinite(p.detach().numpy()).all() for p in params)
    assert (tmp_path / "run" / "metrics.jsonl").is_file()


def test_the_registration_fails_on_a_path_that_does_not_exist(tmp_path):
    from ai_economist.warp_drive.registrar import EnvironmentRegistrar

    with pytest.raises(FileNotFoundError, match="kernels/covid19_build.cu"):
        EnvironmentRegistrar().add_cuda_env_src_path(
            "CovidAndEconomySimulation",
            os.path.join(os.path.dirname(ai_economist.__file__), "kernels", "covid19_build.cu"),
        )
