"""Policy research in bulk: run a scenario (COVID-19, the one-step economy, gather-trade-build;
:data:`~ai_economist.simulate.scenarios.SCENARIOS`) under named policies over sweeps of its
parameters, on the batched numpy models, locally or on a Ray cluster.

The command ``ai-economist-simulate`` (:mod:`ai_economist.simulate.cli`) and the function
:func:`run_sweep` do the same: every policy under every combination of the swept values, one
row per run in a :class:`SweepTable` (CSV), plus standard plots.
"""

from ai_economist.simulate.api import plan, run_sweep
from ai_economist.simulate.errors import (
    RayConnectionError,
    ScheduleError,
    SimulateError,
    SweepError,
    UnknownPolicyError,
)
from ai_economist.simulate.policies import read_schedule_csv, write_schedule_csv
from ai_economist.simulate.scenarios import SCENARIOS, SimulateScenario, get_scenario
from ai_economist.simulate.sweep import PARAMETERS
from ai_economist.simulate.table import SweepTable

__all__ = [
    "PARAMETERS",
    "SCENARIOS",
    "RayConnectionError",
    "ScheduleError",
    "SimulateError",
    "SimulateScenario",
    "SweepError",
    "SweepTable",
    "UnknownPolicyError",
    "get_scenario",
    "plan",
    "read_schedule_csv",
    "run_sweep",
    "write_schedule_csv",
]
