"""Which ``pip`` extra installs an optional module, and errors that say so.

The console scripts (``ai-economist-train``, ``ai-economist-simulate``) check the optional
modules they need before any work, so a plain ``pip install ai-economist`` gets
``pip install "ai-economist[train]"`` instead of a raw ``No module named 'torch'``.
Nothing here imports an optional module.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

DISTRIBUTION = "ai-economist"

EXTRA_OF: dict[str, str] = {
    "torch": "train",
    "tqdm": "train",
    "tensorboard": "train",
    "matplotlib": "plot",
    "numba": "numba",
    "numba_cuda": "numba",
    "pycuda": "pycuda",
    "lz4": "logs",
    "pettingzoo": "adapters",
    "ray": "rllib",
    "lightning": "lightning",
}
"""Import name -> the smallest extra of ``pyproject.toml`` that installs it (a test keeps
this in step with ``[project.optional-dependencies]``)."""


class MissingExtraError(ImportError):
    """An optional module is not installed; the message names the extra to install."""


def install_command(extra: str) -> str:
    """``pip install "ai-economist[extra]"``."""
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def is_installed(module: str) -> bool:
    """True when ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None
        return False


def require_modules(modules: Iterable[str], purpose: str) -> None:
    """Raise :class:`MissingExtraError` naming the extra(s) to install when any of
    ``modules`` is missing; ``purpose`` says what needs them (e.g. ``ai-economist-train``)."""
    missing = [m for m in modules if not is_installed(m)]
    if not missing:
        return
    extras = list(dict.fromkeys(EXTRA_OF.get(m, m) for m in missing))
    names = ", ".join(missing)
    verb = "is" if len(missing) == 1 else "are"
    raise MissingExtraError(
        f"{purpose} needs {names}, which {verb} not installed; install the "
        f"{' and '.join(repr(e) for e in extras)} extra: {install_command(','.join(extras))}"
    )
