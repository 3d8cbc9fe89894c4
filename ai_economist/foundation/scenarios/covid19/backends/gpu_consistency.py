"""Compare a GPU backend (``CovidGpuBackend``) with the float64 numpy model (``CovidSimulation``).

One generic check does the stepping and the comparison: ``warp_drive.checks.parity``
(``check_wrappers``, the loop of ``check_parity``; ``within_tolerance``, its rule); this module
only adapts the scenario's simulator and backend objects to it and describes where a field
differs (``compare``).  The tolerances are the scenario's (``declaration/tolerances.py``).

Used by the tests (Numba simulator on the CPU, both backends on a GPU) and runnable by hand,
where it runs ``check_parity`` on ``CovidGpuEnvironment`` (:func:`parity_case`, also the
scenario's hook for ``python -m ai_economist.warp_drive.checks.parity --env
covid_and_economy_environment``)::

    python -m ai_economist.foundation.scenarios.covid19.backends.gpu_consistency --backend pycuda
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

import numpy as np

from ai_economist.foundation.scenarios.covid19.declaration import gpu_state
from ai_economist.foundation.scenarios.covid19.declaration.tolerances import (  # noqa: F401  (re-exported)
    DEFAULT_TOLERANCE,
    EXACT,
    PEOPLE,
    TOLERANCES,
    field_tolerance,
)
from ai_economist.warp_drive.backend_names import GPU_BACKENDS, EnvBackend
from ai_economist.warp_drive.checks.parity import check_wrappers, random_actions, within_tolerance


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
    rtol, atol = field_tolerance(name, population, tolerance)
    return np.broadcast_to(atol + rtol * np.abs(ref), ref.shape)


def compare_field(
    name: str, gpu, ref, layout=None, tolerance=None, env_ids=None, population=None
) -> Mismatch | None:
    """The worst out-of-tolerance element of one field, or None when it matches."""
    ref = np.asarray(ref, dtype=np.float64)
    gpu = np.asarray(gpu, dtype=np.float64).reshape(ref.shape)
    allowed = allowed_error(name, ref, population, tolerance)
    diff = np.abs(gpu - ref)
    bad = ~within_tolerance(ref, gpu, *field_tolerance(name, population, tolerance))
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
    picked = random_actions(rng, {"a": np.asarray(mask_a), "p": np.asarray(mask_p)})
    return picked["a"], picked["p"]


class _OneEpisode:
    """No resets: the simulation and the backend start from the same state, and
    ``run_and_compare`` runs at most one episode."""

    def reset_all_envs(self) -> None:
        pass

    def reset_only_done_envs(self) -> None:
        pass


class SimulationArrays(_OneEpisode):
    """``check_wrappers``' view of a ``CovidSimulation``: the declared arrays it knows (plus
    the last step's rewards), its masks, and ``sim.step``."""

    policy_specs = ("a", "p")

    def __init__(self, sim) -> None:
        self.sim, self.num_envs = sim, sim.num_envs
        self.rewards = (np.zeros((sim.num_envs, sim.params.num_agents)), np.zeros(sim.num_envs))

    def names(self) -> list[str]:
        """The compared fields, in declaration order, rewards last."""
        return list(reference_values(self.sim, *self.rewards))

    def pull(self, name: str) -> np.ndarray:
        return reference_values(self.sim, *self.rewards)[name]

    def action_masks(self, tag: str) -> np.ndarray:
        return self.sim.action_masks()["ap".index(tag)]

    def step_all_envs(self, actions: dict) -> None:
        self.rewards = self.sim.step(actions["a"], actions["p"][:, 0])


