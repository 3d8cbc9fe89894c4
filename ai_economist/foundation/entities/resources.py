"""Resources: things that live in agent inventories (and, if collectible, on the map)."""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.base.registrar import Registry
from ai_economist.foundation.entities.entity import Entity, entity_class, rgb


class Resource(Entity):
    """Base class for resource entities.

    Class attributes:
        name: registry name.
        color: RGB colour in [0, 1] (used for rendering).
        collectible: whether the resource exists on the map and can be gathered.
    """

    entity_kind = "Resource"
    required_attributes = (("color", "a color"), ("collectible", "collectible"))
    color: np.ndarray | None = None
    collectible: bool | None = None


resource_registry = Registry(Resource)


def _resource(name: str, color: np.ndarray, doc: str, *, collectible: bool) -> type[Resource]:
    """Declare and register the resource ``name``."""
    cls = entity_class(Resource, name, color, doc, __name__, collectible=collectible)
    return resource_registry.add(cls)


Wood = _resource("Wood", rgb(107, 143, 113), "Collectible wood.", collectible=True)
Stone = _resource("Stone", rgb(241, 233, 219), "Collectible stone.", collectible=True)
Coin = _resource(
    "Coin", rgb(229, 211, 82), "Money. Always registered; never on the map.", collectible=False
)
