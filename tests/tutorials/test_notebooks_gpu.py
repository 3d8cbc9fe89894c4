"""The tutorial notebooks on a GPU, at the CI scale: the CUDA C notebook checks its kernel with
pycuda and trains on it, the Numba notebook does the same with its Numba kernel, the GPU
training notebook trains the COVID-19 policies on the device, and the optimal-taxation notebook
trains its planner on the one-step economy's GPU environment (run with ``pytest -m gpu``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
REPO_ROOT = Path(__file__).resolve().parents[2]
EXPECTED_LINES = {
    "your_own_environment_cuda_c.ipynb": "shared_counter: pycuda matches the numpy reference",
    "your_own_environment_numba.ipynb": "shared_counter: numba matches the numpy reference",
    "multi_agent_gpu_training.ipynb": "(ci scale) on cuda: 2 envs",
    "optimal_taxation.ipynb": "planner trained (ci scale) on cuda, env backend pycuda",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_LINES))
def test_notebook_runs_on_the_gpu(name, tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to torch")
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, AI_ECONOMIST_TUTORIAL_SCALE="ci", MPLBACKEND="Agg", PYTHONPATH=path)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    cmd = [sys.executable, "tutorials/run_notebook.py", f"tutorials/{name}", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert EXPECTED_LINES[name] in proc.stdout
    assert "GPU: " in proc.stdout and "GPU: none" not in proc.stdout
