"""Helpers of the gather-trade-build GPU tests: small configs, a replaying generator and the
nvcc compile check."""

from __future__ import annotations

import re
import subprocess

import numpy as np
from gtb_world_helpers import SMALL_LAYOUT

from ai_economist.foundation.scenarios.simple_wood_and_stone import array_world as aw


def small_config(tmp_path, **overrides):
    """Build then Gather on the 5 x 6 test layout, 2 agents, skills drawn, fast regrowth."""
    path = tmp_path / "small.txt"
    path.write_text(SMALL_LAYOUT)
    config = {
        "components": [
            {"Build": {"payment": 10, "skill_dist": "pareto", "payment_max_skill_multiplier": 3}},
            {"Gather": {"move_labor": 1.0, "collect_labor": 1.0, "skill_dist": "lognormal"}},
        ],
        "n_agents": 2,
        "world_size": [5, 6],
        "episode_length": 60,
        "env_layout_file": str(path),
        "resource_regen_prob": 0.3,
        "planner_gets_spatial_info": False,
        "mobile_agent_observation_range": 2,
        "energy_warmup_constant": 3,
        "energy_warmup_method": "auto",
        "starting_agent_coin": 2,
    }
    config.update(overrides)
    return config


def crowded_config(tmp_path, **overrides):
    """7 agents on the test layout's 25 land cells, no skills, the "decay" labour warm-up."""
    comps = [{"Build": {"payment": 10, "skill_dist": "none"}},
             {"Gather": {"skill_dist": "none"}}]  # fmt: skip
    return small_config(tmp_path, n_agents=7, components=comps, energy_warmup_method="decay",
                        energy_warmup_constant=2, **overrides)  # fmt: skip


class ReplayRng:
    """Stands in for an env's generator in the array model: ``permutation`` returns the
    given move order, ``random(n)`` the given uniforms (which must be ``n``)."""

    def __init__(self) -> None:
        self.order: np.ndarray | None = None
        self.uniforms: np.ndarray | None = None

    def permutation(self, n: int) -> np.ndarray:
        assert self.order is not None and self.order.size == n
        return self.order.copy()

    def random(self, n: int) -> np.ndarray:
        assert self.uniforms is not None and self.uniforms.size == n, (n, self.uniforms)
        return self.uniforms.copy()


def array_state_from(state: dict, params: aw.GTBWorldParams) -> aw.GTBWorldState:
    """An array-model state equal to the GPU reference's (copies, the array model's dtypes),
    with :class:`ReplayRng` generators."""
    n = state["_timestep_"].shape[0]
    return aw.GTBWorldState(
        rngs=[ReplayRng() for _ in range(n)],
        timestep=state["_timestep_"].astype(np.int64),
        resource_maps=state["resource_maps"].astype(np.float64),
        house_owner=state["house_owner"].astype(np.int16),
        locs=state["locs"].astype(np.int64),
        inventory=state["inventory"].copy(),
        escrow=state["escrow"].copy(),
        labor=state["labor"].copy(),
        build_payment=state["build_payment"].copy(),
        build_skill=state["build_skill"].copy(),
        bonus_gather_prob=state["bonus_gather_prob"].copy(),
        coin_utility=state["coin_utility"].copy(),
        utility=state["utility"].copy(),
        welfare=state["welfare"].copy(),
        completions=state["completions"].astype(np.int64),
        auto_integrator=state["auto_integrator"].astype(np.int64),
    )


def replay(array_state: aw.GTBWorldState, draws) -> None:
    """Load one step's draws (``reference.StepDraws``) into the replaying generators."""
    for e, g in enumerate(array_state.rngs):
        g.order = draws.order[e]
        g.uniforms = np.concatenate([draws.gather_u[e][draws.events[e]], draws.regrow_u[e]])


def biased_actions(masks: np.ndarray, rng: np.random.Generator, build_bias=0.7) -> np.ndarray:
    """A random allowed action per agent (E, A); build, when allowed, with ``build_bias``;
    now and then a refused one (the kernels must ignore it)."""
    u = rng.random(masks.shape) * masks
    actions = u.argmax(axis=-1)
    build = (masks[..., 1] > 0) & (rng.random(masks.shape[:2]) < build_bias)
    actions = np.where(build, 1, actions)
    refused = rng.random(masks.shape[:2]) < 0.1
    return np.where(refused, rng.integers(0, masks.shape[-1], masks.shape[:2]), actions)


def compile_for_sm90_without_spills(env, nvcc, tmp_path, kernels) -> None:
    """nvcc builds ``env``'s CUDA C for sm_90 (warnings are errors) with ``kernels`` in the
    binary and no register spills."""
    from ai_economist.warp_drive import codegen
    from ai_economist.warp_drive.backends.gpu import header_for

    headers = codegen.write_header(env.name, header_for(env, env.state_spec()), tmp_path)
    source = env.kernels().cuda_source
    cubin = tmp_path / f"{env.name}.cubin"
    cmd = [
        str(nvcc), "-cubin", "-arch=sm_90", "-o", str(cubin), str(source), "-I", str(headers),
        "-Werror", "all-warnings", "-Xptxas", "-v,-warn-spills",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr}"
    binary = cubin.read_bytes()
    for kernel in kernels:
        assert kernel.encode() in binary, kernel
    spills = re.findall(r"(\d+) bytes spill stores", proc.stderr)
    assert spills and all(int(s) == 0 for s in spills), proc.stderr
