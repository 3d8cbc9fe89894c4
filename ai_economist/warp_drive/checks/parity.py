"""Parity of a backend against the numpy reference, field by field, step by step.

``check_parity(env, "numba", num_envs=3, num_steps=30)`` builds the numpy reference and the
backend from the same initial state (same seed), feeds both the same random actions (drawn
from the allowed ones, seeded), steps both, resets done environments on both, and compares
every per-env field after every phase. The result names the first field / env / agent / step
that differs::

    result = check_parity(MyEnv(), "pycuda", num_envs=8, num_steps=100)
    assert result, result.message

Integer fields must match exactly; float fields within ``rtol`` / ``atol``, or within the
field's own pair from ``GpuEnvironment.parity_tolerances()`` (or the ``tolerances`` argument).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ai_economist.warp_drive.backend_names import EnvBackend
from ai_economist.warp_drive.scenario import GpuEnvironment

ActionFn = Callable[[int, Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


@dataclass(frozen=True)
class ParityResult:
    """The outcome of ``check_parity``; true when nothing differed.

    Attributes:
        ok: no field differed.
        backend: the backend compared with the numpy reference.
        steps: steps compared.
        step: the step of the first difference (0 = the initial state, before any step).
        phase: ``"initial"``, ``"step"`` (after the step) or ``"reset"`` (after resetting done envs).
        field: the field that differed.
        env: the environment index.
        index: the index inside one environment's slice (agent first for per-agent fields).
        reference, actual: the two values there.
        num_different: how many elements of the field differed.
        message: a readable summary.
    """

    ok: bool
    backend: str
    steps: int
    message: str
    step: int | None = None
    phase: str | None = None
    field: str | None = None
    env: int | None = None
    index: tuple[int, ...] = ()
    reference: Any = None
    actual: Any = None
    num_different: int = 0

    def __bool__(self) -> bool:
        return self.ok

    @property
    def agent(self) -> int | None:
        """The first index inside the env's slice (the agent of per-agent fields)."""
        return self.index[0] if self.index else None


def random_actions(rng: np.random.Generator, masks: Mapping[str, np.ndarray]) -> dict:
    """One allowed action per agent, uniform among the allowed ones (NO-OP when none is)."""
    out = {}
    for tag, mask in masks.items():
        allowed = mask > 0
        scores = np.where(allowed, rng.random(mask.shape), -1.0)
        out[tag] = np.argmax(scores, axis=-1).astype(np.int32)
    return out


def within_tolerance(ref: np.ndarray, got: np.ndarray, rtol: float, atol: Any) -> np.ndarray:
    """Where ``got`` equals ``ref``: float values within ``atol + rtol * |ref|`` (NaN equals
    NaN; ``atol`` may be an array broadcasting against ``ref``), other values exactly."""
    ref, got = np.asarray(ref), np.asarray(got)
    if ref.dtype.kind == "f" or got.dtype.kind == "f":
        return np.isclose(got, ref, rtol=rtol, atol=atol, equal_nan=True)
    return got == ref


def _first_difference(name: str, ref: np.ndarray, got: np.ndarray, rtol: float, atol: float):
    if ref.shape != got.shape:
        return (0, (), f"shape {ref.shape}", f"shape {got.shape}", 1)
    same = within_tolerance(ref, got, rtol, atol) if ref.dtype.kind == "f" else got == ref
    if same.all():
        return None
    where = tuple(int(i) for i in np.argwhere(~same)[0])
    return where[0], where[1:], ref[where].item(), got[where].item(), int((~same).sum())


def compare_fields(
    names: Iterable[str],
    reference: Any,
    other: Any,
    rtol: float,
    atol: float,
    tolerances: Mapping[str, tuple[float, Any]] | None = None,
) -> tuple | None:
    """``(field, env, index, reference value, actual value, count)`` of the first field that
    differs between two wrappers, or ``None``; ``tolerances`` overrides ``(rtol, atol)`` per
    field (``atol`` may be an array broadcasting against one env's slice)."""
    tolerances = tolerances or {}
    for name in names:
        r, a = tolerances.get(name, (rtol, atol))
        diff = _first_difference(name, reference.pull(name), other.pull(name), r, a)
        if diff is not None:
            return (name, *diff)
    return None


