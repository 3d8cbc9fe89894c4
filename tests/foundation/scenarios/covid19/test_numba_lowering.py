"""The Numba kernels type-check and lower to LLVM for a real sm_90 target, without a GPU.

The CUDA simulator (the rest of the suite) runs the kernels as Python and so cannot catch
typing errors of the real Numba CUDA compiler. This test runs that compiler's front end
(``numba.cuda.compiler.compile_cuda`` with ``no_compile``: typing + lowering, no NVVM) in a
subprocess with ``NUMBA_ENABLE_CUDASIM=0``, faking the compute capability the device-function
compiler asks the (absent) driver for. It skips when the numba-cuda internals it relies on
are not there. It also reads the generated LLVM IR: the kernels compute in float32 as CUDA C
does (a float64 constant or an int64 operand would silently promote them to float64); only
``CudaComputeReward`` adds the planner sums in float64.
"""

from __future__ import annotations

import re

import pytest
from numba_lowering import lower_in_subprocess

pytest.importorskip("numba")

BODY = """
    from ai_economist.datasets.covid19 import load_calibration
    from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
    from ai_economist.foundation.scenarios.covid19.kernels.covid19_numba import make_numba_kernels
    from ai_economist.foundation.scenarios.covid19.model.params import build_params
    from ai_economist.foundation.scenarios.covid19.model.simulation import (
        CovidSimulation, component_params_from_config,
    )

    real = sys.argv[1] == "real"
    params = build_params(load_calibration(), episode_length=540,
                          economic_reward_crra_eta=1.0 if real else 2.0)
    comps = component_params_from_config(params, observe_rate=real, delivery_interval=2 if real else 1)
    layout = gpu_state.observation_layout(CovidSimulation(params, comps, 1))
    spec = gpu_state.covid_state_spec(params, comps, layout)
    constants = gpu_state.compile_time_constants(params, comps, layout, use_real_world_policies=real)
    from ai_economist.foundation.scenarios.covid19.kernels.covid19_numba import FLAT_KERNELS

    def argtypes(name):
        ndim = lambda f: 1 if name in FLAT_KERNELS else len(f.shape) + int(f.per_env)
        return tuple(types.Array(numba.from_dtype(f.dtype), ndim(f), "C") for f in spec)
    fp64 = re.compile(r"= f(?:add|sub|mul|div) (?:[a-z]+ )*double|fpext float|call double")
    for name, kernel in make_numba_kernels(constants).items():
        cres = compiler.compile_cuda(kernel.py_func, types.void, argtypes(name), cc=(9, 0))
        print("lowered", name, "fp64", len(fp64.findall(cres.library.get_llvm_str())))
"""


@pytest.mark.parametrize("variant", ["published", "real"])
def test_numba_kernels_lower_for_sm90(variant):
    out = lower_in_subprocess(BODY, variant)
    assert out.count("lowered") == 6, out
    fp64 = dict(re.findall(r"lowered (\w+) fp64 (\d+)", out))
    assert int(fp64.pop("CudaComputeReward")) > 0, out  # the check sees float64
    assert fp64 == dict.fromkeys(fp64, "0"), f"float64 arithmetic in float32 kernels: {fp64}"
