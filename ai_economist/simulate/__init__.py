"""Policy research in bulk: run the COVID-19 scenario under named policies over sweeps of its
parameters, on the batched numpy model, locally or on a Ray cluster.

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
from ai_economist.simulate.sweep import PARAMETERS
from ai_economist.simulate.table import SweepTable

__all__ = [
    "PARAMETERS",
    "RayConnectionError",
    "ScheduleError",
    "SimulateError",
    "SweepError",
    "SweepTable",
    "UnknownPolicyError",
    "plan",
    "read_schedule_csv",
    "run_sweep",
    "write_schedule_csv",
]
