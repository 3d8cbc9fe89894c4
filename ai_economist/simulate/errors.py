"""Named errors of ``ai-economist-simulate``: each says what was wrong and what is expected.

All of them are :class:`~ai_economist.warp_drive.training.schema.ConfigError` (a
``ValueError``), so the command line turns any of them into exit status 2.
"""

from __future__ import annotations

from ai_economist.warp_drive.training.schema import ConfigError


class SimulateError(ConfigError):
    """Base class of the policy-research command's input errors."""


class UnknownPolicyError(SimulateError):
    """A policy name that is not one of the named policies (the message lists close matches)."""


class ScheduleError(SimulateError):
    """A schedule CSV with the wrong columns, days or values (names the file and the row)."""


class SweepError(SimulateError):
    """A sweep parameter that is unknown, empty or not numeric (names the parameter)."""


class RayConnectionError(SimulateError):
    """Ray is not installed, or the cluster at ``--ray_address`` cannot be reached."""
