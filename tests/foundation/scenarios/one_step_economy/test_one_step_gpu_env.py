"""The one-step economy on the generic GPU path, on the CPU: the numpy reference against the
batched array model, the Numba kernel (CUDA simulator) against the reference, nvcc compiling
the CUDA C kernel, and the errors before the first step."""

from __future__ import annotations

import copy
import re
import subprocess

import numpy as np
import pytest

pytest.importorskip("torch")

from ai_economist.foundation.scenarios.one_step_economy import array_model as am  # noqa: E402
from ai_economist.foundation.scenarios.one_step_economy import (  # noqa: E402
    one_step_economy_numba as numba_twin,
)
from ai_economist.foundation.scenarios.one_step_economy.batched_env import (  # noqa: E402
    OneStepEconomyBatchedEnv,
)
from ai_economist.foundation.scenarios.one_step_economy.gpu_declaration import (  # noqa: E402
    DEFAULT_ENV_CONFIG,
    UnsupportedOnGpuError,
)
from ai_economist.foundation.scenarios.one_step_economy.gpu_env import (  # noqa: E402
    OneStepEconomyGpu,
)
from ai_economist.warp_drive import codegen  # noqa: E402
from ai_economist.warp_drive.backends.gpu import header_for  # noqa: E402
from ai_economist.warp_drive.checks.declaration import check_cuda_kernels  # noqa: E402
from ai_economist.warp_drive.checks.parity import check_parity, random_actions  # noqa: E402
from ai_economist.warp_drive.env_wrapper import EnvWrapper  # noqa: E402
from ai_economist.warp_drive.errors import cudasim_enabled  # noqa: E402

needs_sim = pytest.mark.skipif(not cudasim_enabled(), reason="needs NUMBA_ENABLE_CUDASIM=1")


def config(**changes) -> dict:
    """The packaged env block with top-level ``changes`` and ``tax`` / ``labor`` kwargs."""
    block = copy.deepcopy(DEFAULT_ENV_CONFIG)
    block["components"][1]["PeriodicBracketTax"].update(changes.pop("tax", {}))
    block["components"][0]["SimpleLabor"].update(changes.pop("labor", {}))
    block.update(changes)
    return block


US_FEDERAL = {"tax_model": "us-federal-single-filer-2018-scaled"}
FIXED = {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.9]}  # fmt: skip
SAEZ = {"tax_model": "saez"}
COIN_EQ = {"planner_reward_type": "coin_eq_times_productivity", "mixing_weight_gini_vs_coin": 0.3}
LINEAR = {"agent_reward_type": "coin_minus_labor_cost", "labor_cost": 0.01}


def test_numpy_reference_equals_the_batched_model_step_for_step():
    """The GPU env's numpy reference and ``OneStepEconomyBatchedEnv`` give bit-equal
    observations, masks, rewards and done flags over three episodes with resets."""
    block = config(**COIN_EQ)
    gpu = EnvWrapper(OneStepEconomyGpu(**block), 5, "numpy")
    batched = OneStepEconomyBatchedEnv(num_envs=5, **block)
    gpu.reset_all_envs()
    batched.reset_all_envs()
    rng = np.random.default_rng(3)
    for _ in range(6):
        for tag in ("a", "p"):
            np.testing.assert_array_equal(gpu.observations(tag).numpy(), batched.observations(tag).numpy())  # fmt: skip
            np.testing.assert_array_equal(gpu.action_masks(tag).numpy(), batched.action_masks(tag).numpy())  # fmt: skip
        chosen = random_actions(rng, {t: gpu.action_masks(t).numpy() for t in ("a", "p")})
        for tag, value in chosen.items():
            batched.actions(tag).copy_(__import__("torch").from_numpy(value))
        gpu.step_all_envs(chosen)
        batched.step_all_envs()
        for tag in ("a", "p"):
            np.testing.assert_array_equal(gpu.rewards(tag).numpy(), batched.rewards(tag).numpy())
        np.testing.assert_array_equal(gpu.done().numpy(), batched.done().numpy())
        gpu.reset_only_done_envs()
        batched.reset_only_done_envs()


