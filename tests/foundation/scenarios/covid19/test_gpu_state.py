"""The COVID-19 GPU state declaration: generated header, argument orders, initial values, memory."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from ai_economist.datasets.covid19 import load_calibration
from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import CovidGpuEnvironment
from ai_economist.foundation.scenarios.covid19.model.params import build_params, exact_filter_state
from ai_economist.foundation.scenarios.covid19.model.simulation import (
    CovidSimulation,
    component_params_from_config,
)
from ai_economist.warp_drive import codegen

torch = pytest.importorskip("torch")

REQUIRED_CONSTANTS = (
    "NUM_AGENTS", "EPISODE_LENGTH", "FILTER_LEN", "HISTORY_LEN", "NUM_FILTERS", "BETA_DELAY",
    "NUM_STRINGENCY_LEVELS", "ACTION_COOLDOWN_PERIOD", "SUBSIDY_INTERVAL", "NUM_SUBSIDY_LEVELS",
    "FIRST_DELIVERY_STEP", "DELIVERY_INTERVAL", "USE_REAL_WORLD_POLICIES", "GAMMA", "DEATH_RATE",
    "INFECTION_TOO_SICK_TO_WORK_RATE", "POP_BETWEEN_AGE_18_65", "DAILY_PRODUCTION_PER_WORKER",
    "VALUE_OF_LIFE", "ECONOMIC_REWARD_CRRA_ETA", "RISK_FREE_INTEREST_RATE",
    "PLANNER_HEALTH_NORM", "PLANNER_ECONOMIC_NORM", "MIN_PLANNER_HEALTH", "MAX_PLANNER_HEALTH",
    "MIN_PLANNER_ECONOMIC", "MAX_PLANNER_ECONOMIC", "PLANNER_HEALTH_WEIGHTAGE",
    "REWARD_NORMALIZATION_FACTOR", "NUM_DAYS_IN_AN_YEAR", "OBS_A_DIM", "OBS_P_DIM",
    "OBSERVE_RATE", "DAILY_VACCINES_PER_MILLION_PEOPLE",
)  # fmt: skip


@pytest.fixture(scope="module")
def published():
    """The published training configuration (540 days, m_a=0.3, m_p=0.45)."""
    params = build_params(
        load_calibration(),
        episode_length=540,
        health_priority_scaling_agents=0.3,
        health_priority_scaling_planner=0.45,
    )
    comps = component_params_from_config(
        params, daily_vaccines_per_million_people=3000, vaccine_delivery_start_date="2021-01-12"
    )
    sim = CovidSimulation(params, comps, 1)
    layout = gpu_state.observation_layout(sim)
    spec = gpu_state.covid_state_spec(params, comps, layout)
    constants = gpu_state.compile_time_constants(params, comps, layout)
    return params, comps, sim, layout, spec, constants


def struct_member_names(header: str, struct: str) -> list[str]:
    """Member names of ``struct <struct>`` in a header text."""
    body = header.split(f"struct {struct} {{", 1)[1].split("};", 1)[0]
    names = []
    for line in body.splitlines():
        decl = line.split("//", 1)[0].strip().rstrip(";")
        if decl:
            names.append(decl.replace("*", " ").split()[-1])
    return names


def test_header_struct_follows_declaration_order(published):
    """The generic header (``KernelSpec.state_struct``): struct CovidData in declaration
    order, every compile-time constant defined."""
    from ai_economist.warp_drive.backends.gpu import header_for

    params, comps, *_, spec, constants = published
    env = CovidGpuEnvironment(params, comps)
    header = header_for(env, env.state_spec())
    assert struct_member_names(header, "CovidData") == [f.cname for f in spec]
    for name, value in constants.items():
        assert f"#define {name} {codegen.c_literal(value)}" in header


def test_float_literals_round_trip_exactly():
    for value in (0.1, 1 / 14, 320.80616941098435, 2.1466585995875e13, -0.007381112780421972):
        text = codegen.c_literal(value)
        assert text.endswith("f")
        assert np.float32(float(text[:-1])) == np.float32(value)
    assert codegen.c_literal(True) == "1" and codegen.c_literal(-1) == "-1"


def test_pointer_table_follows_declaration_order(published):
    from ai_economist.warp_drive.data_manager import CUDADataManager

    params, comps, sim, layout, spec, _ = published
    dm = CUDADataManager(params.num_agents + 1, params.episode_length, 3, device="cpu")
    gpu_state.allocatable_spec(spec).allocate(dm, gpu_state.host_initial_values(sim))
    table = codegen.pointer_table(dm, spec).numpy().view(np.uint64)
    expected = [dm.data_on_device_via_torch(f.name).data_ptr() for f in spec]
    assert table.tolist() == expected
    # memory: what the data manager holds is exactly what the declaration says
    per_env, const = gpu_state.per_env_bytes(spec), gpu_state.constant_bytes(spec)
    assert dm.memory_bytes() == 3 * per_env + const


def test_numba_kernels_take_the_declaration_in_order(published):
    pytest.importorskip("numba")
    numba_mod = pytest.importorskip(
        "ai_economist.foundation.scenarios.covid19.kernels.covid19_numba"
    )
    spec, constants = published[4], published[5]
    functions = numba_mod.device_functions(constants)
    arguments = numba_mod.body_arguments(functions)
    assert numba_mod.parameter_names() == [f.cname for f in spec]
    assert codegen.numba_parameter_names(spec) == [f.cname for f in spec]
    for name in (*numba_mod.STEP_KERNELS, numba_mod.FUSED_KERNEL):
        tree = ast.parse(numba_mod.kernel_source(name, arguments))
        fn = tree.body[0]
        assert fn.name == name
        assert [a.arg for a in fn.args.args] == [f.cname for f in spec]
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        declared = {f.cname for f in spec} | {"env", "tid", "t", "cuda"}
        bodies = set(arguments)
        assert used <= declared | bodies, used - declared - bodies


def test_initial_values_are_the_reset_state(published):
    params, comps, sim, layout, spec, _ = published
    values = gpu_state.host_initial_values(sim)
    assert set(values) == {f.name for f in gpu_state.allocatable_spec(spec)}
    for f in gpu_state.allocatable_spec(spec):
        assert values[f.name].shape == f.shape and values[f.name].dtype == f.dtype, f.name
    real, row = params.real_world_data, params.start_date_index
    np.testing.assert_array_equal(
        values["susceptible"], real["susceptible"][row].astype(np.float32)
    )
    np.testing.assert_allclose(
        values["deaths"], params.death_rate * real["recovered"][row], rtol=1e-7
    )
    history = params.initial_stringency_history()  # rows -filter_len .. 0
    slots = np.arange(-params.filter_len, 1) % params.history_len
    np.testing.assert_array_equal(values["stringency_history"][slots], history)
    np.testing.assert_array_equal(values["stringency_level"], history[-1])
    np.testing.assert_allclose(
        values["filter_state"], exact_filter_state(history, params.conv_lambdas), rtol=1e-6
    )
    assert values["observations_a"].shape == (51, 64)
    assert values["observations_p"].shape == (1, 463)
    onehot = layout.offsets("a")["world-agent_index"][0]
    np.testing.assert_array_equal(values["observations_a"][:, onehot : onehot + 51], np.eye(51))
    np.testing.assert_array_equal(values["action_mask_a"], 1.0)  # t=0 >= cooldown 0
    np.testing.assert_array_equal(values["action_mask_p"], 1.0)  # t=0: 0 % 90 == 0
    for name in ("beta_intercept_modulation", "beta_slope_modulation", "unemployment_modulation"):
        assert values[name] == 1.0
    for t in (1, 2, 540):  # real-policy table: the policy of day start + t - 1
        np.testing.assert_array_equal(
            values["real_policy_stringency"][t], params.real_policy_row(row + t - 1)
        )
    assert not np.any(values["real_subsidy_levels"])  # not in real-world-policy mode


def test_compile_time_constants(published):
    params, comps, sim, layout, spec, constants = published
    assert set(REQUIRED_CONSTANTS) <= set(constants)
    assert constants["NUM_THREADS"] == 52 and constants["REDUCTION_SIZE"] == 64
    assert constants["HISTORY_LEN"] == params.filter_len + 1 == 601
    assert constants["FIRST_DELIVERY_STEP"] == 296 and constants["OBS_A_DIM"] == 64
    for tag in ("a", "p"):
        offsets = layout.offsets(tag)
        for key, suffix in gpu_state.OBS_CONSTANT_NAMES.items():
            expected = offsets[key][0] if key in offsets else -1
            assert constants[f"OBS_{tag.upper()}_{suffix}"] == expected, (tag, key)
    real = gpu_state.compile_time_constants(params, comps, layout, use_real_world_policies=True)
    assert real["USE_REAL_WORLD_POLICIES"] == 1


def test_memory_per_env_is_small(published):
    spec = published[4]
    per_env = gpu_state.per_env_bytes(spec)
    assert per_env < 128 * 1024, f"{per_env} bytes per env"
    total = 100_000 * per_env + gpu_state.constant_bytes(spec)
    assert total < 16 * 2**30, f"100,000 envs need {total / 2**30:.1f} GiB"
    largest = max((f for f in spec if f.per_env), key=lambda f: np.prod(f.shape) * f.dtype.itemsize)
    assert largest.name == "stringency_history" and largest.dtype == np.int8
