"""benchmarks/profile_iteration.py: it builds the throughput run's trainer and lists kernels."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def profiler(import_benchmark):
    return import_benchmark("profile_iteration")


def test_it_refuses_to_run_without_a_gpu(profiler, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit):
        profiler.main(["--num_envs", "2"])


def test_host_and_device_times_are_medians_per_phase(profiler, monkeypatch):
    import time

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)

    class Phases:
        calls = 0

        def _collect_rollout(self):
            time.sleep(0.002)

        def _update(self):
            Phases.calls += 1
            time.sleep(0.030 if Phases.calls == 2 else 0.004)  # one slow outlier

    times = profiler.host_and_device_ms(Phases(), repeats=3)
    assert set(times) == {"rollout", "update"} and Phases.calls == 3
    host, done = times["update"]
    assert 4 <= host < 30 and host <= done  # the median ignores the outlier
    assert 2 <= times["rollout"][0] < 30


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_it_profiles_the_compiled_bf16_update_with_the_throughput_settings(profiler, capsys):
    args = ["--num_envs", "4", "--rollout_length", "6", "--warmup", "1", "--precision", "bf16",
            "--acting_precision", "fp32", "--compile_update", "--cuda_graphs", "--rows", "5"]  # fmt: skip
    assert profiler.main(args) == 0
    printed = capsys.readouterr().out
    assert "== rollout:" in printed and "== update:" in printed
    assert "(4 envs, bf16)" in printed
    assert "rollout: host enqueues it in" in printed and "update: host enqueues it in" in printed
