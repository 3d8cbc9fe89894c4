"""The generated state header: constants, the parameter macro, and nvcc compiling the
ring-chase kernel with it (no GPU needed)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.warp_drive import codegen
from ai_economist.warp_drive.backends.gpu import header_for
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels
from ai_economist.warp_drive.state import StateField, StateSpec


def test_header_has_constants_fields_and_parameter_macro():
    spec = StateSpec(
        [
            StateField("_done_", np.int32),
            StateField("x", np.float32, (3,), doc="position"),
            StateField("k", np.float32, per_env=False),
            StateField("scratch", np.int32, (2,), kernel_arg=False),
        ]
    )
    text = codegen.generate_header("my-env", spec, {"NUM_AGENTS": 3, "DT": 0.5})
    assert "#define NUM_AGENTS 3\n" in text and "#define DT 0.5f\n" in text
    assert "#ifndef DT\n" in text  # -D on the command line wins
    assert "#define MY_ENV_STATE_PARAMS \\\n    int* _done_, \\\n    float* x, \\\n" in text
    assert "    const float k\n" in text and "scratch" not in text.split("STATE_PARAMS")[1]
    assert "// x [3] per-env, reset snapshot: position" in text
    assert codegen.header_name("my-env") == "my-env_state.h"
    assert codegen.numba_parameter_names(spec) == ["_done_", "x", "k"]
    expanded = codegen.expand_params_macro("void f(MY_ENV_STATE_PARAMS)", "my-env", spec)
    assert expanded == "void f(int* _done_, float* x, const float k)"


def test_c_literal_and_dim_defines():
    assert codegen.c_literal(3) == "3" and codegen.c_literal(True) == "1"
    assert codegen.c_literal(2.0) == "2.0f" and codegen.c_literal(1e-30).endswith("e-30f")
    with pytest.raises(ValueError, match="non-finite"):
        codegen.c_literal(float("nan"))
    assert codegen.dim_defines({"num_agents": 5}) == {"NUM_AGENTS": 5}
    assert codegen.c_prefix("3d") == "ENV_3D"


def test_write_header_names_the_folder_after_the_content(tmp_path, monkeypatch):
    monkeypatch.setenv("AI_ECONOMIST_CACHE_DIR", str(tmp_path))
    a = codegen.write_header("e", "// a\n")
    assert codegen.write_header("e", "// a\n") == a
    assert codegen.write_header("e", "// b\n") != a
    assert (a / "e_state.h").read_text() == "// a\n"


def test_ring_chase_kernel_matches_its_declaration(tmp_path):
    env = RingChase(num_chasers=3, num_runners=4)
    spec = env.state_spec()
    folder = codegen.write_header(env.name, header_for(env, spec), tmp_path)
    check_cuda_kernels(env, spec, env.kernels().cuda_source, folder)  # raises on a mismatch
    text = (folder / "ring_chase_state.h").read_text()
    assert "#define NUM_AGENTS 7\n" in text and "#define NUM_RUNNERS 4\n" in text


def test_nvcc_compiles_the_ring_chase_kernel(nvcc, tmp_path):
    env = RingChase()
    folder = codegen.write_header(env.name, header_for(env, env.state_spec()), tmp_path)
    out = tmp_path / "ring_chase.o"
    cmd = [str(nvcc), "-arch=sm_90", "-c", "-I", str(folder), str(env.kernels().cuda_source)]
    proc = subprocess.run([*cmd, "-o", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0
