"""The AI Economist paper's two-level tax protocol as one command.

    python -m ai_economist.training.tax_protocol --scenario gather-trade-build \\
        --seeds 0 1 2 --phase1_steps N --phase2_steps M --device cpu --results_dir DIR

Gather-trade-build: phase 1 (free market, labour cost annealed in) once per seed, then phase 2
from that seed's phase-1 agents under each tax schedule (the AI planner, Saez, US federal
2018, free market), the agents re-trained under each schedule with the same budget. The
one-step economy: the AI planner trained per seed, scored with best-responding workers against
the free market, US federal, the settled Saez schedule and the best schedule of the planner's
rate grid. See :mod:`.cli` for the options, :mod:`.plan` for the runs and the manifest.
"""
