"""Prepared Numba launches (``warp_drive/numba_launch.py``): same results as Numba's launcher."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.warp_drive.errors import cudasim_enabled

cuda = pytest.importorskip("numba.cuda")


@cuda.jit
def _axpy_rows(out, x, scale, offset, flags):
    env = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    if tid < x.shape[1]:
        out[env, tid] = out[env, tid] * scale + x[env, tid] + offset
    if tid == 0:
        flags[env] += 1


def _arrays(to_device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    return [to_device(a) for a in (np.ones((3, 5), np.float32), x, np.zeros(3, np.int32))]


def _run(launcher_factory, to_device, steps=3):
    out, x, flags = _arrays(to_device)
    launch = launcher_factory(out, x, flags)
    for _ in range(steps):
        launch()
    return [np.asarray(a.copy_to_host() if hasattr(a, "copy_to_host") else a) for a in (out, flags)]


def _expected():
    out, x, flags = _arrays(np.asarray)
    for _ in range(3):
        out = out * np.float32(0.5) + x + np.float32(2.0)
        flags = flags + 1
    return out, flags


def test_bound_launcher_matches_the_numpy_expectation_in_the_simulator():
    if not cudasim_enabled():
        pytest.skip("simulator check (NUMBA_ENABLE_CUDASIM=1)")
    from ai_economist.warp_drive.numba_launch import bind_numba_launch

    def factory(out, x, flags):
        launch = bind_numba_launch(
            _axpy_rows, (out, x, np.float32(0.5), np.float32(2.0), flags), 3, 8
        )
        assert not launch.prepared and "CUDASIM" in launch.reason
        return launch

    out, flags = _run(factory, np.asarray)
    want_out, want_flags = _expected()
    np.testing.assert_allclose(out, want_out, rtol=1e-6)
    np.testing.assert_array_equal(flags, want_flags)


@pytest.mark.gpu
def test_prepared_launch_equals_numbas_launcher_on_the_gpu():
    if cudasim_enabled() or not cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    from ai_economist.warp_drive.numba_launch import bind_numba_launch

    def prepared(out, x, flags):
        launch = bind_numba_launch(
            _axpy_rows, (out, x, np.float32(0.5), np.float32(2.0), flags), 3, 8
        )
        assert launch.prepared, launch.reason
        return launch

    def plain(out, x, flags):
        return lambda: _axpy_rows[3, 8](out, x, np.float32(0.5), np.float32(2.0), flags)

    got = _run(prepared, cuda.to_device)
    ref = _run(plain, cuda.to_device)
    want_out, want_flags = _expected()
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_allclose(got[0], want_out, rtol=1e-6)
    np.testing.assert_array_equal(got[1], want_flags)
