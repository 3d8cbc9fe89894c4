"""Compare a GPU backend (``CovidGpuBackend``) with the float64 numpy model (``CovidSimulation``).

Used by the tests (Numba simulator on the CPU, both backends on a GPU) and runnable by hand::

    python -m ai_economist.foundation.scenarios.covid19.gpu_consistency --backend pycuda

Tolerances: ``tolerances.py``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from ai_economist.foundation.scenarios.covid19 import gpu_state
from ai_economist.foundation.scenarios.covid19.tolerances import (  # noqa: F401  (re-exported)
    DEFAULT_TOLERANCE,
    EXACT,
    PEOPLE,
    TOLERANCES,
)
from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend


@dataclass
class Mismatch:
    """The worst element of one field that is out of tolerance."""

    field: str
    where: str
    gpu: float
    ref: float
    allowed: float
    count: int

    def __str__(self) -> str:
        return (
            f"{self.field}{self.where}: gpu={self.gpu!r} ref={self.ref!r} "
            f"|diff|={abs(self.gpu - self.ref):.3g} > allowed {self.allowed:.3g} "
            f"({self.count} element(s) out of tolerance)"
        )


def _obs_key(layout, tag: str, offset: int) -> str:
    for key, (start, size) in layout.offsets(tag).items():
        if start <= offset < start + size:
            return f"{key}[{offset - start}]" if size > 1 else key
    return f"element {offset}"


def describe_index(name: str, index: tuple, layout=None, env_ids=None) -> str:
    """``[env 1, agent 4, 'world-agent_state'[2]]``-style location of an element."""
    parts = [f"env {index[0] if env_ids is None else env_ids[index[0]]}"] if index else []
    rest = index[1:]
    if name in ("observations_a", "action_mask_a", "filter_state") and rest:
        parts.append(f"agent {rest[0]}")
        rest = rest[1:]
    elif name == "stringency_history" and rest:
        parts.append(f"slot {rest[0]}")
        rest = rest[1:]
        if rest:
            parts.append(f"agent {rest[0]}")
            rest = ()
    elif name in ("observations_p", "action_mask_p", "rewards_p", "sampled_actions_p"):
        rest = rest[1:]
    elif rest:
        parts.append(f"agent {rest[0]}")
        rest = rest[1:]
    if rest and layout is not None and name.startswith("observations_"):
        parts.append(repr(_obs_key(layout, name[-1], int(rest[0]))))
    elif rest:
        parts.append(f"element {rest[0]}")
    return "[" + ", ".join(parts) + "]"


def allowed_error(name: str, ref: np.ndarray, population=None, tolerance=None) -> np.ndarray:
    """atol + rtol * |ref| for field ``name`` (0 for the exact fields), shaped like ``ref``."""
    rtol, atol = (
        (0.0, 0.0) if name in EXACT else (tolerance or TOLERANCES.get(name, DEFAULT_TOLERANCE))
    )
    if isinstance(atol, str):  # "<x> * population"
        if population is None:
            raise ValueError(f"{name}: the tolerance {atol!r} needs the population")
        atol = float(atol.split("*")[0]) * np.asarray(population, dtype=np.float64)
    return np.broadcast_to(atol + rtol * np.abs(ref), ref.shape)


def compare_field(
    name: str, gpu, ref, layout=None, tolerance=None, env_ids=None, population=None
) -> Mismatch | None:
    """The worst out-of-tolerance element of one field, or None when it matches."""
    ref = np.asarray(ref, dtype=np.float64)
    gpu = np.asarray(gpu, dtype=np.float64).reshape(ref.shape)
    allowed = allowed_error(name, ref, population, tolerance)
    diff = np.abs(gpu - ref)
    bad = ~(diff <= allowed)  # NaN counts as bad
    if not bad.any():
        return None
    excess = np.where(bad, np.nan_to_num(diff - allowed, nan=np.inf), -np.inf)
    index = np.unravel_index(int(np.argmax(excess)), ref.shape)
    return Mismatch(
        name,
        describe_index(name, tuple(int(i) for i in index), layout, env_ids),
        float(gpu[index]),
        float(ref[index]),
        float(allowed[index]),
        int(bad.sum()),
    )


def reference_values(sim, agent_rewards=None, planner_rewards=None) -> dict[str, np.ndarray]:
    """Every declared per-env field the simulator knows, plus the rewards when given."""
    values = gpu_state.simulation_state(sim)
    if agent_rewards is not None:
        values["rewards_a"] = np.asarray(agent_rewards)
        values["rewards_p"] = np.asarray(planner_rewards).reshape(-1, 1)
    return values


def compare(
    backend, sim, agent_rewards=None, planner_rewards=None, skip=(), env_ids=None
) -> list[Mismatch]:
    """Mismatches (one per field, in declaration order) between ``backend`` and ``sim``.

    With ``env_ids``, only those envs of the backend are read (and compared with a ``sim`` of
    ``len(env_ids)`` envs, or of one env that all of them should equal).
    """
    out = []
    for name, ref in reference_values(sim, agent_rewards, planner_rewards).items():
        if name in skip:
            continue
        ids = None if env_ids is None else [int(e) for e in env_ids]
        if ids is None:
            gpu = backend.pull(name)
        else:
            gpu = backend.tensor(name)[ids].cpu().numpy()
            ref = np.broadcast_to(np.asarray(ref), (len(ids), *np.shape(ref)[1:]))
        mismatch = compare_field(
            name, gpu, ref, backend.layout, env_ids=ids, population=sim.params.population
        )
        if mismatch is not None:
            out.append(mismatch)
    return out


def random_valid_actions(rng: np.random.Generator, mask_a, mask_p) -> tuple[np.ndarray, np.ndarray]:
    """One allowed action per agent, uniformly among the allowed ones: (E, A) and (E, 1)."""
    pick = lambda mask: (rng.random(mask.shape) * (np.asarray(mask) > 0)).argmax(axis=-1)  # noqa: E731
    return pick(mask_a).astype(np.int32), pick(mask_p).astype(np.int32)


def run_and_compare(
    backend, sim, steps: int, rng: np.random.Generator, mode: str = "per_component", label: str = ""
) -> int:
    """Step ``backend`` and ``sim`` together ``steps`` times with random valid actions (from the
    simulator's masks) and raise ``AssertionError`` at the first step with a mismatch.

    ``mode``: ``"per_component"``, ``"fused"`` or ``"alternate"`` (fused on odd steps).
    Returns the number of steps taken.
    """
    import torch

    for k in range(steps):
        mask_a, mask_p = sim.action_masks()
        actions_a, actions_p = random_valid_actions(rng, mask_a, mask_p)
        backend.tensor("sampled_actions_a").copy_(torch.from_numpy(actions_a))
        backend.tensor("sampled_actions_p").copy_(torch.from_numpy(actions_p))
        fused = mode == "fused" or (mode == "alternate" and k % 2 == 1)
        (backend.step_fused if fused else backend.step_per_component)()
        rewards = sim.step(actions_a, actions_p[:, 0])
        problems = compare(backend, sim, *rewards)
        if problems:
            t = int(np.max(sim.timestep))
            kind = "fused" if fused else "per-component"
            lines = "\n  ".join(str(p) for p in problems)
            raise AssertionError(
                f"{label}{backend.name} ({kind} kernels) differs from CovidSimulation at step "
                f"t={t} (first differing field listed first):\n  {lines}"
            )
    return steps


def field_error_report(backend, sim, agent_rewards=None, planner_rewards=None) -> str:
    """Per field: max |diff| and max |diff| / |ref| (for tuning tolerances)."""
    rows = []
    for name, ref in reference_values(sim, agent_rewards, planner_rewards).items():
        ref = np.asarray(ref, dtype=np.float64)
        gpu = backend.pull(name).astype(np.float64).reshape(ref.shape)
        diff = np.abs(gpu - ref)
        rel = diff / np.maximum(np.abs(ref), 1e-30)
        rows.append(f"{name:28s} max|diff|={diff.max():.3g} max rel={rel.max():.3g}")
    return "\n".join(rows)


def main(argv=None) -> None:  # pragma: no cover - a manual tool for the GPU machine
    from ai_economist.datasets.covid19 import load_calibration
    from ai_economist.foundation.scenarios.covid19.gpu_backend import CovidGpuBackend
    from ai_economist.foundation.scenarios.covid19.params import build_params
    from ai_economist.foundation.scenarios.covid19.simulation import (
        CovidSimulation,
        component_params_from_config,
    )

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--backend", default=EnvBackend.PYCUDA.value, choices=[b.value for b in GPU_BACKENDS]
    )
    parser.add_argument("--num_envs", type=int, default=8)
    parser.add_argument("--episode_length", type=int, default=540)
    parser.add_argument(
        "--mode", default="alternate", choices=("per_component", "fused", "alternate")
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    params = build_params(
        load_calibration(),
        episode_length=args.episode_length,
        health_priority_scaling_agents=0.3,
        health_priority_scaling_planner=0.45,
    )
    comps = component_params_from_config(
        params, daily_vaccines_per_million_people=3000, vaccine_delivery_start_date="2021-01-12"
    )
    backend = CovidGpuBackend(params, comps, args.num_envs, backend=args.backend)
    sim = CovidSimulation(params, comps, args.num_envs)
    rng = np.random.default_rng(args.seed)
    run_and_compare(backend, sim, args.episode_length, rng, args.mode)
    print(field_error_report(backend, sim))
    print(f"OK: {args.backend} matches CovidSimulation over {args.episode_length} steps")


if __name__ == "__main__":  # pragma: no cover
    main()