def test_episode_metrics_hand_computed():
    """Every bracket at 20 % and 30 hours each: taxes are 20 % of production, coin after the
    lump sum is 0.8 x own income + 0.2 x the mean income."""
    env = OneStepEconomyGpu()
    wrapper = EnvWrapper(env, 2, "numpy")
    wrapper.reset_all_envs()
    wrapper.step_all_envs({"a": np.zeros((2, 10), np.int32), "p": np.full((2, 7), 5, np.int32)})
    wrapper.step_all_envs({"a": np.full((2, 10), 30, np.int32), "p": np.zeros((2, 7), np.int32)})
    income = 30 * env.params.skills
    coin = 0.8 * income + 0.2 * income.mean()
    metrics = wrapper.episode_metrics()
    assert metrics["social/productivity"] == pytest.approx(income.sum())
    assert metrics["total_collected_taxes"] == pytest.approx(0.2 * income.sum())
    assert metrics["endow/3/Coin"] == pytest.approx(coin[3])
    assert metrics["endogenous/9/Labor"] == 30.0
    gini = np.abs(coin[:, None] - coin[None, :]).sum() / (2 * 10 * coin.sum()) / 0.9
    assert metrics["social/equality"] == pytest.approx(1 - gini)
    assert metrics["social_welfare/coin_eq_times_productivity"] == pytest.approx(
        (1 - gini) * income.sum() / 10
    )
    assert wrapper.done().tolist() == [1, 1]


def test_fixed_tax_models_use_their_rates():
    """US federal and fixed rates: the planner's actions change nothing; taxes follow the
    brackets (hours 100 for the top worker reaches the top brackets)."""
    for tax in (US_FEDERAL, FIXED):
        env = OneStepEconomyGpu(**config(tax=tax))
        wrapper = EnvWrapper(env, 1, "numpy")
        wrapper.reset_all_envs()
        wrapper.step_all_envs({"a": np.zeros((1, 10), np.int32), "p": np.zeros((1, 7), np.int32)})
        wrapper.step_all_envs({"a": np.full((1, 10), 100, np.int32), "p": np.zeros((1, 7), np.int32)})  # fmt: skip
        income = 100 * env.params.skills
        from ai_economist.foundation.components.tax_brackets import taxes_due

        due = taxes_due(income, env.params.cutoffs, env.params.fixed_rates).sum()
        assert wrapper.pull("total_collected_taxes")[0] == pytest.approx(due)
        np.testing.assert_allclose(wrapper.pull("rates_obs")[0], env.params.fixed_rates)


@needs_sim
@pytest.mark.parametrize(
    "block",
    [config(), config(tax=US_FEDERAL, **LINEAR), config(tax=FIXED, **COIN_EQ), config(tax=SAEZ),
     config(episode_length=6, tax={"period": 3}, labor={"mask_first_step": False})],
    ids=["planner-isoelastic", "us-federal-linear", "fixed-coin-eq", "saez-draws", "period-3-of-6"],
)  # fmt: skip
def test_numba_kernel_matches_the_reference_in_the_simulator(block):
    env = OneStepEconomyGpu(**block)
    result = check_parity(env, "numba", num_envs=2, num_steps=7, seed=1)
    assert result, result.message


