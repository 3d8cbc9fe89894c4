"""The WarpDrive-era tutorial code on a GPU: ``use_cuda=True`` compiles the ``.cu`` file
registered by its 1.7.1 path and trains on it (run with ``pytest -m gpu``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpu_helpers import require_gpu
from test_warp_drive_era_tutorial import tutorial_run

pytestmark = pytest.mark.gpu
require_gpu()


def test_the_tutorial_trains_on_the_registered_cuda_source(tmp_path):
    registrar, wrapper, trainer = tutorial_run(tmp_path / "run", use_cuda=True, device="cuda")
    assert wrapper.env_backend.value == "pycuda"
    assert Path(wrapper.backend.source) == Path(registrar.get_cuda_env_src_path(wrapper.env.name))
    assert trainer.iteration == trainer.num_iterations == 2
    assert (tmp_path / "run" / "metrics.jsonl").is_file()
