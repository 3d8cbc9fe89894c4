"""EnvBackend: one enum of backend names, with errors that list the allowed ones."""

from __future__ import annotations

import pytest

from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend


def test_parse_accepts_strings_any_case_and_members():
    assert EnvBackend.parse("numpy") is EnvBackend.NUMPY
    assert EnvBackend.parse(" PyCUDA ") is EnvBackend.PYCUDA
    assert EnvBackend.parse(EnvBackend.NUMBA) is EnvBackend.NUMBA
    assert EnvBackend.NUMBA == "numba" and str(EnvBackend.CPU) == "cpu"
    assert [b.is_gpu for b in EnvBackend] == [False, False, True, True]
    assert GPU_BACKENDS == (EnvBackend.PYCUDA, EnvBackend.NUMBA)


def test_parse_errors_list_the_allowed_names():
    with pytest.raises(ValueError, match="'metal'; allowed: 'cpu', 'numpy', 'pycuda', 'numba'"):
        EnvBackend.parse("metal")
    with pytest.raises(ValueError, match="allowed: 'cpu'"):
        EnvBackend.parse(3)
    with pytest.raises(ValueError, match="'numpy' is not available here; allowed: 'pycuda'"):
        EnvBackend.parse("numpy", GPU_BACKENDS)
