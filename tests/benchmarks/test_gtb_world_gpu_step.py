"""CPU smoke test of benchmarks/gtb_world_gpu_step.py (numpy backend, tiny settings)."""

from __future__ import annotations


def test_gtb_world_benchmark_prints_rates_and_the_ratio_to_1_7_1(import_benchmark, capsys):
    bench = import_benchmark("gtb_world_gpu_step")
    args = ["--backends", "numpy", "--num_envs", "2", "--steps", "5", "--warmup", "1",
            "--episode_length", "3"]  # fmt: skip
    (result,) = bench.main(args)
    out = capsys.readouterr().out
    assert result["num_agents"] == 5 and result["env_steps_per_s"] > 0  # 4 agents + planner
    assert result["state_bytes_per_env"] > 2 * 25 * 25 * 4  # the resource maps at least
    assert "env-steps/s" in out and "x the peer (470 env-steps/s)" in out


def test_gtb_world_benchmark_takes_the_market_world(import_benchmark, capsys):
    bench = import_benchmark("gtb_world_gpu_step")
    args = ["--backends", "numpy", "--num_envs", "2", "--steps", "5", "--warmup", "1",
            "--episode_length", "3", "--market"]  # fmt: skip
    (result,) = bench.main(args)
    (world,) = bench.main(args[:-1])
    assert result["num_agents"] == 5 and result["env_steps_per_s"] > 0
    # the books, slots and price histories of the market on top of the world's state
    assert result["state_bytes_per_env"] > world["state_bytes_per_env"] + 2 * 2 * 4 * 11 * 4


def test_gtb_world_benchmark_takes_the_full_economy(import_benchmark, capsys):
    bench = import_benchmark("gtb_world_gpu_step")
    args = ["--backends", "numpy", "--num_envs", "2", "--steps", "5", "--warmup", "1",
            "--episode_length", "3"]  # fmt: skip
    (phase2,) = bench.main([*args, "--economy", "phase2"])
    (market,) = bench.main([*args, "--market"])
    assert phase2["num_agents"] == 4 + 7 and phase2["env_steps_per_s"] > 0  # 7 bracket agents
    assert phase2["state_bytes_per_env"] > market["state_bytes_per_env"]  # the tax's arrays


def test_gtb_world_benchmark_register_cap_needs_the_economy(import_benchmark, capsys):
    import pytest

    bench = import_benchmark("gtb_world_gpu_step")
    with pytest.raises(SystemExit) as stop:
        bench.main(["--backends", "numpy", "--numba_max_registers", "112"])
    assert stop.value.code == 2
    assert "--numba_max_registers needs --economy" in capsys.readouterr().err


def test_gtb_world_benchmark_register_cap_rebuilds_the_numba_step(import_benchmark, capsys,
                                                                  monkeypatch):  # fmt: skip
    import pytest

    pytest.importorskip("numba.cuda")
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import gtb_economy_numba
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
        GatherTradeBuildEconomyGpu,
    )
    from ai_economist.warp_drive.backends.gpu import kernel_constants
    from ai_economist.warp_drive.errors import cudasim_enabled

    before = gtb_economy_numba.gtb_economy_step
    monkeypatch.setattr(gtb_economy_numba, "gtb_economy_step", before)  # restored afterwards
    factory = gtb_economy_numba.make_numba_kernels
    monkeypatch.setattr(gtb_economy_numba, "make_numba_kernels", factory)
    import_benchmark("gtb_world_gpu_step").cap_numba_step_registers(112)
    after = gtb_economy_numba.gtb_economy_step
    assert after is not before and after.py_func.__name__ == "gtb_economy_step"
    assert "at most 112 registers a thread" in capsys.readouterr().out
    env = GatherTradeBuildEconomyGpu()
    shaped = gtb_economy_numba.make_numba_kernels(kernel_constants(env))["gtb_economy_step"]
    assert shaped is not factory(kernel_constants(env))["gtb_economy_step"]
    if not cudasim_enabled():  # the simulator has no registers: the cap is left out there
        assert after.targetoptions["max_registers"] == 112
        assert shaped.targetoptions["max_registers"] == 112
