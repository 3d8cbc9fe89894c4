"""The COVID-19 GPU state, declared once.

``covid_state_fields()`` lists every device array of the GPU backends (CUDA C and Numba) as a
:class:`~ai_economist.warp_drive.state.StateField`: name, dtype, one environment's shape,
per-env or constant, and what a device reset does with it.  Everything else is derived from
this one list, in its order:

* through the generic GPU path (``gpu_env.CovidGpuEnvironment`` declares it): the allocation,
  the ``struct CovidData`` of device pointers in the generated C header and the pointer table
  the host uploads for it (``warp_drive/codegen.py``), device resets, ``state_dict``, pulls,
* the parameter list of the Numba kernels (``covid19_numba.py``).

Scalars (array sizes, model constants, observation offsets, modes) are compile-time
constants: ``compile_time_constants`` returns them, the generated header ``#define``s them and
the Numba factory closes over them.

GPU memory per env is kept small: the only history kept is the 601-day int8 ring buffer of
stringency levels the unemployment filters and the infection lag need (no per-episode
trajectories, unlike the original's ``(episode_length + 1, 51)`` arrays).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ai_economist.foundation.scenarios.covid19.model.metrics import (  # noqa: F401  (re-exported)
    EPISODE_METRIC_NAMES,
)
from ai_economist.foundation.scenarios.covid19.model.observations import ObservationLayout
from ai_economist.foundation.scenarios.covid19.model.params import NUM_DAYS_IN_AN_YEAR, CovidParams
from ai_economist.warp_drive.state import StateField, StateSpec

#: Kernel names, the same in CUDA C and Numba: the per-component step (launched in this
#: order) and the fused step. Done envs are reset by the generic one-launch reset.
STEP_KERNELS = (
    "CudaControlUSStateOpenCloseStatusStep",
    "CudaFederalGovernmentSubsidyStep",
    "CudaVaccinationCampaignStep",
    "CudaCovidAndEconomySimulationStep",
    "CudaComputeReward",
)
FUSED_KERNEL = "CudaCovidStepFused"
#: The scenario's folder: the CUDA C build entry and the env step kernels (1.7.1's paths).
SOURCE_DIR = Path(__file__).resolve().parents[1]
#: The kernels that are not 1.7.1's: the fused step and the shared header.
KERNELS_DIR = SOURCE_DIR / "kernels"
#: ``foundation/components/``: the component kernels (1.7.1's path).
COMPONENTS_DIR = SOURCE_DIR.parents[1] / "components"
#: The CUDA C build entry (includes every COVID-19 ``.cu`` file).
BUILD_SOURCE = SOURCE_DIR / "covid19_build.cu"
#: Every CUDA C file of the scenario, the build entry first.
CUDA_SOURCES = (
    BUILD_SOURCE,
    SOURCE_DIR / "covid19_env_step.cu",
    COMPONENTS_DIR / "covid19_components_step.cu",
    KERNELS_DIR / "covid19_fused_step.cu",
    KERNELS_DIR / "covid19_common.cuh",
)
#: Module of the Numba kernels (``make_numba_kernels(constants)``).
NUMBA_SOURCE = "ai_economist.foundation.scenarios.covid19.kernels.covid19_numba"
#: Built-in per-env arrays that the ``CUDADataManager`` creates itself.
BUILTIN_FIELDS = ("_done_", "_timestep_")
#: Observation keys -> the suffix of their ``OBS_A_*`` / ``OBS_P_*`` offset constants.
OBS_CONSTANT_NAMES = {
    "ControlUSStateOpenCloseStatus-agent_policy_indicators": "POLICY_INDICATORS",
    "FederalGovernmentSubsidy-current_subsidy_level": "CURRENT_SUBSIDY_LEVEL",
    "FederalGovernmentSubsidy-t_until_next_subsidy": "T_UNTIL_NEXT_SUBSIDY",
    "VaccinationCampaign-next_vaccination_rate": "NEXT_VACCINATION_RATE",
    "VaccinationCampaign-t_until_next_vaccines": "T_UNTIL_NEXT_VACCINES",
    "time": "TIME",
    "world-agent_index": "AGENT_INDEX",
    "world-agent_postsubsidy_productivity": "POSTSUBSIDY_PRODUCTIVITY",
    "world-agent_state": "AGENT_STATE",
    "world-lagged_stringency_level": "LAGGED_STRINGENCY_LEVEL",
}

_A = "num_agents"
F32, I32, I8 = np.float32, np.int32, np.int8


def _env(name, dtype, shape=(_A,), reset="snapshot", doc="", c_name=None) -> StateField:
    return StateField(name, dtype, shape, per_env=True, reset=reset, doc=doc, c_name=c_name)


def _const(name, dtype, shape=(_A,), doc="") -> StateField:
    return StateField(name, dtype, shape, per_env=False, doc=doc)


def model_state_fields() -> list[StateField]:
    """The per-env model state (the simulator's state, restored from the reset snapshot)."""
    return [
        _env("susceptible", F32, doc="S_t people"),
        _env("infected", F32, doc="I_t people"),
        _env("recovered", F32, doc="R_t people (vaccinated included)"),
        _env("vaccinated", F32, doc="V_t people"),
        _env("deaths", F32, doc="D_t = death_rate * (R_t - V_t); D_0 = death_rate * R_0"),
        _env("new_deaths", F32, doc="D_t - D_{t-1}"),
        _env("unemployed", F32, doc="U_t people"),
        _env("productivity", F32, doc="daily production ($)"),
        _env("postsubsidy_productivity", F32, doc="production + subsidy ($)"),
        _env("subsidy", F32, doc="subsidy paid to the state today ($)"),
        _env("vaccines_available", F32, doc="delivered today, used up by the scenario step"),
        _env("health_index", F32, doc="sum of normalised marginal health indices"),
        _env("economic_index", F32, doc="sum of normalised marginal economic indices"),
        _env("stringency_level", I32, doc="open/close level pi_t (1..num levels)"),
        _env("cooldown_until", I32, doc="open/close cooldown end step"),
        _env(
            "stringency_history",
            I8,
            ("history_len", _A),
            doc="ring buffer: global row j (day j, rows -filter_len..0 = real policy at reset) "
            "lives in slot j mod history_len",
        ),
        _env("filter_state", F32, (_A, "num_filters"), doc="recursive unemployment filters"),
        _env("subsidy_level", I32, (), doc="planner's subsidy level"),
        _env("planner_health_index", F32, (), doc="sum of the planner's health indices"),
        _env("planner_economic_index", F32, (), doc="sum of the planner's economic indices"),
        _env("beta_intercept_modulation", F32, (), doc="m_i; 1 at reset"),
        _env("beta_slope_modulation", F32, (), doc="m_s; 1 at reset"),
        _env("unemployment_modulation", F32, (), doc="unemployment response scale; 1 at reset"),
    ]


def policy_fields() -> list[StateField]:
    """The trainer-facing arrays of the two policies (``"a"``: the states, ``"p"``: the
    planner): observations, action masks, sampled actions, rewards."""
    return [
        _env("observations_a", F32, (_A, "obs_dim_a"), doc="flat agent observations"),
        _env("observations_p", F32, (1, "obs_dim_p"), doc="flat planner observation"),
        _env("action_mask_a", F32, (_A, "num_actions_a"), doc="1 = allowed; NO-OP first"),
        _env("action_mask_p", F32, (1, "num_actions_p"), doc="1 = allowed; NO-OP first"),
        _env("sampled_actions_a", I32, (_A,), reset="none", doc="written by the trainer"),
        _env("sampled_actions_p", I32, (1,), reset="none", doc="written by the trainer"),
        _env("rewards_a", F32, (_A,), reset="zeros", doc="rewards of the last step"),
        _env("rewards_p", F32, (1,), reset="zeros", doc="reward of the last step"),
    ]


def trainer_fields() -> list[StateField]:
    """Per-env arrays the trainer reads or writes (``policy_fields``) and the episode
    bookkeeping."""
    return [
        *policy_fields(),
        _env(
            "episode_metrics",
            F32,
            ("num_episode_metrics",),
            reset="none",
            doc="end-of-episode metrics (EPISODE_METRIC_NAMES) of the last finished episode",
        ),
        _env("completed_episodes", I32, (), reset="none", doc="episodes finished in this env"),
    ]


def constant_fields() -> list[StateField]:
    """Arrays stored once for all envs (model parameters, real-world policies)."""
    return [
        _const("population", F32, doc="N_i"),
        _const("beta_intercepts", F32),
        _const("beta_slopes", F32),
        _const("filter_weights", F32, (_A, "num_filters")),
        _const("filter_decay", F32, ("num_filters",), doc="exp(-1/lambda_k)"),
        _const("window_decay", F32, ("num_filters",), doc="exp(-filter_len/lambda_k)"),
        _const("unemployment_bias", F32, doc="baseline unemployment rate (%)"),
        _const("maximum_productivity", F32),
        _const("agents_health_norm", F32),
        _const("agents_economic_norm", F32),
        _const("min_agent_health", F32),
        _const("max_agent_health", F32),
        _const("min_agent_economic", F32),
        _const("max_agent_economic", F32),
        _const("agent_health_weightage", F32, doc="alpha' after priority scaling"),
        _const("max_daily_subsidy_per_state", F32),
        _const("num_vaccines_per_delivery", F32),
        _const(
            "real_policy_stringency",
            I32,
            ("episode_length + 1", _A),
            doc="row t: the real policy applied at step t (real-world-policy mode)",
        ),
        _const("real_subsidy_levels", I32, ("episode_length + 1",), doc="real-world-policy mode"),
    ]


def builtin_fields() -> list[StateField]:
    """The per-env built-ins the ``CUDADataManager`` creates itself (``BUILTIN_FIELDS``)."""
    return [
        _env("_done_", I32, (), reset="zeros", c_name="done"),
        _env("_timestep_", I32, (), reset="zeros", c_name="timestep"),
    ]


def covid_state_fields() -> list[StateField]:
    """Every device array, in declaration (= struct = kernel argument) order; symbolic dims."""
    return [*model_state_fields(), *trainer_fields(), *constant_fields(), *builtin_fields()]


#: Declared field -> ``CovidSimulation`` attribute, where the simulator names it differently.
SIMULATION_ATTRIBUTES = {"stringency_history": "history", "_timestep_": "timestep"}


def simulation_attribute(field_name: str) -> str:
    """The ``CovidSimulation`` attribute that holds declared field ``field_name``."""
    return SIMULATION_ATTRIBUTES.get(field_name, field_name)


def simulation_state_attrs() -> tuple[str, ...]:
    """The ``CovidSimulation`` attributes of per-env state (``reset_envs`` restores them, the
    numpy backend's ``state_dict`` saves them): the step counter and the declared model state."""
    names = ("_timestep_", *(f.name for f in model_state_fields()))
    return tuple(simulation_attribute(name) for name in names)


def state_dims(params: CovidParams, components, layout: ObservationLayout) -> dict[str, int]:
    """Values of the symbolic dimensions used in ``covid_state_fields``."""
    return {
        "num_agents": params.num_agents,
        "episode_length": params.episode_length,
        "history_len": params.history_len,
        "num_filters": params.num_filters,
        "obs_dim_a": layout.obs_dim("a"),
        "obs_dim_p": layout.obs_dim("p"),
        "num_actions_a": 1 + params.num_stringency_levels,
        "num_actions_p": 1 + components.num_subsidy_levels,
        "num_episode_metrics": len(EPISODE_METRIC_NAMES),
    }


def covid_state_spec(params: CovidParams, components, layout: ObservationLayout) -> StateSpec:
    """The resolved declaration (built-ins included) for these parameters."""
    return StateSpec(covid_state_fields()).resolve(state_dims(params, components, layout))


def allocatable_spec(spec: StateSpec) -> StateSpec:
    """``spec`` without the built-ins (the data manager creates those itself)."""
    return StateSpec(f for f in spec if f.name not in BUILTIN_FIELDS)


def observation_layout(sim) -> ObservationLayout:
    """The flat observation layout of a ``CovidSimulation``'s observation fields."""
    return ObservationLayout.for_keys(sim.observation_fields(), sim.params.num_agents)


def _real_policy_rows(params: CovidParams) -> np.ndarray:
    """(episode_length + 1, A): the policy real-world-policy mode applies at step t (one-day lag)."""
    steps = np.arange(params.episode_length + 1)
    return np.stack([params.real_policy_row(params.start_date_index + t - 1) for t in steps])


def simulation_state(sim) -> dict[str, np.ndarray]:
    """Every per-env declared field of a ``CovidSimulation`` (leading axis = env), uncast.

    ``rewards_*``, ``sampled_actions_*`` and the episode bookkeeping are not part of the
    simulator's state and are left out.
    """
    p, e = sim.params, sim.num_envs
    layout = observation_layout(sim)
    fields = sim.observation_fields()
    mask_a, mask_p = sim.action_masks()
    values = {}
    for f in model_state_fields():
        value = np.asarray(getattr(sim, simulation_attribute(f.name)))
        values[f.name] = value.reshape(e) if f.shape == () else value
    values.update(
        observations_a=layout.flatten(fields, "a"),
        observations_p=layout.flatten(fields, "p"),
        action_mask_a=mask_a,
        action_mask_p=mask_p,
        _timestep_=np.asarray(sim.timestep),
        _done_=(np.asarray(sim.timestep) >= p.episode_length).astype(np.int64),
    )
    return values


def constant_values(sim) -> dict[str, np.ndarray]:
    """The declared constants of a ``CovidSimulation``'s parameters and mode."""
    p, c = sim.params, sim.components
    levels = sim.real_subsidy_levels
    if levels is None:
        levels = np.zeros(p.episode_length + 1, dtype=np.int64)
    values = {
        "max_daily_subsidy_per_state": c.max_daily_subsidy_per_state,
        "num_vaccines_per_delivery": c.num_vaccines_per_delivery,
        "real_policy_stringency": _real_policy_rows(p),
        "real_subsidy_levels": np.asarray(levels)[: p.episode_length + 1],
    }
    for f in constant_fields():  # every other constant is the parameter of the same name
        if f.name not in values:
            values[f.name] = getattr(p, f.name)
    return values


def cast_to_field(field, value) -> np.ndarray:
    """``value`` broadcast to ``field.shape`` (leading env axis allowed) in the field's dtype;
    integer fields must hold integers in range."""
    v = np.asarray(value)
    if field.dtype.kind == "i":
        if not np.array_equal(v, np.round(v)):
            raise ValueError(f"{field.name}: non-integer values for an integer field")
        info = np.iinfo(field.dtype)
        if v.size and (v.min() < info.min or v.max() > info.max):
            raise OverflowError(f"{field.name}: values outside the {field.dtype} range")
    return np.array(v, dtype=field.dtype, order="C")


def host_initial_values(sim) -> dict[str, np.ndarray]:
    """One env's values right after reset (env 0 of ``sim``), plus every constant.

    ``sim`` is a freshly reset ``CovidSimulation``; values are cast to the declared dtypes and
    fields the simulator does not have (rewards, actions, episode bookkeeping) are zeros.
    """
    spec = covid_state_spec(sim.params, sim.components, observation_layout(sim))
    per_env = {k: v[0] for k, v in simulation_state(sim).items()}
    values = {**per_env, **constant_values(sim)}
    out = {}
    for f in allocatable_spec(spec):
        if f.name not in values:
            out[f.name] = np.zeros(f.shape, f.dtype)
        else:
            out[f.name] = cast_to_field(f, np.broadcast_to(values[f.name], f.shape))
    return out


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n - 1).bit_length())


