"""Endogenous quantities: agent-internal variables such as labour."""

from __future__ import annotations

from ai_economist.foundation.base.registrar import Registry


class Endogenous:
    """Base class for endogenous entities."""

    name: str = ""

    def __init__(self) -> None:
        if not self.name:
            raise ValueError(f"{type(self).__name__} must define a name")


endogenous_registry = Registry(Endogenous)


@endogenous_registry.add
class Labor(Endogenous):
    """Accumulated labour. Always registered."""

    name = "Labor"
