"""CPU smoke test of benchmarks/gtb_market_gpu_step.py (numpy backend, tiny settings)."""

from __future__ import annotations


def test_gtb_market_benchmark_prints_rates_and_the_ratio_to_1_7_1(import_benchmark, capsys):
    bench = import_benchmark("gtb_market_gpu_step")
    args = ["--backends", "numpy", "--num_envs", "2", "--steps", "5", "--warmup", "1",
            "--episode_length", "3"]  # fmt: skip
    (result,) = bench.main(args)
    out = capsys.readouterr().out
    assert result["num_agents"] == 5 and result["env_steps_per_s"] > 0  # 4 agents + planner
    # the order slots alone: 4 int32 arrays of 2 x 4 x 5
    assert result["state_bytes_per_env"] > 4 * 2 * 4 * 5 * 4
    assert "env-steps/s" in out and "x the peer (470 env-steps/s)" in out