def compile_time_constants(
    params: CovidParams,
    components,
    layout: ObservationLayout,
    *,
    use_real_world_policies: bool = False,
) -> dict[str, int | float]:
    """Every scalar the kernels need, by its C ``#define`` name.

    Observation offsets are ``OBS_A_<FIELD>`` / ``OBS_P_<FIELD>`` (``-1`` when the field is
    not part of that policy's vector), sizes ``OBS_A_DIM`` / ``OBS_P_DIM``.
    """
    p, c = params, components
    a = p.num_agents
    if layout.num_agents != a:
        raise ValueError(f"layout has {layout.num_agents} agents, params {a}")
    if a + 1 > 1024:
        raise ValueError(f"{a} agents + planner exceed the 1024 threads of a CUDA block")
    consts: dict[str, int | float] = {
        "NUM_AGENTS": a,
        "NUM_THREADS": a + 1,
        "REDUCTION_SIZE": _next_pow2(a),
        "EPISODE_LENGTH": p.episode_length,
        "FILTER_LEN": p.filter_len,
        "HISTORY_LEN": p.history_len,
        "NUM_FILTERS": p.num_filters,
        "BETA_DELAY": p.beta_delay,
        "NUM_STRINGENCY_LEVELS": p.num_stringency_levels,
        "NUM_ACTIONS_A": 1 + p.num_stringency_levels,
        "NUM_ACTIONS_P": 1 + c.num_subsidy_levels,
        "ACTION_COOLDOWN_PERIOD": int(c.action_cooldown_period),
        "SUBSIDY_INTERVAL": int(c.subsidy_interval),
        "NUM_SUBSIDY_LEVELS": int(c.num_subsidy_levels),
        "FIRST_DELIVERY_STEP": int(c.first_delivery_step),
        "DELIVERY_INTERVAL": int(c.delivery_interval),
        "DAILY_VACCINES_PER_MILLION_PEOPLE": float(c.daily_vaccines_per_million_people),
        "OBSERVE_RATE": int(bool(c.observe_rate)),
        "USE_REAL_WORLD_POLICIES": int(bool(use_real_world_policies)),
        "GAMMA": float(p.gamma),
        "DEATH_RATE": float(p.death_rate),
        "INFECTION_TOO_SICK_TO_WORK_RATE": float(p.infection_too_sick_to_work_rate),
        "POP_BETWEEN_AGE_18_65": float(p.pop_between_age_18_65),
        "DAILY_PRODUCTION_PER_WORKER": float(p.daily_production_per_worker),
        "VALUE_OF_LIFE": float(p.value_of_life),
        "ECONOMIC_REWARD_CRRA_ETA": float(p.economic_reward_crra_eta),
        "ECONOMIC_REWARD_CRRA_ETA_IS_ONE": int(p.economic_reward_crra_eta == 1.0),
        "RISK_FREE_INTEREST_RATE": float(p.risk_free_interest_rate),
        "PLANNER_HEALTH_NORM": float(p.planner_health_norm),
        "PLANNER_ECONOMIC_NORM": float(p.planner_economic_norm),
        "MIN_PLANNER_HEALTH": float(p.min_planner_health),
        "MAX_PLANNER_HEALTH": float(p.max_planner_health),
        "MIN_PLANNER_ECONOMIC": float(p.min_planner_economic),
        "MAX_PLANNER_ECONOMIC": float(p.max_planner_economic),
        "PLANNER_HEALTH_WEIGHTAGE": float(p.planner_health_weightage),
        "REWARD_NORMALIZATION_FACTOR": float(p.reward_normalization_factor),
        "NUM_DAYS_IN_AN_YEAR": NUM_DAYS_IN_AN_YEAR,
        "NUM_EPISODE_METRICS": len(EPISODE_METRIC_NAMES),
        "US_POPULATION": float(p.us_population),
        "OBS_A_DIM": layout.obs_dim("a"),
        "OBS_P_DIM": layout.obs_dim("p"),
    }
    for tag in ("a", "p"):
        offsets = layout.offsets(tag)
        for key, suffix in OBS_CONSTANT_NAMES.items():
            consts[f"OBS_{tag.upper()}_{suffix}"] = offsets[key][0] if key in offsets else -1
    if consts["REWARD_NORMALIZATION_FACTOR"] == 0:
        raise ValueError("reward_normalization_factor must be non-zero")
    return consts


def _field_bytes(f) -> int:
    return int(np.prod(f.shape, dtype=np.int64)) * f.dtype.itemsize


def per_env_bytes(spec: StateSpec) -> int:
    """Device bytes one env costs: its rows of the per-env arrays (every env starts alike, so
    each reset snapshot is one shared row, counted in :func:`constant_bytes`)."""
    return sum(_field_bytes(f) for f in spec if f.per_env)


def constant_bytes(spec: StateSpec) -> int:
    """Device bytes stored once: the constants and the one row of each reset snapshot."""
    return sum(_field_bytes(f) for f in spec if not f.per_env or f.reset == "snapshot")
