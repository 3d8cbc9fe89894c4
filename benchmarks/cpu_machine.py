"""The machine facts the CPU benchmarks print: the CPU's name, and pinning to one core."""

from __future__ import annotations

import os
import platform


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def pin_to_one_core() -> str:
    """Pin this process to the first core it may run on; say which (or that it is not)."""
    if hasattr(os, "sched_setaffinity"):
        core = sorted(os.sched_getaffinity(0))[0]
        os.sched_setaffinity(0, {core})
        return f"pinned to core {core}"
    return "not pinned"
