"""The COVID-19 scenario for ``ai-economist-simulate`` (its two configs, ``training`` and
``tutorial``): :func:`~ai_economist.simulate.api.run_sweep` and the COVID-19 plots."""

from __future__ import annotations

import functools

from ai_economist.simulate.api import run_sweep
from ai_economist.simulate.plots import write_plots
from ai_economist.simulate.policies import NAMES, PREFIXES
from ai_economist.simulate.scenarios import SimulateScenario
from ai_economist.simulate.sweep import PARAMETERS

SUMMARY = ("planner_reward", "deaths_thousands", "mean_unemployment_rate_pct")
POLICIES_DOC = f"{', '.join(NAMES)}, or {', '.join(p + '...' for p in PREFIXES)}"


def _covid(name: str, doc: str) -> SimulateScenario:
    return SimulateScenario(
        name=name,
        doc=doc,
        parameters=PARAMETERS,
        policies_doc=POLICIES_DOC,
        summary=SUMMARY,
        run=functools.partial(run_sweep, scenario=name),
        plots=write_plots,
        options=("days",),
    )


TRAINING = _covid("training", "COVID-19, the published training run: 540 days, m_a 0.3, m_p 0.45")
TUTORIAL = _covid("tutorial", "COVID-19, the covid tutorial: 405 days, m_a 1, m_p 1")