class BackendArrays(_OneEpisode):
    """``check_wrappers``' view of a GPU backend: the sampled actions are written into its
    action tensors, then it steps with the per-component or the fused kernels (``mode``:
    ``"alternate"`` is fused on every second step)."""

    def __init__(self, backend, mode: str) -> None:
        if mode not in ("per_component", "fused", "alternate"):
            raise ValueError(f"mode must be per_component, fused or alternate, got {mode!r}")
        self.backend, self.mode, self.steps = backend, mode, 0
        self.num_envs = backend.num_envs

    def pull(self, name: str) -> np.ndarray:
        return self.backend.pull(name)

    def fused(self) -> bool:
        """Whether step ``self.steps`` (1-based) runs the fused kernel."""
        return self.mode == "fused" or (self.mode == "alternate" and self.steps % 2 == 0)

    def step_all_envs(self, actions: dict) -> None:
        import torch

        self.backend.tensor("sampled_actions_a").copy_(torch.from_numpy(actions["a"]))
        self.backend.tensor("sampled_actions_p").copy_(torch.from_numpy(actions["p"]))
        self.steps += 1
        (self.backend.step_fused if self.fused() else self.backend.step_per_component)()


def run_and_compare(
    backend, sim, steps: int, rng: np.random.Generator, mode: str = "per_component", label: str = ""
) -> int:
    """Step ``backend`` and ``sim`` together ``steps`` times with random valid actions (from the
    simulator's masks; ``check_wrappers``) and raise ``AssertionError`` at the first step with
    a mismatch, listing every field out of tolerance there (the first differing field first).

    ``mode``: ``"per_component"``, ``"fused"`` or ``"alternate"`` (fused on odd steps).
    Returns the number of steps taken.
    """
    reference, other = SimulationArrays(sim), BackendArrays(backend, mode)
    names = reference.names()
    tolerances = {n: field_tolerance(n, sim.params.population) for n in names}
    result = check_wrappers(
        reference, other, names, steps, actions=lambda step, masks: random_actions(rng, masks),
        tolerances=tolerances, label=f"{label}{backend.name}", backend=backend.name,
        reference_name="CovidSimulation", after_reset=(),
        initial=(),  # the callers compare the start themselves (compare) when it must match
    )  # fmt: skip
    if not result:
        problems = compare(backend, sim, *reference.rewards)
        lines = "\n  ".join(str(p) for p in problems) or result.message
        kind = "fused" if other.fused() else "per-component"
        raise AssertionError(
            f"{label}{backend.name} ({kind} kernels) differs from CovidSimulation at step "
            f"t={int(np.max(sim.timestep))} (first differing field listed first):\n  {lines}"
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


def parity_case(
    backend: str,
    num_envs: int,
    seed: int = 0,
    episode_length: int = 540,
    fused_step: bool = True,
):
    """The registry's ``parity`` hook of ``covid_and_economy_environment``: ``CovidGpuEnvironment``
    of the published configuration (``episode_length`` days; the fused or the per-component
    kernels) on ``backend`` against the float64 model stepped from the declared arrays, with
    the scenario's tolerances (``gpu_env.CovidGpuEnvironment.parity_tolerances``)."""
    from ai_economist.foundation.scenarios.covid19.configs import published_model
    from ai_economist.foundation.scenarios.covid19.declaration.gpu_env import (
        CovidGpuEnvironment,
    )
    from ai_economist.warp_drive.checks.parity import gpu_environment_case

    model = published_model(episode_length=episode_length)
    env = CovidGpuEnvironment(*model, fused_step=fused_step)
    case = gpu_environment_case(env, backend, num_envs, seed)
    kind = "fused" if fused_step else "per-component"
    return dataclasses.replace(case, label=f"{env.name} ({kind} kernels)")


def main(argv=None) -> int:  # pragma: no cover - a manual tool for the GPU machine
    """``check_parity`` of ``CovidGpuEnvironment`` (the published configuration) on a GPU
    backend, with the fused and/or the per-component kernels; exit status 1 on a mismatch."""
    from ai_economist.warp_drive.checks.parity import check_case

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--backend", default=EnvBackend.PYCUDA.value, choices=[b.value for b in GPU_BACKENDS]
    )
    parser.add_argument("--num_envs", type=int, default=8)
    parser.add_argument("--episode_length", type=int, default=540)
    parser.add_argument("--mode", default="both", choices=("per_component", "fused", "both"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    fused = {"fused": [True], "per_component": [False], "both": [True, False]}[args.mode]
    ok = True
    for fused_step in fused:
        case = parity_case(args.backend, args.num_envs, args.seed, args.episode_length, fused_step)
        result = check_case(case, args.episode_length, seed=args.seed)
        print(result.message)
        ok = ok and result.ok
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