def test_cuda_kernel_compiles_with_nvcc(nvcc, tmp_path):
    env = OneStepEconomyGpu()
    spec = env.state_spec()
    include = codegen.write_header(env.name, header_for(env, spec), tmp_path / "include")
    source = env.kernels().cuda_source
    check_cuda_kernels(env, spec, source, include)
    cubin = tmp_path / "one_step.cubin"
    cmd = [str(nvcc), "-cubin", "-arch=sm_90", "-o", str(cubin), str(source), "-I", str(include),
           "-Werror", "all-warnings", "-Xptxas", "-v,-warn-spills"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert b"one_step_economy_step" in cubin.read_bytes()
    spills = re.findall(r"(\d+) bytes spill stores", proc.stderr)
    assert spills and all(int(s) == 0 for s in spills), proc.stderr


def test_kernels_mirror_the_numpy_functions_by_name():
    kernels = OneStepEconomyGpu().kernels().cuda_source.parent
    source = "\n".join(p.read_text() for p in sorted(kernels.glob("*.cu*")))
    from ai_economist.foundation.components import saez, simple_labor
    from ai_economist.foundation.components import tax_brackets as tb
    from ai_economist.foundation.scenarios.one_step_economy import gpu_saez, rules
    from ai_economist.foundation.scenarios.one_step_economy import (
        one_step_economy_numba_saez as numba_saez,
    )

    numpy_homes = {
        "bracket_index": tb, "taxes_due": tb, "marginal_rate": tb, "labor_step": simple_labor,
        "set_rates_from_actions": am, "current_rates": am, "agent_observations": am,
        "planner_observations": am, "action_masks": am, "agent_utilities": rules,
        "planner_welfare": rules, "estimate_uniform_income_elasticity": saez,
        "pareto_weights": saez, "binned_welfare_weights": saez, "binned_pareto_params": saez,
        "saez_marginal_rates": saez, "bracketize_schedule": saez, "mix32": gpu_saez,
        "uniform_draws": gpu_saez, "saez_first_day": gpu_saez,
    }  # fmt: skip
    for name, module in numpy_homes.items():
        assert callable(getattr(module, name)), name
        assert re.search(rf"__device__ [\w ]+ {name}\(", source), name
        assert hasattr(numba_twin, name) or hasattr(numba_saez, name), name


# ------------------------------------------------------------------ errors before the first step
@pytest.mark.parametrize(
    ("block", "words"),
    [
        (
            config(tax={"tax_annealing_schedule": [-100, 0.001]}),
            ["tax_annealing_schedule has no GPU kernel"],
        ),
        (
            {
                **config(),
                "components": [
                    DEFAULT_ENV_CONFIG["components"][1],
                    DEFAULT_ENV_CONFIG["components"][0],
                ],
            },  # fmt: skip
            ["components ['SimpleLabor', 'PeriodicBracketTax']", "got ['PeriodicBracketTax'"],
        ),
        (config(n_agents=30), ["n_agents=30", "1..29 workers"]),
    ],
    ids=["annealing", "component-order", "too-many-agents"],
)
def test_unsupported_options_name_the_option_and_what_is_supported(block, words):
    with pytest.raises(UnsupportedOnGpuError) as err:
        OneStepEconomyGpu(**block)
    for word in words:
        assert word in str(err.value)


def test_planner_action_outside_its_mask_stops_the_reference_step():
    wrapper = EnvWrapper(OneStepEconomyGpu(), 2, "numpy")
    wrapper.reset_all_envs()
    wrapper.step_all_envs({"a": np.zeros((2, 10), np.int32), "p": np.zeros((2, 7), np.int32)})
    before = wrapper.pull("coin").copy()
    planner = np.zeros((2, 7), np.int32)
    planner[1, 4] = 3  # the rates are masked on the labour step
    with pytest.raises(ValueError, match=r"policy 'p' env 1 agent 4 chose action 3, outside"):
        wrapper.step_all_envs({"a": np.full((2, 10), 5, np.int32), "p": planner})
    np.testing.assert_array_equal(wrapper.pull("coin"), before)  # nothing stepped


@needs_sim
def test_kernel_counts_masked_actions_and_applies_no_op():
    env = OneStepEconomyGpu()
    wrapper = EnvWrapper(env, 2, "numba")
    wrapper.reset_all_envs()
    hours = np.full((2, 10), 40, np.int32)  # labour is masked on the first step
    wrapper.step_all_envs({"a": hours, "p": np.zeros((2, 7), np.int32)})
    assert wrapper.pull("invalid_actions").tolist() == [10, 10]
    assert wrapper.pull("coin").sum() == 0.0
    with pytest.raises(ValueError, match=r"20 action\(s\) outside their masks on the device"):
        env.check_device_actions(wrapper.pull)


def test_more_envs_than_memory_fails_before_allocating(monkeypatch):
    from ai_economist.warp_drive.data_manager import CUDADataManager
    from ai_economist.warp_drive.errors import DeviceMemoryError

    monkeypatch.setattr(CUDADataManager, "_available_device_memory", lambda self: 10**6)
    with pytest.raises(DeviceMemoryError, match=r"per env x 100000 envs.*At most \d+ envs"):
        EnvWrapper(OneStepEconomyGpu(), 100_000, "numpy")


def test_state_dict_keeps_one_snapshot_row_and_loads_per_env_ones_that_agree():
    from ai_economist.warp_drive.env_state import EnvStateMismatch

    wrapper = EnvWrapper(OneStepEconomyGpu(), 3, "numpy", seed=1)
    state = wrapper.backend.state_dict()
    assert {v.shape[0] for v in state["snapshots"].values()} == {1}  # every env starts alike
    old = copy.deepcopy(state)  # as written before snapshots were shared: one row per env
    old["snapshots"] = {k: np.repeat(v, 3, axis=0) for k, v in state["snapshots"].items()}
    other = EnvWrapper(OneStepEconomyGpu(), 3, "numpy", seed=1)
    other.backend.load_state_dict(old)
    for name, row in state["snapshots"].items():
        np.testing.assert_array_equal(other.backend.state_dict()["snapshots"][name], row)
    old["snapshots"]["coin"][2] += 1.0
    with pytest.raises(EnvStateMismatch, match=r"'snapshots/coin' differs between envs"):
        other.backend.load_state_dict(old)


@needs_sim
def test_training_builder_picks_the_gpu_env_for_kernel_backends():
    from ai_economist.foundation.scenarios.one_step_economy.registration import (
        build_one_step_economy,
    )
    from ai_economist.training.config import load_run_config, packaged_config_path
    from ai_economist.warp_drive.backend_names import EnvBackend
    from ai_economist.warp_drive.registrar import default_registrar
    from ai_economist.warp_drive.registry import get_env

    run_config = load_run_config(packaged_config_path("one_step_economy"))
    run_config["trainer"]["num_envs"] = 3
    env = build_one_step_economy(run_config, "cpu", EnvBackend.NUMBA)
    assert isinstance(env, EnvWrapper) and isinstance(env.env, OneStepEconomyGpu)
    assert env.policy_specs["p"].obs_dim == 60 and env.policy_specs["a"].num_actions == 101
    entry = get_env("one_step_economy")
    assert entry.resolve_backend(run_config, "cuda") is EnvBackend.PYCUDA  # auto on a GPU
    assert entry.resolve_backend(run_config, "cpu") is EnvBackend.NUMPY  # auto on the CPU
    auto_on_cpu = build_one_step_economy(
        run_config, "cpu", entry.resolve_backend(run_config, "cpu")
    )
    assert isinstance(auto_on_cpu, OneStepEconomyBatchedEnv)
    assert default_registrar.get("one_step_economy", env_backend="pycuda") is OneStepEconomyGpu


# ------------------------------------------------------------------ the Saez model
def filled_saez_wrapper(num_envs: int = 2, **tax) -> EnvWrapper:
    """Numpy Saez envs stepped (random allowed actions) until their buffers have filled."""
    wrapper = EnvWrapper(
        OneStepEconomyGpu(**config(tax={**SAEZ, **tax})), num_envs, "numpy", seed=1
    )
    wrapper.reset_all_envs()
    rng = np.random.default_rng(0)
    for _ in range(100):  # 50 tax days x 10 workers = the 500 samples
        masks = {t: wrapper.action_masks(t).numpy() for t in ("a", "p")}
        wrapper.step_all_envs(random_actions(rng, masks))
        wrapper.reset_only_done_envs()
    assert wrapper.pull("saez_count").tolist() == [500] * num_envs
    return wrapper


@pytest.mark.parametrize("tax", [{}, {"pareto_weight_type": "uniform", "saez_fixed_elas": 0.3}])
def test_saez_formula_is_the_dict_components(tax):
    """On the same buffer, estimate and running average, the reference sets the rates the
    dict-API component's ``compute_and_set_new_period_rates_from_saez_formula`` sets."""
    from ai_economist.foundation.scenarios.one_step_economy import gpu_saez

    wrapper = filled_saez_wrapper(**tax)
    env = wrapper.env
    state = {name: wrapper.pull(name) for name in ("saez_buffer", "saez_count", "saez_next",
             "saez_elas", "saez_log_z0", "saez_running_avg")}  # fmt: skip
    component = env.dict_env.get_component("PeriodicBracketTax")
    buffer = gpu_saez.chronological_buffer(state["saez_buffer"][1], 500, int(state["saez_next"][1]))
    component._local_saez_buffer = buffer.tolist()
    component._reached_min_samples = True
    component.elas_t, component.log_z0_t = (
        float(state["saez_elas"][1]),
        float(state["saez_log_z0"][1]),
    )
    component.running_avg_tax_rates = state["saez_running_avg"][1].copy()
    component.compute_and_set_new_period_rates_from_saez_formula()
    rates = gpu_saez.saez_formula_rates(state, env.saez, 1)
    np.testing.assert_array_equal(rates, component.curr_bracket_tax_rates)
    assert state["saez_elas"][1] == component.elas_t
    np.testing.assert_array_equal(state["saez_running_avg"][1], component.running_avg_tax_rates)
    assert 0 < rates[0] <= 1 and rates[-1] > 0.5  # a progressive schedule, high top rate


@needs_sim
def test_saez_formula_kernel_matches_the_reference_in_the_simulator():
    """From filled buffers (the numpy state loaded into the Numba backend): rates, estimates,
    buffers and everything else agree for an episode and a half."""
    from ai_economist.warp_drive.checks.parity import compare_fields

    ref = filled_saez_wrapper()
    env = ref.env
    other = EnvWrapper(env, 2, "numba", seed=1)
    other.backend.load_state_dict(ref.backend.state_dict())
    names = [f.name for f in ref.backend.spec if f.per_env]
    rng = np.random.default_rng(5)
    for _ in range(3):
        chosen = random_actions(rng, {t: ref.action_masks(t).numpy() for t in ("a", "p")})
        for wrapper in (ref, other):
            wrapper.step_all_envs(chosen)
        assert compare_fields(names, ref, other, 1e-5, 1e-6, env.parity_tolerances()) is None
        ref.reset_only_done_envs()
        other.reset_only_done_envs()
    assert ref.pull("saez_reached").tolist() == [1, 1]
    assert ref.episode_metrics()["saez/estimated_elasticity"] > 0


def test_the_trainer_trains_on_the_gpu_env_on_the_cpu(tmp_path, monkeypatch):
    """The generic env through the trainer (numpy backend: the path the GPU takes, minus the
    kernels); its policies sample only allowed actions (the reference would raise)."""
    import json

    import yaml

    from ai_economist.training import training_script
    from ai_economist.training.config import packaged_config_path
    from ai_economist.training.environments import (
        ENVIRONMENTS,
        register_gpu_training_env,
        training_env_names,
    )

    training_env_names()  # every registration module imported before the registry is copied
    monkeypatch.setattr(ENVIRONMENTS, "_entries", dict(ENVIRONMENTS._entries))
    register_gpu_training_env(OneStepEconomyGpu, name="one_step_generic")
    run_config = yaml.safe_load(packaged_config_path("one_step_economy").read_text())
    run_config["name"] = "one_step_generic"
    path = tmp_path / "one_step_generic.yaml"
    path.write_text(yaml.safe_dump(run_config))
    args = ["--env", "one_step_generic", "--config", str(path), "--device", "cpu",
            "--results_dir", str(tmp_path / "run"), "--quiet", "trainer.num_envs=16",
            "trainer.train_batch_size=64", "trainer.num_episodes=64", "saving.tensorboard=false",
            "trainer.progress_bar=false", "saving.metrics_log_freq=1"]  # fmt: skip
    assert training_script.main(args) == 0
    rows = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    last = json.loads(rows[-1])
    assert len(rows) == 2 and last["env/social/productivity"] > 0 and "env/endow/9/Coin" in last


# ------------------------------------------------------------------ the CUDA C step on the CPU
@pytest.mark.parametrize(
    ("block", "steps"),
    [(config(), 6), (config(tax=US_FEDERAL, **LINEAR), 4), (config(tax=FIXED, **COIN_EQ), 4),
     (config(episode_length=6, tax={"period": 3}, labor={"mask_first_step": False}), 8),
     (config(tax=SAEZ), 120), (config(tax={**SAEZ, "pareto_weight_type": "uniform"}), 110)],
    ids=["planner", "us-federal", "fixed", "period-3-of-6", "saez", "saez-uniform"],
)  # fmt: skip
def test_cuda_c_step_matches_the_reference_when_emulated_on_the_cpu(block, steps, tmp_path_factory):
    """The ``.cu`` kernel itself (g++ and a CUDA shim: a thread per CUDA thread, barriers for
    ``__syncthreads``) against the numpy reference; the Saez runs fill the buffers (100 steps)
    and then set rates by the formula."""
    from cuda_emulation import compiler_problem, emulated_wrapper

    from ai_economist.warp_drive.checks.parity import compare_fields

    if compiler_problem():
        pytest.skip(compiler_problem())
    env = OneStepEconomyGpu(**block)
    ref = EnvWrapper(env, 3, "numpy", seed=1)
    build = tmp_path_factory.getbasetemp() / "one_step_emu"  # shared: builds cached by content
    build.mkdir(exist_ok=True)
    emu = emulated_wrapper(env, 3, build, seed=1)
    names = [f.name for f in ref.backend.spec if f.per_env]
    rng = np.random.default_rng(0)
    for step in range(steps):
        chosen = random_actions(rng, {t: ref.action_masks(t).numpy() for t in ("a", "p")})
        ref.step_all_envs(chosen)
        emu.step_all_envs(chosen)
        diff = compare_fields(names, ref, emu, 1e-5, 1e-6, env.parity_tolerances())
        assert diff is None, f"step {step + 1}: {diff}"
        ref.reset_only_done_envs()
        emu.reset_only_done_envs()
    if env.saez is not None:
        assert emu.pull("saez_reached").tolist() == [1, 1, 1]


def test_cuda_c_step_with_envs_out_of_phase_in_one_block(tmp_path_factory):
    """Four envs share a block (``KernelSpec.envs_per_block``) while their tax days and
    episode ends differ: two of them are ended early, so every barrier is reached by envs
    that take other branches."""
    from cuda_emulation import compiler_problem, emulated_wrapper

    from ai_economist.warp_drive.backends.gpu import envs_per_block
    from ai_economist.warp_drive.checks.parity import compare_fields

    if compiler_problem():
        pytest.skip(compiler_problem())
    env = OneStepEconomyGpu(**config(episode_length=6, tax={"period": 3}))
    assert envs_per_block(env, 4, env.num_agents) == 4
    ref = EnvWrapper(env, 4, "numpy", seed=1)
    build = tmp_path_factory.getbasetemp() / "one_step_emu"
    build.mkdir(exist_ok=True)
    emu = emulated_wrapper(env, 4, build, seed=1)
    names = [f.name for f in ref.backend.spec if f.per_env]
    rng = np.random.default_rng(3)
    phases = set()
    for step in range(14):
        if step in (1, 2):  # end env `step` early: it restarts out of phase
            for wrapper in (ref, emu):
                wrapper.backend.tensor("_done_")[step] = 1
            ref.reset_only_done_envs()
            emu.reset_only_done_envs()
        phases.add(tuple(ref.pull("tax_cycle_pos").tolist()))
        chosen = random_actions(rng, {t: ref.action_masks(t).numpy() for t in ("a", "p")})
        ref.step_all_envs(chosen)
        emu.step_all_envs(chosen)
        diff = compare_fields(names, ref, emu, 1e-5, 1e-6, env.parity_tolerances())
        assert diff is None, f"step {step + 1}: {diff}"
        ref.reset_only_done_envs()
        emu.reset_only_done_envs()
    assert any(len(set(p)) == 3 for p in phases)  # three tax-cycle positions in one block
