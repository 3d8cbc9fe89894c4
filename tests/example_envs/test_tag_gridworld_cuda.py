"""nvcc compiles grid-world Tag's CUDA C step (no GPU needed); both kernels take the declaration."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
from pathlib import Path

import pytest

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.example_envs.tag_gridworld.env import STEP_KERNEL
from ai_economist.warp_drive.errors import find_nvcc
from ai_economist.warp_drive.state import check_kernel_signature

ENV = TagGridWorld(num_taggers=999, grid_length=100, use_full_observation=False)
SOURCE = ENV.kernels().cuda_source


@pytest.fixture(scope="module")
def nvcc() -> Path:
    try:
        return find_nvcc()
    except RuntimeError as exc:
        pytest.skip(str(exc))


def test_compiles_for_sm90_without_spills_or_local_memory(nvcc, tmp_path):
    cubin = tmp_path / "tag_gridworld.cubin"
    cmd = [
        str(nvcc), "-cubin", "-arch=sm_90", "-o", str(cubin), str(SOURCE),
        "-Werror", "all-warnings", "-Xptxas", "-v,-warn-spills,-warn-lmem-usage",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    assert STEP_KERNEL.encode() in cubin.read_bytes()
    spills = re.findall(r"(\d+) bytes spill stores", proc.stderr)
    assert spills and all(int(s) == 0 for s in spills), proc.stderr
    shared = re.findall(r"(\d+) bytes smem", proc.stderr)
    assert shared and all(int(s) <= 16 for s in shared), proc.stderr  # O(1), not O(num_agents)


def test_cuda_kernel_takes_the_declared_parameters():
    check_kernel_signature(SOURCE.read_text(), STEP_KERNEL, ENV.state_spec())


def test_numba_kernel_takes_the_declared_parameters():
    module = importlib.import_module(ENV.kernels().numba_module)
    kernel = getattr(module, STEP_KERNEL)
    names = list(inspect.signature(kernel.py_func).parameters)
    assert names == [f.name for f in ENV.state_spec().kernel_fields()]
