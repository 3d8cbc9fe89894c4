"""Both GPU backends (CUDA C via pycuda, Numba) against the float64 numpy model, on a real GPU.

Run on the device machine: ``python -m pytest -m gpu -q tests/foundation/scenarios/covid19``.
Every comparison names the first differing field, env, agent (observation key) and step; the
tolerances are in ``gpu_consistency.TOLERANCES`` (float32 storage: rtol 1e-4 plus per-field
absolute floors). Set ``AI_ECONOMIST_GPU_TEST_ENVS`` to change the 64 envs of the episode tests.
"""

from __future__ import annotations

import gc as garbage_collector
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai_economist.foundation.scenarios.covid19.backends import gpu_consistency as gc  # noqa: E402
from ai_economist.foundation.scenarios.covid19.configs import published_model  # noqa: E402
from ai_economist.foundation.scenarios.covid19.model.simulation import (  # noqa: E402
    CovidSimulation,
    component_params_from_config,
    real_world_subsidy_levels,
)
from ai_economist.warp_drive.errors import cudasim_enabled  # noqa: E402

pytestmark = pytest.mark.gpu
NUM_ENVS = int(os.environ.get("AI_ECONOMIST_GPU_TEST_ENVS", "64"))
BACKENDS = ("pycuda", "numba")