@dataclass(frozen=True)
class ParityCase:
    """Two built wrappers to step side by side, and how to compare them (what an environment
    registry entry's ``parity`` hook returns; :func:`check_case` runs it).

    Attributes:
        reference, other: the truth and the backend, with the methods ``check_wrappers`` needs.
        names: the fields compared.
        tolerances: ``{field: (rtol, atol)}`` on top of ``rtol`` / ``atol``.
        label, backend, reference_name: word the message.
        initial, after_reset: the fields compared before the first step / after a reset
            (``None``: all of ``names``).
    """

    reference: Any
    other: Any
    names: tuple[str, ...]
    tolerances: Mapping[str, tuple[float, Any]]
    label: str
    backend: str
    reference_name: str = "the numpy reference"
    initial: tuple[str, ...] | None = None
    after_reset: tuple[str, ...] | None = None
    rtol: float = 1e-5
    atol: float = 1e-6


def gpu_environment_case(
    env: GpuEnvironment,
    backend: str | EnvBackend,
    num_envs: int = 4,
    seed: int = 0,
    ignore: Iterable[str] = (),
    device: Any = None,
    reference_env: GpuEnvironment | None = None,
    tolerances: Mapping[str, tuple[float, Any]] | None = None,
) -> ParityCase:
    """The :class:`ParityCase` of a ``GpuEnvironment``: its numpy reference and ``backend``
    behind ``EnvWrapper`` from the same seed, every per-env field not in ``ignore``, the
    tolerances of ``env.parity_tolerances()`` updated by ``tolerances``."""
    from ai_economist.warp_drive.env_wrapper import EnvWrapper

    backend = EnvBackend.parse(backend)
    ref = EnvWrapper(reference_env or env, num_envs, EnvBackend.NUMPY, seed=seed)
    other = EnvWrapper(env, num_envs, backend, device=device, seed=seed)
    skip = set(ignore)
    tols = {**env.parity_tolerances(), **dict(tolerances or {})}
    names = tuple(f.name for f in ref.backend.spec if f.per_env and f.name not in skip)
    return ParityCase(ref, other, names, tols, env.name, backend.value)


def check_case(
    case: ParityCase, num_steps: int, seed: int = 0, actions: ActionFn | None = None
) -> ParityResult:
    """:func:`check_wrappers` on the wrappers of ``case`` for ``num_steps`` steps."""
    return check_wrappers(
        case.reference, case.other, case.names, num_steps, seed=seed, actions=actions,
        rtol=case.rtol, atol=case.atol, tolerances=case.tolerances, label=case.label,
        backend=case.backend, reference_name=case.reference_name,
        after_reset=case.after_reset, initial=case.initial,
    )  # fmt: skip


def check_parity(
    env: GpuEnvironment,
    backend: str | EnvBackend,
    num_envs: int = 4,
    num_steps: int = 20,
    seed: int = 0,
    actions: ActionFn | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    ignore: Iterable[str] = (),
    device: Any = None,
    reference_env: GpuEnvironment | None = None,
    tolerances: Mapping[str, tuple[float, Any]] | None = None,
) -> ParityResult:
    """Step the numpy reference and ``backend`` side by side; report the first difference.

    Args:
        env: the environment (its numpy reference is the truth).
        backend: the backend to check (``"pycuda"``, ``"numba"``, or ``"numpy"``).
        num_envs, num_steps: how many environments, for how many steps.
        seed: seeds the initial state and the random actions.
        actions: ``actions(step, masks) -> {tag: int array (num_envs, agents)}``; default:
            uniform among the allowed actions of the reference's masks.
        rtol, atol: tolerance of float fields (integer fields must match exactly).
        ignore: fields not compared (scratch arrays).
        device: torch device of the backend.
        reference_env: another object whose numpy reference is the truth (default ``env``).
        tolerances: ``{field: (rtol, atol)}`` on top of ``env.parity_tolerances()``.
    """
    case = gpu_environment_case(env, backend, num_envs, seed, ignore, device, reference_env,
                                tolerances)  # fmt: skip
    case = dataclasses.replace(case, rtol=rtol, atol=atol)
    return check_case(case, num_steps, seed=seed, actions=actions)


