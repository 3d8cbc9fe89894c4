"""What the entity kinds share: the check of the declared class attributes, and a factory that
declares one entity class from a row of values (name, colour, flags, docstring)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np


class Entity:
    """Base of the entity kinds (resources, landmarks, endogenous quantities).

    A kind names itself in ``entity_kind`` and lists in ``required_attributes`` the class
    attributes every entity of it must set (``(attribute, what the error calls it)``);
    instantiating an entity checks them.
    """

    name: str = ""
    entity_kind: ClassVar[str] = "Entity"
    required_attributes: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self) -> None:
        if not self.name:
            raise ValueError(f"{type(self).__name__} must define a name")
        for attribute, what in self.required_attributes:
            if getattr(self, attribute) is None:
                raise ValueError(f"{self.entity_kind} {self.name} must define {what}")


def rgb(red: int, green: int, blue: int) -> np.ndarray:
    """An RGB colour in [0, 1] from 0-255 components."""
    return np.array([red, green, blue]) / 255.0


def entity_class(
    kind: type, name: str, color: np.ndarray, doc: str, module: str, **attributes: Any
) -> type:
    """A subclass of the entity kind ``kind`` called ``name`` (also its registry name), with
    ``color``, the class ``attributes`` and the docstring ``doc``, belonging to ``module``."""
    namespace = {"name": name, "color": color, "__doc__": doc, "__module__": module}
    return type(name, (kind,), {**namespace, **attributes})
