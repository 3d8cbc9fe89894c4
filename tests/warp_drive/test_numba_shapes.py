"""``numba_shapes``: kernels whose array shapes past the first dimension are compile-time
constants (the gather-trade-build economy's ``make_numba_kernels``): the declared shapes,
one build per distinct shapes, the mismatch errors, and (real compiler, no GPU) the view's
shape, strides, size and element addresses."""

from __future__ import annotations

import numpy as np
import pytest
from numba_lowering import lower_in_subprocess

pytest.importorskip("numba")


def _economy():
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.economy_env import (
        GatherTradeBuildEconomyGpu,
    )
    from ai_economist.warp_drive.backends.gpu import kernel_constants

    env = GatherTradeBuildEconomyGpu()
    return env, kernel_constants(env)


def test_declared_trailing_shapes_are_the_device_shapes_past_the_first():
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import economy_state as es
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu.numba_kernels import (
        declared_trailing_shapes,
    )

    env, constants = _economy()
    shapes = declared_trailing_shapes(es.state_fields(), constants)
    expected = {}
    for f in env.state_spec().kernel_fields():
        device = (7, *f.shape) if f.per_env else f.shape
        if len(device) >= 2:
            expected[f.cname] = tuple(device[1:])
    assert shapes == expected
    assert shapes["observations_a"] == (4, 1225) and shapes["water"] == (25,)


def test_make_numba_kernels_builds_once_per_distinct_shapes():
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import gtb_economy_numba as m
    from ai_economist.warp_drive.numba_shapes import SHAPES_ATTRIBUTE

    _, constants = _economy()
    first = m.make_numba_kernels(constants)
    assert set(first) == {"gtb_economy_reset", "gtb_economy_step"}
    assert m.make_numba_kernels(dict(constants))["gtb_economy_step"] is first["gtb_economy_step"]
    other = m.make_numba_kernels({**constants, "WINDOW": constants["WINDOW"] - 2,
                                  "OBS_DIM_A": constants["OBS_DIM_A"] - 10})  # fmt: skip
    assert other["gtb_economy_step"] is not first["gtb_economy_step"]
    params, shapes = getattr(first["gtb_economy_step"], SHAPES_ATTRIBUTE)
    assert params[0] == "_timestep_" and shapes["observations_a"] == (4, 1225)


def test_check_fixed_shapes_names_the_mismatched_array():
    from ai_economist.foundation.scenarios.simple_wood_and_stone.gpu import gtb_economy_numba as m
    from ai_economist.warp_drive.numba_shapes import SHAPES_ATTRIBUTE, check_fixed_shapes

    _, constants = _economy()
    kernel = m.make_numba_kernels(constants)["gtb_economy_step"]
    params, shapes = getattr(kernel, SHAPES_ATTRIBUTE)
    args = [np.zeros((2, *shapes[p])) if p in shapes else np.zeros(2) for p in params]
    check_fixed_shapes("gtb_economy_step", kernel, args)  # the shapes it was built for
    args[params.index("locs")] = np.zeros((2, 5, 2))
    with pytest.raises(ValueError, match=r"'gtb_economy_step'.*'locs' has shape \(2, 5, 2\)"):
        check_fixed_shapes("gtb_economy_step", kernel, args)
    with pytest.raises(ValueError, match="takes"):
        check_fixed_shapes("gtb_economy_step", kernel, args[:-1])
    check_fixed_shapes("plain", object(), args[:3])  # runtime shapes: nothing to check


def test_shaped_kernel_refuses_shapes_of_unknown_parameters():
    from ai_economist.warp_drive.numba_shapes import shaped_kernel

    with pytest.raises(ValueError, match=r"\['nope'\]"):
        shaped_kernel("k", None, 1, ["a", "b"], {"nope": (2,)})


def test_the_simulated_view_checks_the_shape():
    from ai_economist.warp_drive.errors import cudasim_enabled
    from ai_economist.warp_drive.numba_shapes import fixed_shape

    if not cudasim_enabled():
        pytest.skip("the simulator's view (NUMBA_ENABLE_CUDASIM=1)")
    view = fixed_shape((3, 4), "x")
    a = np.arange(24.0).reshape(2, 3, 4)
    assert view(a) is a
    with pytest.raises(ValueError, match=r"'x' has shape \(3, 2, 4\)"):
        view(np.zeros((3, 2, 4)))


VIEW = """
    from numba import cuda
    from ai_economist.warp_drive.numba_shapes import fixed_shape

    view = fixed_shape((5, 7), "a")

    def k(a, b, out, i, j, m):
        v = view(a)
        out[0] = v.shape[1] * 1000 + v.shape[2]
        out[1] = v.strides[0] * 1000 + v.strides[1] * 10 + v.strides[2]
        out[2] = v.size
        out[3] = v[i, j, m]
        out[4] = v.shape[0]
        out[5] = view(b)[i, j, m]  # layout A: passed through

    c3, a3 = types.Array(types.float32, 3, "C"), types.Array(types.float32, 3, "A")
    sig = (c3, a3, types.Array(types.float32, 1, "C"), types.int64, types.int64, types.int64)
    cres = compiler.compile_cuda(k, types.void, sig, cc=(9, 0))
    print(cres.library.get_llvm_str())
"""


def test_the_compiled_view_has_constant_shape_and_strides():
    ir = lower_in_subprocess(VIEW)
    # the view's shape (lead, 5, 7) and C strides (140, 28, 4) of float32, as constants
    for const in ("i64 5, 1", "i64 7, 2", "i64 140, 0", "i64 28, 1", "i64 4, 2"):
        assert const in ir, (const, ir[:4000])


def test_the_economy_backend_binds_the_shaped_kernels_and_refuses_other_shapes():
    from ai_economist.warp_drive.backend_names import EnvBackend
    from ai_economist.warp_drive.backends.gpu import KernelBackend
    from ai_economist.warp_drive.errors import cudasim_enabled
    from ai_economist.warp_drive.numba_shapes import SHAPES_ATTRIBUTE

    if not cudasim_enabled():
        pytest.skip("the Numba backend without a GPU: NUMBA_ENABLE_CUDASIM=1")
    env, _ = _economy()
    backend = KernelBackend(env, 2, EnvBackend.NUMBA)
    fm = backend.function_manager
    kernel = fm.get_function("gtb_economy_step")
    params, _ = getattr(kernel, SHAPES_ATTRIBUTE)
    args = backend.spec.kernel_args(backend.data_manager, backend="torch")
    args[params.index("inventory")] = args[params.index("inventory")][:, :, :2]
    with pytest.raises(ValueError, match=r"'inventory' has shape \(2, 4, 2\)"):
        fm.bind("gtb_economy_step", *args)
