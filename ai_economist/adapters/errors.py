"""Errors of the adapters: each names the bad value and what was expected."""

from __future__ import annotations


class AdapterKeyError(KeyError):
    """A KeyError whose message prints unquoted (``KeyError`` quotes its argument)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownScenarioError(AdapterKeyError):
    """A scenario name that no Foundation scenario is registered under (lists close matches)."""


class UnknownAgentError(AdapterKeyError):
    """An action dict key that is not an agent id of the environment."""


class ActionMaskError(ValueError):
    """An action that the agent's current action mask forbids."""
