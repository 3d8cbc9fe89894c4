"""benchmarks/train_throughput.py: one GPU against N data-parallel processes (gloo on the CPU)."""

from __future__ import annotations

import json

import pytest
import torch

TINY = ["--env", "toy", "--num_envs", "2", "--num_gpus", "1", "2", "--iterations", "1",
        "--warmup", "1", "--rollout_length", "4", "--fc_dims", "[16,16]"]  # fmt: skip


@pytest.fixture
def bench(import_benchmark):
    # on sys.path (which spawned workers inherit) so that the workers can import the module
    return import_benchmark("train_throughput")


def run(bench, tmp_path, capsys, device: str, args: list[str]) -> tuple[dict, str]:
    out = tmp_path / "throughput.json"
    assert bench.main(["--device", device, *args, "--json", str(out)]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


def check(result: dict, printed: str, num_envs: int, in_sync: float = 0.0) -> None:
    one, two = result["results"]
    assert (one["num_gpus"], two["num_gpus"]) == (1, 2)
    assert one["num_envs"] == two["num_envs"] == num_envs  # envs per GPU
    assert two["train_batch_size"] == one["train_batch_size"]
    assert one["env_steps_per_s"] > 0 and two["env_steps_per_s"] > 0
    assert two["env_steps_per_s_per_gpu"] == pytest.approx(two["env_steps_per_s"] / 2)
    assert len(two["elapsed_s_per_rank"]) == 2
    assert two["replica_max_param_diff"] <= in_sync  # the gradients were all-reduced
    [scaling] = result["scaling"]
    assert scaling["num_gpus"] == 2 and scaling["target"] == pytest.approx(1.8)
    assert scaling["scaling"] == pytest.approx(two["env_steps_per_s"] / one["env_steps_per_s"])
    assert "scaling vs 1 GPU: " in printed and "(target >= 1.8x" in printed
    assert f"{scaling['scaling']:.2f}x" in printed and "replicas in sync" in printed


def test_two_gloo_processes_against_one(bench, tmp_path, capsys):
    result, printed = run(bench, tmp_path, capsys, "cpu", TINY)
    check(result, printed, num_envs=2)
    assert "2 gloo processes" in result["hardware"]
    assert result["args"]["start_method"] == "auto"  # fork: one torch thread per process


def test_spawned_gloo_processes(bench, tmp_path, capsys):
    # the start method of the GPU runs (and of training_script.py --num_gpus)
    args = [*TINY, "--num_gpus", "2", "--start_method", "spawn"]  # the last --num_gpus counts
    result, printed = run(bench, tmp_path, capsys, "cpu", args)
    [two] = result["results"]
    assert two["num_gpus"] == 2 and two["env_steps_per_s"] > 0
    assert two["replica_max_param_diff"] == 0 and result["scaling"] == []
    assert "scaling vs 1 GPU" not in printed


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA GPUs")
def test_two_gpus_against_one(bench, tmp_path, capsys):
    args = ["--env", "toy", "--num_envs", "60", "--num_gpus", "1", "2", "--iterations", "3",
            "--warmup", "2", "--rollout_length", "10"]  # fmt: skip
    result, printed = run(bench, tmp_path, capsys, "cuda", args)
    check(result, printed, num_envs=60, in_sync=bench.IN_SYNC)
    assert result["hardware"].startswith(f"2x {torch.cuda.get_device_name(0)}")
    print(printed)


def test_fused_sampling_on_and_off_in_one_call(bench, tmp_path, capsys):
    args = ["--env", "toy", "--num_envs", "2", "--iterations", "1", "--warmup", "0",
            "--rollout_length", "4", "--fc_dims", "[16,16]", "--fused_sampling", "on", "off"]  # fmt: skip
    result, printed = run(bench, tmp_path, capsys, "cpu", args)
    assert [r["fused_sampling"] for r in result["results"]] == [True, False]
    assert [r["fused_kernel"] for r in result["results"]] == ["", ""]  # CPU: torch path
    assert [r["fused_layers"] for r in result["results"]] == [True, True]  # the default
    assert [r["bf16_heads"] for r in result["results"]] == [True, True]  # the default
    assert "  fused f-lay  b-hd |" in printed


def test_a_twin_of_the_fused_kernel_can_be_named(bench, tmp_path, capsys):
    args = ["--env", "toy", "--num_envs", "2", "--iterations", "1", "--warmup", "0",
            "--rollout_length", "4", "--fc_dims", "[16,16]", "--fused_sampling", "triton"]  # fmt: skip
    result, _ = run(bench, tmp_path, capsys, "cpu", args)
    assert [r["fused_sampling_kernel"] for r in result["results"]] == ["triton"]
    assert [r["fused_kernel"] for r in result["results"]] == [""]  # CPU: torch path


def test_a_packaged_run_config_is_timed_as_it_is(bench, tmp_path, capsys):
    args = ["--config", "toy", "--iterations", "1", "--warmup", "0", "--num_envs", "3"]
    result, printed = run(bench, tmp_path, capsys, "cpu", args)
    [row] = result["results"]
    assert result["env"] == "toy"
    assert row["num_envs"] == 16 and row["train_batch_size"] == 320  # toy.yaml's, not --num_envs
    assert row["num_mini_batches"] == {"a": 4, "p": 1} and row["env_steps_per_s"] > 0
    assert "env toy on cpu" in printed
