"""nvcc compiles grid-world Tag's CUDA C step (no GPU needed); both kernels take the declaration."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
from pathlib import Path

from ai_economist.example_envs.tag_gridworld import TagGridWorld
from ai_economist.example_envs.tag_gridworld.env import STEP_KERNEL
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels, check_numba_kernels

ENV = TagGridWorld(num_taggers=999, grid_length=100, use_full_observation=False)
SOURCE = ENV.kernels().cuda_source


def header_dir(tmp_path: Path) -> Path:
    return codegen.write_header(ENV.name, header_for(ENV, ENV.state_spec()), tmp_path)


def test_compiles_for_sm90_without_spills_or_local_memory(nvcc, tmp_path):
    cubin = tmp_path / "tag_gridworld.cubin"
    cmd = [
        str(nvcc), "-cubin", "-arch=sm_90", "-o", str(cubin), str(SOURCE), "-I", str(header_dir(tmp_path)),
        "-Werror", "all-warnings", "-Xptxas", "-v,-warn-spills,-warn-lmem-usage",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    assert STEP_KERNEL.encode() in cubin.read_bytes()
    spills = re.findall(r"(\d+) bytes spill stores", proc.stderr)
    assert spills and all(int(s) == 0 for s in spills), proc.stderr
    shared = re.findall(r"(\d+) bytes smem", proc.stderr)
    assert shared and all(int(s) <= 16 for s in shared), proc.stderr  # O(1), not O(num_agents)


def test_kernels_take_the_declared_parameters(tmp_path):
    spec = ENV.state_spec()
    check_cuda_kernels(ENV, spec, SOURCE, header_dir(tmp_path))  # raises on a mismatch
    module = importlib.import_module(ENV.kernels().numba_module)
    check_numba_kernels(ENV, spec, module)
    names = list(inspect.signature(getattr(module, STEP_KERNEL).py_func).parameters)
    assert names[:3] == ["loc_x", "loc_y", "sampled_actions_shared"] and names[-1] == "num_agents"
