"""The scenarios ``ai-economist-simulate`` runs: a registration table and what each provides.

Each entry of :data:`SCENARIOS` names, as ``"module:attribute"``, a :class:`SimulateScenario`
that lives with its scenario (imported only when asked for). The generic command and
:func:`get_scenario` know the scenarios by this table only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ai_economist.simulate.errors import SimulateError
from ai_economist.simulate.sweep import SweepParameter
from ai_economist.simulate.table import SweepTable
from ai_economist.warp_drive.data_manager import close_matches_message


@dataclass(frozen=True)
class SimulateScenario:
    """What the command needs of a scenario.

    ``run(policies, sweeps, **options)`` returns the tidy table (one row per run); the options
    are ``workers``, ``ray_address``, ``chunk_size``, ``greedy``, ``progress``, ``max_runs``
    and those named in ``options`` (e.g. ``days``, ``agents``, ``episodes``).
    """

    name: str
    doc: str
    parameters: Mapping[str, SweepParameter]
    policies_doc: str
    summary: tuple[str, ...]
    run: Callable[..., SweepTable]
    plots: Callable[[SweepTable, Path], list[Path]]
    options: tuple[str, ...] = ()


SCENARIOS: dict[str, str] = {
    "training": "ai_economist.simulate.covid:TRAINING",
    "tutorial": "ai_economist.simulate.covid:TUTORIAL",
    "one-step-economy": "ai_economist.foundation.scenarios.one_step_economy.simulate:SCENARIO",
    "gather-trade-build": (
        "ai_economist.foundation.scenarios.simple_wood_and_stone.simulate:SCENARIO"
    ),
}
"""Scenario name -> ``"module:attribute"`` of its :class:`SimulateScenario`: the COVID-19
scenario's two configs (``training``, ``tutorial``) and the two economies."""


def get_scenario(name: str) -> SimulateScenario:
    """The :class:`SimulateScenario` registered as ``name`` (close matches when unknown)."""
    if name not in SCENARIOS:
        raise SimulateError(close_matches_message(name, SCENARIOS, "scenario"))
    module, _, attribute = SCENARIOS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)
