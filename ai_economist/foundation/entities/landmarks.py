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
from ai_economist.foundation.entities.resources import Resource, resource_registry


class Landmark:
    """Base class for landmark entities."""

    name: str = ""
    color: np.ndarray | None = None
    ownable: bool | None = None
    solid: bool = True

    def __init__(self) -> None:
        if not self.name:
            raise ValueError(f"{type(self).__name__} must define a name")
        if self.color is None:
            raise ValueError(f"Landmark {self.name} must define a color")
        if self.ownable is None:
            raise ValueError(f"Landmark {self.name} must define ownable")
        self.blocking = bool(self.solid and not self.ownable)
        self.private = bool(self.solid and self.ownable)
        self.public = bool(not self.solid and not self.ownable)


landmark_registry = Registry(Landmark)


@landmark_registry.add
class House(Landmark):
    """A house: owned by its builder, impassable to everyone else."""

    name = "House"
    color = np.array([220, 20, 220]) / 255.0
    ownable = True
    solid = True


@landmark_registry.add
class Water(Landmark):
    """Water: impassable to everyone."""

    name = "Water"
    color = np.array([50, 50, 250]) / 255.0
    ownable = False
    solid = True


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
    block_cls = type(
        block_name,
        (Landmark,),
        {
            "name": block_name,
            "color": np.array(resource_cls.color),
            "ownable": False,
            "solid": False,
            "__doc__": f"Cells where {resource_cls.name} can (re)spawn.",
        },
    )
    landmark_registry.add(block_cls)
    return block_cls


for _resource_name in resource_registry.entries:
    if resource_registry.get(_resource_name).collectible:
        source_block_for(_resource_name)
