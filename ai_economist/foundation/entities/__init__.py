"""Entity registries: resources, landmarks and endogenous quantities."""

from ai_economist.foundation.entities.endogenous import Endogenous, endogenous_registry
from ai_economist.foundation.entities.landmarks import Landmark, landmark_registry
from ai_economist.foundation.entities.resources import Resource, resource_registry

__all__ = [
    "Endogenous",
    "Landmark",
    "Resource",
    "endogenous_registry",
    "landmark_registry",
    "resource_registry",
]
