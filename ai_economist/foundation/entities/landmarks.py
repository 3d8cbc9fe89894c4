"""Landmarks: map features (houses, water, resource source blocks).

Flags derived from ``solid`` and ``ownable``:

* ``blocking`` = solid and not ownable (nobody may enter, e.g. Water);
* ``private`` = solid and ownable (only the owner may enter, e.g. House);
* ``public`` = neither (anybody may enter, e.g. source blocks).

One ``<Resource>SourceBlock`` landmark is generated for every collectible resource.
"""

from __future__ import annotations

import numpy as np

from ai_economist.foundation.base.registrar import Registry
from ai_economist.foundation.entities.entity import Entity, entity_class, rgb
from ai_economist.foundation.entities.resources import Resource, resource_registry


class Landmark(Entity):
    """Base class for landmark entities."""

    entity_kind = "Landmark"
    required_attributes = (("color", "a color"), ("ownable", "ownable"))
    color: np.ndarray | None = None
    ownable: bool | None = None
    solid: bool = True

    def __init__(self) -> None:
        super().__init__()
        self.blocking = bool(self.solid and not self.ownable)
        self.private = bool(self.solid and self.ownable)
        self.public = bool(not self.solid and not self.ownable)


landmark_registry = Registry(Landmark)


def _landmark(
    name: str, color: np.ndarray, doc: str, *, ownable: bool, solid: bool
) -> type[Landmark]:
    """Declare and register the landmark ``name``."""
    cls = entity_class(Landmark, name, color, doc, __name__, ownable=ownable, solid=solid)
    return landmark_registry.add(cls)


House = _landmark(
    "House",
    rgb(220, 20, 220),
    "A house: owned by its builder, impassable to everyone else.",
    ownable=True,
    solid=True,
)
Water = _landmark(
    "Water", rgb(50, 50, 250), "Water: impassable to everyone.", ownable=False, solid=True
)


def source_block_for(resource_name: str) -> type[Landmark]:
    """Return (creating and registering it if needed) the source block of a resource.

    Raises:
        KeyError: the resource is unknown.
        ValueError: the resource is not collectible.
    """
    resource_cls: type[Resource] = resource_registry.get(resource_name)
    if not resource_cls.collectible:
        raise ValueError(f"Resource {resource_cls.name} is not collectible: no source block")
    block_name = resource_cls.name + "SourceBlock"
    if landmark_registry.has(block_name):
        return landmark_registry.get(block_name)
    doc = f"Cells where {resource_cls.name} can (re)spawn."
    return _landmark(block_name, np.array(resource_cls.color), doc, ownable=False, solid=False)


for _resource_name in resource_registry.entries:
    if resource_registry.get(_resource_name).collectible:
        source_block_for(_resource_name)