def check_wrappers(
    reference: Any,
    other: Any,
    names: Iterable[str],
    num_steps: int,
    seed: int = 0,
    actions: ActionFn | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    tolerances: Mapping[str, tuple[float, Any]] | None = None,
    label: str = "",
    backend: str = "",
    reference_name: str = "the reference",
    after_reset: Iterable[str] | None = None,
    initial: Iterable[str] | None = None,
) -> ParityResult:
    """The loop of :func:`check_parity` on two built wrappers: reset both, then per step the
    same actions to both, compare ``names``, reset done envs on both and compare again.

    ``reference`` and ``other`` need ``reset_all_envs``, ``step_all_envs(actions)``,
    ``reset_only_done_envs``, ``action_masks(tag)``, ``policy_specs`` and ``pull(name)``, as
    ``EnvWrapper`` has (scenario checks adapt their own objects to these few methods).  ``initial`` / ``after_reset``: the fields
    compared before the first step / after a reset (default: all of ``names``); ``label`` /
    ``backend`` / ``reference_name`` word the message.
    """
    names = list(names)

    def subset(wanted: Iterable[str] | None) -> list[str]:
        return names if wanted is None else [n for n in names if n in set(wanted)]

    reset_names, initial_names = subset(after_reset), subset(initial)
    backend = backend or "the backend"
    rng = np.random.default_rng(seed)
    reference.reset_all_envs()
    other.reset_all_envs()

    def fail(step: int, phase: str, diff: tuple) -> ParityResult:
        name, e, index, r, a, count = diff
        where = f"env {e}" + (f", index {index} (agent {index[0]})" if index else "")
        message = (
            f"{label}: {backend} differs from {reference_name} in field {name!r} at "
            f"{where}, step {step} ({phase}): reference {r!r}, {backend} {a!r} "
            f"({count} element(s) of {name!r} differ)"
        )
        return ParityResult(False, backend, num_steps, message, step, phase, name, e,
                            index, r, a, count)  # fmt: skip

    diff = compare_fields(initial_names, reference, other, rtol, atol, tolerances)
    if diff is not None:
        return fail(0, "initial", diff)
    for step in range(1, num_steps + 1):
        masks = {tag: _numpy(reference.action_masks(tag)) for tag in reference.policy_specs}
        chosen = actions(step, masks) if actions is not None else random_actions(rng, masks)
        reference.step_all_envs(chosen)
        other.step_all_envs(chosen)
        diff = compare_fields(names, reference, other, rtol, atol, tolerances)
        if diff is not None:
            return fail(step, "step", diff)
        reference.reset_only_done_envs()
        other.reset_only_done_envs()
        diff = compare_fields(reset_names, reference, other, rtol, atol, tolerances)
        if diff is not None:
            return fail(step, "reset", diff)
    message = f"{label}: {backend} matches {reference_name} for {num_steps} steps"
    num_envs = getattr(reference, "num_envs", None)
    if num_envs is not None:
        message += f" x {num_envs} envs"
    return ParityResult(True, backend, num_steps, message)


def _numpy(values: Any) -> np.ndarray:
    """A torch tensor (any device) or an array as a numpy array."""
    return values.cpu().numpy() if hasattr(values, "cpu") else np.asarray(values)


if __name__ == "__main__":  # python -m ai_economist.warp_drive.checks.parity --env NAME ...
    from ai_economist.warp_drive.checks.parity_command import main

    raise SystemExit(main())
