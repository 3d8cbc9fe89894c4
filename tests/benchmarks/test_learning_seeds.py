"""benchmarks/learning_seeds.py: two seeds of a tiny COVID-19 run side by side on the CPU, and
the summary arithmetic on hand-made results.

The end-to-end test checks that each seed's figures are what they claim: the greedy sum is the
greedy evaluation of the seed's own saved models, the verdict margins are that sum minus the
fixed policies' sums of the array model, and the iteration and env-step counts follow from
the config.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from ai_economist.training.config import packaged_config_path

CONFIG = str(packaged_config_path("covid_and_economy_gpu_learning"))
TINY = [
    "trainer.num_envs=2",
    "trainer.train_batch_size=40",
    "trainer.num_episodes=4",  # 4 episodes x 20 days / 40 env-steps = 2 iterations
    "env.episode_length=20",
    "trainer.cuda_graphs=false",
    "saving.metrics_log_freq=1",
    "policy.a.model.fc_dims=[16]",
    "policy.p.model.fc_dims=[16]",
]


@pytest.fixture
def seeds(import_benchmark):
    return import_benchmark("learning_seeds")


def test_two_tiny_seeds_side_by_side(seeds, tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    )
    out = seeds.main(
        ["--device", "cpu", "--seeds", "3", "5", "--minutes", "0.5", "--eval_every_minutes", "0",
         "--sampled_episodes", "1", "--config", CONFIG, "--results_dir", str(tmp_path), *TINY]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert out["exit_status"] == {3: 0, 5: 0}
    assert json.loads((tmp_path / "summary.json").read_text())["summary"] == out["summary"]
    import learning_vs_fixed_policies as learning

    from ai_economist import foundation
    from ai_economist.training.config import load_run_config

    config = load_run_config(CONFIG, ["trainer.device=cpu", *TINY])
    env = foundation.make_env_instance("CovidAndEconomySimulation", **config["env"])
    fixed = learning.fixed_policy_sums(env)
    greedy = []
    for seed in (3, 5):
        r = out["seeds"][seed]
        assert (r["seed"], r["iterations"], r["env_steps"]) == (seed, 2, 80)
        models = learning.load_models(str(tmp_path / f"seed_{seed}" / "models.pt"), config)
        assert r["greedy_planner_sum"] == pytest.approx(learning.greedy_episode(models, config))
        for name, total in fixed.items():
            assert r["verdicts"][name]["margin"] == pytest.approx(r["greedy_planner_sum"] - total)
        assert r["beats_all_fixed"] == (r["greedy_planner_sum"] > max(fixed.values()))
        rw = r["real_world"]["rows"]["real-world"]
        assert rw["planner_reward"] == pytest.approx(349.06, abs=0.005)
        plots = r["policy_response"].get("plots", [])
        assert all(Path(p).is_file() for p in plots)
        assert r["policy_response"]["planner_reward_sum"] == r["greedy_planner_sum"]
        greedy.append(r["greedy_planner_sum"])
    s = out["summary"]
    assert s["greedy_mean"] == pytest.approx(np.mean(greedy))
    assert (s["greedy_worst"], s["greedy_best"]) == (min(greedy), max(greedy))
    assert "summary: greedy planner sum mean" in text and "seed_3" not in text  # no failures


@pytest.mark.gpu
def test_two_seeds_share_one_gpu(seeds, tmp_path, monkeypatch):
    """Two seeds of a small run side by side on the GPU (pycuda backend, CUDA graphs)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    )
    out = seeds.main(
        # --timeout_minutes 8: beside 7 other xdist workers (session 16) the seeds' evaluation
        # outlasted the default 0.3 + 3 minutes after 18 s of training
        ["--device", "cuda", "--seeds", "0", "1", "--minutes", "0.3", "--eval_every_minutes", "0",
         "--timeout_minutes", "8", "--sampled_episodes", "1", "--no_real_world", "--config", CONFIG,
         "--results_dir", str(tmp_path), "trainer.num_envs=60", "trainer.train_batch_size=5400",
         "trainer.num_episodes=100000"]
    )  # fmt: skip
    assert out["exit_status"] == {0: 0, 1: 0}
    first, second = out["seeds"][0], out["seeds"][1]
    assert first["iterations"] >= 1 and first["env_steps"] == 5400 * first["iterations"]
    assert first["device"] != "CPU" and (first["seed"], second["seed"]) == (0, 1)
    assert out["summary"]["gpus"] == 1 and out["summary"]["seeds_per_gpu_hour"] > 0


def result(greedy: float, beats: bool, constant: bool, real_world: bool) -> dict:
    return {
        "greedy_planner_sum": greedy,
        "beats_all_fixed": beats,
        "policy_response": {"constancy": {"is_constant": constant, "mean_changes": 0.0}},
        "real_world": {"beats_real_world": real_world, "margin": 1.0},
        "verdicts": {},
    }


def test_summary_of_hand_made_results(seeds):
    results = {
        0: result(446.0, True, True, False),
        1: result(424.0, False, True, False),
        2: result(470.0, True, False, True),
        3: None,  # stopped at the timeout
    }
    s = seeds.summarise(results, elapsed_s=1800.0, gpus=1)
    assert s["greedy_mean"] == pytest.approx((446 + 424 + 470) / 3)
    assert (s["greedy_worst"], s["greedy_best"]) == (424.0, 470.0)
    assert (s["seeds"], s["seeds_with_result"]) == (4, 3)
    assert s["seeds_beating_all_fixed"] == 2 and s["seeds_beating_real_world"] == 1
    assert s["constant_policies"] == 2
    assert s["seeds_per_gpu_hour"] == pytest.approx(6.0)  # 3 seeds in half an hour
    assert seeds.summarise(results, 1800.0, gpus=2)["seeds_per_gpu_hour"] == pytest.approx(3.0)
    table = seeds.format_table(results, s)
    assert "   3 (no result: see seed_3/log.txt)" in table
    assert "2 of 4 seeds beat every fixed policy" in table


def test_bad_arguments_are_named(seeds):
    with pytest.raises(SystemExit):
        seeds.parse_args(["--seeds", "1", "1"])
    with pytest.raises(SystemExit):
        seeds.parse_args(["--seeds", "1", "trainer.seed=4"])