def require(backend: str) -> None:
    """Skip (with the reason) unless ``backend`` can run on a GPU here."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible to torch")
    if backend == "pycuda":
        pytest.importorskip("pycuda", reason="pycuda is not installed")
        from ai_economist.warp_drive.errors import find_nvcc

        try:
            find_nvcc()
        except RuntimeError as exc:
            pytest.skip(str(exc))
    else:
        if cudasim_enabled():
            pytest.skip("NUMBA_ENABLE_CUDASIM=1 is set: numba cannot use the GPU in this run")
        try:
            import numba.cuda
        except Exception as exc:  # numba-cuda fails to import with numpy >= 2.5
            pytest.skip(f"numba.cuda cannot be imported: {exc}")
        if not numba.cuda.is_available():
            pytest.skip("numba sees no CUDA GPU")


@pytest.fixture(scope="module")
def published():
    return published_model(540)


def make_backend(name, params, comps, num_envs, **kwargs):
    from ai_economist.foundation.scenarios.covid19.backends.gpu_backend import CovidGpuBackend

    require(name)
    return CovidGpuBackend(params, comps, num_envs, backend=name, **kwargs)


def per_env_state(backend) -> dict[str, np.ndarray]:
    return {f.name: backend.pull(f.name) for f in backend.spec if f.per_env}


def assert_reset_state(backend, envs) -> None:
    """The listed envs hold exactly (bitwise) the reset values."""
    envs = list(envs)
    for field in backend.spec:
        if not field.per_env or field.reset == "none":
            continue
        want = backend.initial_values.get(field.name, np.zeros(field.shape, field.dtype))
        got = backend.tensor(field.name)[envs].cpu().numpy()
        bad = [e for e, row in zip(envs, got) if not np.array_equal(row, want)]
        assert not bad, f"{field.name} not reset exactly in envs {bad[:10]}"


@pytest.mark.parametrize("mode", ["per_component", "fused"])
@pytest.mark.parametrize("name", BACKENDS)
def test_full_episode_matches_simulation(name, mode, published):
    params, comps = published
    backend = make_backend(name, params, comps, NUM_ENVS)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    assert not gc.compare(backend, sim), "initial state differs"
    gc.run_and_compare(backend, sim, params.episode_length, np.random.default_rng(0), mode)
    print(f"\n{name} {mode}, {NUM_ENVS} envs x 540 days; errors at the end:")
    print(gc.field_error_report(backend, sim))
    np.testing.assert_array_equal(backend.pull("_done_"), 1)
    np.testing.assert_array_equal(backend.pull("completed_episodes"), 1)  # by the last step
    expected = sim.deaths.sum(axis=-1).mean() / 1e3
    backend.reset_done()
    assert_reset_state(backend, range(NUM_ENVS))
    assert backend.episode_metrics()["usa/deaths (thousands)"] == pytest.approx(expected, rel=1e-4)
    fresh = CovidSimulation(params, comps, NUM_ENVS)
    gc.run_and_compare(backend, fresh, 3, np.random.default_rng(1), mode, label="after reset: ")


@pytest.mark.parametrize("name", BACKENDS)
def test_repeatable_and_fused_equals_per_component(name, published):
    """Same actions -> bitwise-identical states (deterministic reductions, no atomics); the
    fused kernel runs the same device functions as the five per-component kernels."""
    params, comps = published
    backend = make_backend(name, params, comps, 16)
    rng = np.random.default_rng(7)
    actions = []
    for _ in range(120):
        mask_a, mask_p = (backend.pull("action_mask_a"), backend.pull("action_mask_p"))
        actions.append(gc.random_valid_actions(rng, mask_a, mask_p))
        backend.tensor("sampled_actions_a").copy_(torch.from_numpy(actions[-1][0]))
        backend.tensor("sampled_actions_p").copy_(torch.from_numpy(actions[-1][1]))
        backend.step_per_component()
    first = per_env_state(backend)
    for label, step in (("repeat", backend.step_per_component), ("fused", backend.step_fused)):
        backend.reset_all()
        for actions_a, actions_p in actions:
            backend.tensor("sampled_actions_a").copy_(torch.from_numpy(actions_a))
            backend.tensor("sampled_actions_p").copy_(torch.from_numpy(actions_p))
            step()
        again = per_env_state(backend)
        for field, value in first.items():
            if label == "repeat":
                np.testing.assert_array_equal(again[field], value, err_msg=f"{label}: {field}")
            else:  # the same device functions; allow float32 rounding differences only
                mismatch = gc.compare_field(
                    field, again[field], value, backend.layout, population=params.population
                )
                assert mismatch is None, f"fused vs per-component: {mismatch}"


@pytest.mark.parametrize("name", BACKENDS)
def test_reset_done_only_touches_done_envs(name, published):
    params, comps = published
    backend = make_backend(name, params, comps, NUM_ENVS)
    sim = CovidSimulation(params, comps, NUM_ENVS)
    gc.run_and_compare(backend, sim, 40, np.random.default_rng(2), "fused")
    before = per_env_state(backend)
    done = [1, NUM_ENVS // 2, NUM_ENVS - 1]
    backend.tensor("_done_")[done] = 1
    backend.reset_done()
    assert_reset_state(backend, done)
    keep = [e for e in range(NUM_ENVS) if e not in done]
    for field, value in before.items():
        if field != "_done_":
            np.testing.assert_array_equal(backend.pull(field)[keep], value[keep], err_msg=field)
    # a reset records nothing (the step that ends an episode does: test_full_episode_...)
    assert not backend.pull("completed_episodes").any() and backend.episode_metrics() == {}
    backend.reset_all()
    assert_reset_state(backend, range(NUM_ENVS))


@pytest.mark.parametrize("name", BACKENDS)
def test_real_world_policy_mode_reproduces_the_original(name):
    """Real policies and subsidies over the tutorial's 405 days: the original's planner reward
    sum is 349.06 (see test_simulation_golden)."""
    params, comps = published_model(405, m_a=1.0, m_p=1.0)  # the covid tutorial
    levels = real_world_subsidy_levels(params, 20, 90, 20000)
    backend = make_backend(name, params, comps, 8, use_real_world_policies=True)
    np.testing.assert_array_equal(backend.pull("real_subsidy_levels"), levels)
    sim = CovidSimulation(params, comps, 8, True, levels)
    total = np.zeros(8)
    rng = np.random.default_rng(3)
    for _ in range(405):
        gc.run_and_compare(backend, sim, 1, rng, "alternate", label="real-world policies: ")
        total += backend.pull("rewards_p")[:, 0]
    np.testing.assert_allclose(total, 349.06, rtol=0.005)


@pytest.mark.parametrize("name", BACKENDS)
def test_parameter_modulations_per_env(name, published):
    params, comps = published
    backend = make_backend(name, params, comps, 16)
    sim = CovidSimulation(params, comps, 16)
    rng = np.random.default_rng(4)
    values = rng.uniform(0.5, 1.5, size=(3, 16))
    backend.set_parameter_modulations(*values)
    for target, v in zip(
        (sim.beta_intercept_modulation, sim.beta_slope_modulation, sim.unemployment_modulation),
        values,
    ):
        target[:, 0] = v
    gc.run_and_compare(backend, sim, 540, rng, "alternate", label="modulations: ")


@pytest.mark.parametrize("name", BACKENDS)
def test_fused_step_with_unaligned_observation_rows(name):
    """observe_rate: 65-float observation rows (not whole sectors); the fused kernels store
    exactly the dynamic columns. Frequent cooldowns, subsidy decisions and deliveries."""
    params, _ = published_model(120)
    comps = component_params_from_config(
        params,
        action_cooldown_period=7,
        subsidy_interval=10,
        delivery_interval=2,
        vaccine_delivery_start_date="2020-04-11",
        observe_rate=True,
    )
    backend = make_backend(name, params, comps, 16)
    assert backend.constants["OBS_A_DIM"] % 8 != 0
    sim = CovidSimulation(params, comps, 16)
    gc.run_and_compare(backend, sim, 120, np.random.default_rng(6), "fused", label="rate: ")


@pytest.mark.parametrize("name", BACKENDS)
def test_100k_envs(name, published):
    """100,000 envs step on one GPU; envs given the same actions equal a one-env simulation."""
    params, comps = published
    num_envs = 100_000
    backend = make_backend(name, params, comps, num_envs)
    print(
        f"\n{name}: {backend.memory_bytes() / 2**30:.2f} GiB of device memory for {num_envs} envs"
    )
    sim = CovidSimulation(params, comps, 1)
    rng = np.random.default_rng(5)
    watch = [0, 1, 54_321, num_envs - 1]
    for k in range(6):
        actions_a, actions_p = gc.random_valid_actions(rng, *sim.action_masks())
        backend.tensor("sampled_actions_a").copy_(torch.from_numpy(actions_a).expand(num_envs, -1))
        backend.tensor("sampled_actions_p").copy_(torch.from_numpy(actions_p).expand(num_envs, -1))
        (backend.step_fused if k % 2 else backend.step_per_component)()
        rewards = sim.step(actions_a, actions_p[:, 0])
        problems = gc.compare(backend, sim, *rewards, env_ids=watch)
        assert not problems, f"step {k + 1}:\n  " + "\n  ".join(map(str, problems))
    for field in ("observations_a", "observations_p", "rewards_a", "rewards_p", "infected"):
        assert torch.isfinite(backend.tensor(field)).all(), field
    assert (backend.tensor("_timestep_") == 6).all()
    backend.reset_all()
    assert int(backend.tensor("_timestep_").abs().sum()) == 0
    del backend  # free the ~10 GiB before the next backend's run
    garbage_collector.collect()
    torch.cuda.empty_cache()


_ON_DEVICE_SCRIPT = """
import numpy as np, torch
from ai_economist.foundation.scenarios.covid19.configs import published_model
from ai_economist.foundation.scenarios.covid19.backends.gpu_backend import CovidGpuBackend
torch.cuda.set_device({index})
params, comps = published_model(60)
backend = CovidGpuBackend(params, comps, 16, backend="pycuda", fused_step=True)
assert backend.tensor("rewards_p").device == torch.device("cuda", {index})
gen = torch.Generator(device="cuda").manual_seed(0)
backend.tensor("sampled_actions_a").random_(1, 11, generator=gen)
backend.tensor("sampled_actions_p").random_(0, 21, generator=gen)
total = np.zeros(16)
for _ in range(60):
    backend.step()
    total += backend.pull("rewards_p")[:, 0]
np.save({out!r}, total)
"""


def test_pycuda_backend_runs_on_the_process_gpu(tmp_path):
    """A process on cuda:1 (as a data-parallel rank) launches its kernels on GPU 1, with the
    same results as on GPU 0 (pycuda used to take device 0's context: illegal address)."""
    require("pycuda")
    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 CUDA GPUs")
    import subprocess
    import sys

    totals = []
    for index in (0, 1):
        out = tmp_path / f"gpu{index}.npy"
        script = _ON_DEVICE_SCRIPT.format(index=index, out=str(out))
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        totals.append(np.load(out))
    np.testing.assert_array_equal(totals[0], totals[1])
