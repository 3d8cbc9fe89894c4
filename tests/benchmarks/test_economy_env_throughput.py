"""CPU smoke test of benchmarks/economy_env_throughput.py (tiny settings)."""

from __future__ import annotations

from ai_economist.warp_drive.errors import cudasim_enabled


def test_prints_rates_and_the_ratios_to_the_cpu_models(import_benchmark, capsys):
    bench = import_benchmark("economy_env_throughput")
    backends = ["numpy", "numba"] if cudasim_enabled() else ["numpy"]
    results = bench.main(["--backends", *backends, "--num_envs", "3", "--steps", "4",
                          "--warmup", "1", "--dict_seconds", "0.05"])  # fmt: skip
    out = capsys.readouterr().out
    assert [r["backend"] for r in results] == backends
    assert all(r["env_steps_per_s"] > 0 and r["state_bytes_per_env"] > 0 for r in results)
    assert "x the batched numpy model" in out and "x the dict API" in out
    assert "dict API (OneStepEconomy, one env" in out
