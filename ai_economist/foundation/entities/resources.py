"""Resources: things that live in agent inventories (and, if collectible, on the map)."""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.base.registrar import Registry


class Resource:
    """Base class for resource entities.

    Class attributes:
        name: registry name.
        color: RGB colour in [0, 1] (used for rendering).
        collectible: whether the resource exists on the map and can be gathered.
    """

    name: str = ""
    color: np.ndarray | None = None
    collectible: bool | None = None

    def __init__(self) -> None:
        if not self.name:
            raise ValueError(f"{type(self).__name__} must define a name")
        if self.color is None:
            raise ValueError(f"Resource {self.name} must define a color")
        if self.collectible is None:
            raise ValueError(f"Resource {self.name} must define collectible")


resource_registry = Registry(Resource)


@resource_registry.add
class Wood(Resource):
    """Collectible wood."""

    name = "Wood"
    color = np.array([107, 143, 113]) / 255.0
    collectible = True


@resource_registry.add
class Stone(Resource):
    """Collectible stone."""

    name = "Stone"
    color = np.array([241, 233, 219]) / 255.0
    collectible = True


@resource_registry.add
class Coin(Resource):
    """Money. Always registered; never on the map."""

    name = "Coin"
    color = np.array([229, 211, 82]) / 255.0
    collectible = False
