"""Endogenous quantities: agent-internal variables such as labour."""

from __future__ import annotations

from ai_economist.foundation.base.registrar import Registry
from ai_economist.foundation.entities.entity import Entity


class Endogenous(Entity):
    """Base class for endogenous entities."""

    entity_kind = "Endogenous"


endogenous_registry = Registry(Endogenous)


@endogenous_registry.add
class Labor(Endogenous):
    """Accumulated labour. Always registered."""

    name = "Labor"
