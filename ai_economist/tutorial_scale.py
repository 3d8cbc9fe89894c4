"""The scale the tutorial notebooks run at, chosen by one environment variable.

``AI_ECONOMIST_TUTORIAL_SCALE``:

* ``full`` (the default, also when the variable is unset or empty): the real settings;
* ``ci``: tiny settings, so that CI can run every notebook top to bottom in seconds.

Every notebook calls :func:`tutorial_scale` once and picks its settings from the result; any
other value stops the notebook with a :class:`TutorialScaleError` that names the variable.
This module imports nothing heavy (the CPU simulation notebook needs only numpy).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SCALE_VARIABLE = "AI_ECONOMIST_TUTORIAL_SCALE"
SCALES = ("ci", "full")


class TutorialScaleError(ValueError):
    """``AI_ECONOMIST_TUTORIAL_SCALE`` holds a value that is not a known scale."""


def tutorial_scale(environ: Mapping[str, str] | None = None) -> str:
    """``"ci"`` or ``"full"`` from ``AI_ECONOMIST_TUTORIAL_SCALE`` (unset or empty: ``"full"``).

    Args:
        environ: where to read the variable (default ``os.environ``).

    Raises:
        TutorialScaleError: the value is not one of :data:`SCALES` (case and surrounding
            spaces are ignored).
    """
    env = os.environ if environ is None else environ
    raw = env.get(SCALE_VARIABLE, "")
    value = raw.strip().lower() or "full"
    if value not in SCALES:
        raise TutorialScaleError(
            f"{SCALE_VARIABLE}={raw!r} is not a tutorial scale; expected one of "
            f"{', '.join(SCALES)} (unset means full)"
        )
    return value
