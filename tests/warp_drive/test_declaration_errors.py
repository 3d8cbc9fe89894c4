"""Bad declarations stop with an error naming the environment and the field or kernel,
before anything runs on a device (these run on a machine without a GPU)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ai_economist.example_envs.ring_chase import RingChase
from ai_economist.warp_drive.checks.declaration import EnvironmentDeclarationError
from ai_economist.warp_drive.env_wrapper import EnvWrapper
from ai_economist.warp_drive.scenario import KernelSpec
from ai_economist.warp_drive.state import StateField

CU = RingChase().kernels().cuda_source


class Custom(RingChase):
    """Ring chase with parts of its declaration replaced."""

    def __init__(self, kernels=None, drop=(), retype=None, initial=None, **kw):
        super().__init__(**kw)
        self._kernels, self._drop, self._retype, self._initial = kernels, drop, retype, initial

    def kernels(self) -> KernelSpec:
        return self._kernels or super().kernels()

    def state_fields(self):
        fields = [f for f in super().state_fields() if f.name not in self._drop]
        if self._retype:
            fields = [self._retype if f.name == self._retype.name else f for f in fields]
        return fields

    def initial_state(self, num_envs, seed):
        values = super().initial_state(num_envs, seed)
        return values if self._initial is None else self._initial(values)


def build(env, backend="numpy", num_envs=2):
    return EnvWrapper(env, num_envs=num_envs, env_backend=backend)


def test_missing_policy_field():
    with pytest.raises(EnvironmentDeclarationError) as err:
        build(Custom(drop=("observations_runner",)))
    text = str(err.value)
    assert "environment 'ring_chase': policy 'runner' needs the per-env field" in text
    assert "'observations_runner' (float32, shape (3, 3))" in text and "does not declare it" in text


def test_wrong_dtype_and_shape_of_a_policy_field():
    wrong = StateField("rewards_chaser", np.float64, ("num_chasers",))
    with pytest.raises(
        EnvironmentDeclarationError, match="'rewards_chaser' .* float64 .* expected float32"
    ):
        build(Custom(retype=wrong))
    wrong = StateField("action_mask_chaser", np.float32, ("num_chasers", 4))
    with pytest.raises(
        EnvironmentDeclarationError, match=r"shape \(2, 4\) .* expected float32 shape \(2, 5\)"
    ):
        build(Custom(retype=wrong))


def test_missing_built_in_field():
    with pytest.raises(EnvironmentDeclarationError, match="'_done_' .* does not declare it"):
        build(Custom(drop=("_done_",)))


def test_initial_state_that_does_not_fit_num_envs():
    def one_env_only(values):
        return {**values, "positions": values["positions"][:1]}

    with pytest.raises(EnvironmentDeclarationError) as err:
        build(Custom(initial=one_env_only), num_envs=3)
    assert "field 'positions' has shape (1, 5); expected (num_envs=3, *(5,)) = (3, 5)" in str(
        err.value
    )
    with pytest.raises(EnvironmentDeclarationError, match="Unknown state field 'positon'"):
        build(Custom(initial=lambda v: {**v, "positon": v["positions"]}))


def test_more_than_1024_agents_per_environment():
    with pytest.raises(EnvironmentDeclarationError) as err:
        build(Custom(num_chasers=1000, num_runners=100))
    assert "1100 threads per environment" in str(err.value)
    assert "more than 1,024 agents per environment: not supported by one block per env" in str(
        err.value
    )


def test_cuda_kernel_name_missing_from_the_source():
    env = Custom(kernels=KernelSpec(("ring_chase_stepp",), cuda_source=CU))
    with pytest.raises(EnvironmentDeclarationError) as err:
        build(env, "pycuda")
    text = str(err.value)
    assert (
        "step kernel 'ring_chase_stepp' is not a __global__ function of ring_chase_step.cu" in text
    )
    assert "Did you mean 'ring_chase_step'" in text


def test_cuda_kernel_parameters_that_do_not_match(tmp_path: Path):
    source = tmp_path / "swapped.cu"
    source.write_text(
        '#include "ring_chase_state.h"\n'
        'extern "C" __global__ void ring_chase_step(int* _done_, int* _timestep_) {}\n'
    )
    env = Custom(kernels=KernelSpec(("ring_chase_step",), cuda_source=source))
    with pytest.raises(EnvironmentDeclarationError) as err:
        build(env, "pycuda")
    text = str(err.value)
    assert "swapped.cu: Signature of ring_chase_step does not match" in text
    assert "2 parameters in the kernel, 18 declared" in text
    assert "#0: kernel has 'int* _done_', spec declares 'int* _timestep_'" in text


def test_numba_kernel_missing_or_with_other_parameters(tmp_path: Path):
    module = tmp_path / "other_kernels.py"
    module.write_text(
        "from numba import cuda\n\n"
        "@cuda.jit\ndef ring_chase_step(_timestep_, done):\n    pass\n\n"
        "@cuda.jit\ndef ring_chase_stop(_timestep_):\n    pass\n"
    )
    env = Custom(kernels=KernelSpec(("ring_chase_step",), numba_module=str(module)))
    with pytest.raises(EnvironmentDeclarationError) as err:
        build(env, "numba")
    assert "numba kernel 'ring_chase_step' parameters do not match the declaration" in str(
        err.value
    )
    assert (
        "2 parameters in the kernel, 18 declared; #1: kernel has 'done', declared '_done_'"
        in str(err.value)
    )
    env = Custom(kernels=KernelSpec(("ring_chase_stpe",), numba_module=str(module)))
    with pytest.raises(
        EnvironmentDeclarationError,
        match="'ring_chase_stpe' is not a @cuda.jit kernel.*Did you mean",
    ):
        build(env, "numba")


def test_backend_without_kernels_and_unknown_backend():
    env = Custom(kernels=KernelSpec(("ring_chase_step",), cuda_source=CU))
    with pytest.raises(
        EnvironmentDeclarationError, match="no numba_module for env_backend 'numba'"
    ):
        build(env, "numba")
    with pytest.raises(ValueError, match="'cpu' steps Python environment objects"):
        build(RingChase(), "cpu")
    with pytest.raises(ValueError, match="Unknown env_backend 'gpu'; allowed"):
        build(RingChase(), "gpu")
    with pytest.raises(TypeError, match="needs a GpuEnvironment"):
        EnvWrapper(object(), 1)


def test_example_env_arguments_are_checked():
    with pytest.raises(ValueError, match="ring_size must be an integer >= 2, got 1"):
        RingChase(ring_size=1)


def test_policy_groups_must_lie_inside_the_agents():
    from ai_economist.warp_drive.scenario import PolicyGroup

    class Overlapping(RingChase):
        def policies(self):
            groups = super().policies()
            return {**groups, "runner": PolicyGroup("runner", 3, 3, 3, 3)}

    with pytest.raises(
        EnvironmentDeclarationError,
        match="policy 'runner' covers agents 3..5, outside the 5 agents",
    ):
        build(Overlapping())

    class Shared(RingChase):
        def policies(self):
            groups = super().policies()
            return {**groups, "runner": PolicyGroup("runner", 1, 3, 3, 3)}

    with pytest.raises(
        EnvironmentDeclarationError, match="policy 'runner' shares agents with policy 'chaser'"
    ):
        build(Shared())


# ---- contract extensions: state_struct, numba_factory, replicated_initial_state
RING_CONSTANTS = ("ring_size", "episode_length", "tag_reward", "tagged_penalty")


def test_state_struct_members_must_be_arrays():
    env = Custom(kernels=KernelSpec(("ring_chase_step",), cuda_source=CU, state_struct="RingData"))
    with pytest.raises(
        EnvironmentDeclarationError,
        match="scalar constant 'ring_size' cannot be a member of state_struct 'RingData'",
    ):
        build(env, "pycuda")


def test_state_struct_kernels_take_one_pointer_to_it(tmp_path: Path):
    from ai_economist.warp_drive import codegen
    from ai_economist.warp_drive.backends.gpu import header_for
    from ai_economist.warp_drive.checks.declaration import check_cuda_kernels

    source = tmp_path / "struct.cu"
    source.write_text(
        '#include "ring_chase_state.h"\n'
        'extern "C" __global__ void ring_chase_step(int* _done_) {}\n'
        'extern "C" __global__ void __launch_bounds__(32) ring_chase_ok(const RingData* d) {}\n'
    )
    kernels = KernelSpec(
        ("ring_chase_step",), cuda_source=source, state_struct="RingData",
        other_kernels=("ring_chase_ok",),
    )  # fmt: skip
    env = Custom(kernels=kernels, drop=RING_CONSTANTS)
    with pytest.raises(EnvironmentDeclarationError) as err:
        build(env, "pycuda")
    assert "takes (int* _done_); with state_struct='RingData' it must take one" in str(err.value)
    header = header_for(env, env.state_spec())
    assert "struct RingData {" in header and "  int* positions;" in header
    good = KernelSpec(("ring_chase_ok",), cuda_source=source, state_struct="RingData")
    env = Custom(kernels=good, drop=RING_CONSTANTS)
    check_cuda_kernels(env, env.state_spec(), source, codegen.write_header(env.name, header))


def test_numba_factory_must_exist_and_build_declared_kernels(tmp_path: Path):
    module = tmp_path / "factory_kernels.py"
    module.write_text(
        "from numba import cuda\n\n"
        "def make_kernels(constants):\n"
        "    assert constants['NUM_AGENTS'] == 5\n\n"
        "    @cuda.jit\n    def ring_chase_step(_timestep_):\n        pass\n\n"
        "    return {'ring_chase_step': ring_chase_step}\n"
    )
    env = Custom(kernels=KernelSpec(("ring_chase_step",), numba_module=str(module),
                                    numba_factory="make_kernel"))  # fmt: skip
    with pytest.raises(EnvironmentDeclarationError, match="numba_factory 'make_kernel' is not"):
        build(env, "numba")
    env = Custom(kernels=KernelSpec(("ring_chase_step",), numba_module=str(module),
                                    numba_factory="make_kernels"))  # fmt: skip
    with pytest.raises(EnvironmentDeclarationError, match="1 parameters in the kernel, 18"):
        build(env, "numba")


class Replicated(RingChase):
    replicated_initial_state = True

    def initial_state(self, num_envs, seed):
        values = super().initial_state(num_envs, seed)
        return {k: (v[0] if self.state_spec()[k].per_env else v) for k, v in values.items()}


def test_replicated_initial_state_is_one_envs_values():
    w = build(Replicated(), num_envs=3)
    positions = w.pull("positions")
    assert positions.shape == (3, 5) and (positions == positions[0]).all()

    class Batched(Replicated):
        def initial_state(self, num_envs, seed):
            return RingChase.initial_state(self, num_envs, seed)

    with pytest.raises(EnvironmentDeclarationError, match="field 'positions' has shape \\(3, 5\\)"):
        build(Batched(), num_envs=3)
