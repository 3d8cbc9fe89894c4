"""``benchmarks/one_step_kernel_ablation.py``: every variant is the packaged step with exactly its
edit (so a change to the kernel cannot silently turn a variant into the packaged step), and each
compiles with nvcc where nvcc is found; the timing itself needs a GPU (``-m gpu``)."""

from __future__ import annotations

import shutil
import subprocess

import pytest


@pytest.fixture
def ablation(import_benchmark):
    return import_benchmark("one_step_kernel_ablation")


def test_each_variant_makes_its_edit_and_only_that(ablation, tmp_path):
    old = tmp_path / "old.cu"
    old.write_text("// an earlier step\n")
    texts = {}
    for name in ablation.VARIANTS:
        folder = tmp_path / name
        folder.mkdir()
        path = ablation.variant_source(name, folder, old)
        assert (folder / "saez_tax.cuh").is_file() and (folder / "bracket_tax.cuh").is_file()
        texts[name] = path.read_text()
    main = texts["main"]
    assert main.count("write_observations_and_masks(") == 2  # defined, then called
    assert texts["no_writes"].count("write_observations_and_masks(") == 1
    assert "get_equality(e_coin)" in main and "get_equality(e_coin)" not in texts["no_metrics"]
    assert "planner_welfare(e_coin" not in texts["no_metrics"]
    assert texts["one_env_per_block"] == main  # the same source, another KernelSpec
    assert ablation.LAUNCH_BOUNDS == (2, 3, 4, 5, 6)
    for n in ablation.LAUNCH_BOUNDS:
        assert f"__launch_bounds__(ENVS_PER_BLOCK * NUM_AGENTS, {n})" in texts[f"lb{n}"]
        assert (
            texts[f"lb{n}"].replace(f"__launch_bounds__(ENVS_PER_BLOCK * NUM_AGENTS, {n}) ", "")
            == main
        )
    assert texts["old"] == "// an earlier step\n"
    with pytest.raises(SystemExit, match="--old_source"):
        ablation.variant_source("old", tmp_path / "old", None)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("name", ["no_writes", "no_metrics", "lb3"])
def test_variants_compile_with_nvcc(ablation, name, tmp_path):
    from ai_economist.foundation.scenarios.one_step_economy.gpu_env import OneStepEconomyGpu
    from ai_economist.warp_drive import codegen
    from ai_economist.warp_drive.backends.gpu import header_for

    env = OneStepEconomyGpu()
    include = codegen.write_header(env.name, header_for(env, env.state_spec()), tmp_path / "inc")
    source = ablation.variant_source(name, tmp_path, None)
    cmd = ["nvcc", "-cubin", "-arch=sm_90", "-o", str(tmp_path / "v.cubin"), str(source), "-I",
           str(include)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
