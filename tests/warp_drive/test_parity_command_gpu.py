"""The parity command on a real GPU, for every environment it lists (COVID-19 included).

Run on the device machine with ``pytest -m gpu tests/warp_drive/test_parity_command_gpu.py``.
"""

from __future__ import annotations

import pytest
from gpu_helpers import GPU_BACKENDS, require_gpu

pytestmark = pytest.mark.gpu

require_gpu()

from ai_economist.warp_drive.checks import parity_command  # noqa: E402


@pytest.mark.parametrize("backend", GPU_BACKENDS)
def test_every_listed_environment_is_consistent(backend, capsys):
    names = sorted(parity_command.parity_hooks(backend))
    assert "covid_and_economy_environment" in names
    for name in names:
        argv = ["--env", name, "--backend", backend, "--num_envs", "8", "--num_steps", "30"]
        assert parity_command.main(argv) == 0, capsys.readouterr().out
        assert f"{name}: {backend} consistent" in capsys.readouterr().out
