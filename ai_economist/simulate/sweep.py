"""The parameters a sweep can vary, how a sweep is written, and the grid of runs it spans.

A sweep is ``NAME=V1,V2,...`` (a list) or ``NAME=START:STOP:NUM`` (``NUM`` evenly spaced values
from ``START`` to ``STOP``, both included).  The runs are every combination of the policies
and the swept values; parameters not swept keep their defaults.  Its size is checked before
any value is built: more than ``max_runs`` runs (default :data:`MAX_RUNS`) is a
:class:`SweepError` naming the size.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ai_economist.simulate.errors import SweepError
from ai_economist.warp_drive.data_manager import close_matches_message

MAX_RUNS = 100_000
"""Default limit on the runs of one sweep (policies x every combination of the swept values):
about 5 minutes on a 2-core CPU; ``--max_runs N`` (``max_runs=N`` in ``run_sweep``) raises it."""


@dataclass(frozen=True)
class SweepParameter:
    """One parameter a sweep can vary.

    ``default`` None means "the scenario's own value"; ``per_run`` parameters differ between
    the environments of one batch, the others change the model's constants (runs are grouped
    by them).
    """

    name: str
    doc: str
    default: float | None
    per_run: bool
    integer: bool = False
    minimum: float = 0.0
    maximum: float = math.inf


PARAMETERS: dict[str, SweepParameter] = {
    p.name: p
    for p in (
        SweepParameter("health_priority", "planner's health priority scaling m_p (training 0.45, tutorial 1)", None, False),
        SweepParameter("health_priority_agents", "states' health priority scaling m_a (training 0.3, tutorial 1)", None, False),
        SweepParameter("infection_intercept", "modulation of the infection rate's intercept (beta = m_i * intercept + m_s * slope * stringency)", 1.0, True),
        SweepParameter("infection_slope", "modulation of the infection rate's stringency slope", 1.0, True),
        SweepParameter("unemployment", "modulation of the unemployment response to stringency", 1.0, True),
        SweepParameter("subsidy_budget", "maximum federal subsidy, $ per person per year (full subsidy level)", 20000.0, False),
        SweepParameter("vaccine_rate", "daily vaccines per million people", 3000.0, False),
        SweepParameter("seed", "seed of a checkpoint policy's sampled actions (fixed policies are deterministic)", 0, True, integer=True),
    )
}  # fmt: skip
"""Every sweepable parameter, by name."""

GROUP_PARAMETERS = tuple(n for n, p in PARAMETERS.items() if not p.per_run)
RUN_PARAMETERS = tuple(n for n, p in PARAMETERS.items() if p.per_run)


Parameters = Mapping[str, SweepParameter]


def check_parameter_name(name: str, parameters: Parameters | None = None) -> SweepParameter:
    """The declaration of ``name`` in ``parameters`` (default: the COVID-19 :data:`PARAMETERS`),
    or :class:`SweepError` listing close matches."""
    parameters = PARAMETERS if parameters is None else parameters
    if name not in parameters:
        raise SweepError(close_matches_message(name, parameters, "sweep parameter"))
    return parameters[name]


def _number(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SweepError(f"sweep {name!r}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise SweepError(f"sweep {name!r}: {text!r} is not a finite number")
    return value


def check_values(
    name: str, values: Iterable, parameters: Parameters | None = None
) -> tuple[float, ...]:
    """Validate the values of one sweep: numeric, non-empty, in range, integers where needed."""
    spec = check_parameter_name(name, parameters)
    if isinstance(values, (str, bytes)):
        values = [values]
    checked = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number, str)):
            raise SweepError(f"sweep {name!r}: {value!r} is not a number")
        number = _number(name, value) if isinstance(value, str) else float(value)
        if not math.isfinite(number):
            raise SweepError(f"sweep {name!r}: {value!r} is not a finite number")
        if number < spec.minimum:
            raise SweepError(f"sweep {name!r}: {value!r} is below the minimum {spec.minimum:g}")
        if number > spec.maximum:
            raise SweepError(f"sweep {name!r}: {value!r} is above the maximum {spec.maximum:g}")
        if spec.integer and number != int(number):
            raise SweepError(f"sweep {name!r}: {value!r} is not an integer")
        checked.append(int(number) if spec.integer else number)
    if not checked:
        raise SweepError(f"sweep {name!r} has no values (expected V1,V2,... or START:STOP:NUM)")
    return tuple(checked)


def _too_many(what: str, size: int, max_runs: int) -> SweepError:
    return SweepError(
        f"{what} has {size:,} runs, more than the limit of {max_runs:,} runs per sweep; "
        "sweep fewer values, or raise the limit with --max_runs N (max_runs=N in run_sweep)"
    )


def parse_sweep(
    text: str, max_runs: int = MAX_RUNS, parameters: Parameters | None = None
) -> tuple[str, tuple[float, ...]]:
    """``"NAME=V1,V2"`` or ``"NAME=START:STOP:NUM"`` -> ``(name, values)``; a range of more
    than ``max_runs`` values is refused before it is built."""
    name, sep, body = text.partition("=")
    name = name.strip()
    if not sep:
        raise SweepError(f"sweep {text!r} is not NAME=V1,V2,... or NAME=START:STOP:NUM")
    check_parameter_name(name, parameters)
    body = body.strip()
    if ":" in body:
        parts = body.split(":")
        if len(parts) != 3:
            raise SweepError(f"sweep {name!r}: range {body!r} is not START:STOP:NUM")
        start, stop = _number(name, parts[0]), _number(name, parts[1])
        num = _number(name, parts[2])
        if num != int(num) or num < 1:
            raise SweepError(
                f"sweep {name!r}: range {body!r} is empty (NUM must be an integer >= 1)"
            )
        if num > max_runs:
            raise _too_many(f"sweep {name!r} (range {body!r})", int(num), max_runs)
        values = np.linspace(start, stop, int(num)) if num > 1 else np.array([start])
        return name, check_values(name, [float(v) for v in values], parameters)
    items = [part.strip() for part in body.split(",") if part.strip()]
    return name, check_values(name, items, parameters)


def parse_sweeps(
    sweeps: Mapping[str, Sequence] | Sequence[str],
    max_runs: int = MAX_RUNS,
    parameters: Parameters | None = None,
) -> dict[str, tuple]:
    """Sweeps as a mapping ``{name: values}`` or as ``NAME=...`` strings -> checked mapping
    (names of ``parameters``, default the COVID-19 :data:`PARAMETERS`)."""
    result: dict[str, tuple] = {}
    pairs = (
        [(name, check_values(name, values, parameters)) for name, values in sweeps.items()]
        if isinstance(sweeps, Mapping)
        else [parse_sweep(text, max_runs, parameters) for text in sweeps]
    )
    for name, values in pairs:
        if name in result:
            raise SweepError(f"sweep {name!r} is given twice")
        result[name] = values
    return result


def check_max_runs(max_runs: object) -> int:
    """``max_runs`` when it is an integer >= 1, else :class:`SweepError`."""
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise SweepError(f"max_runs={max_runs!r}: expected an integer >= 1")
    return max_runs


def check_size(num_policies: int, sweeps: Mapping[str, tuple], max_runs: int) -> int:
    """The number of runs of a sweep (policies x every combination of the swept values);
    :class:`SweepError` naming it and its factors when it is above ``max_runs``."""
    size = num_policies * math.prod(len(v) for v in sweeps.values())
    if size > max_runs:
        factors = " x ".join(
            [f"{num_policies} policies", *(f"{len(v):,} {n}" for n, v in sweeps.items())]
        )
        raise _too_many(f"the sweep ({factors})", size, max_runs)
    return size


def grid(
    policies: Sequence[str],
    sweeps: Mapping[str, tuple],
    defaults: Mapping,
    parameters: Parameters | None = None,
) -> list[dict]:
    """One dict per run: ``policy`` and every parameter, the policies varying slowest."""
    names = list(PARAMETERS if parameters is None else parameters)
    axes = [sweeps.get(n, (defaults[n],)) for n in names]
    return [
        {"policy": policy, **dict(zip(names, combo))}
        for policy in policies
        for combo in itertools.product(*axes)
    ]
