"""Argument validation helpers for the environment constructor."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.base_agent import agent_registry
from ai_economist.foundation.entities import (
    endogenous_registry,
    landmark_registry,
    resource_registry,
)


def check_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int >= ``minimum``; TypeError/ValueError naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name} must be an int >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_optional_int(name: str, value: Any, minimum: int) -> int | None:
    """Like :func:`check_int` but ``None`` is allowed."""
    return None if value is None else check_int(name, value, minimum)


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool (bools and the ints 0/1 are accepted)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")


def check_world_size(value: Any) -> list[int]:
    """``[H, W]`` with two ints >= 1."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise TypeError(f"world_size must be a list or tuple [H, W] of length 2, got {value!r}")
    return [check_int("world_size[0]", value[0], 1), check_int("world_size[1]", value[1], 1)]


def parse_component_specs(components: Any) -> list[tuple[str, dict[str, Any]]]:
    """Normalise ``[("Name", {kwargs}) | {"Name": {kwargs}}, ...]`` to ``[(name, kwargs)]``."""
    if not isinstance(components, (list, tuple)):
        raise TypeError(
            "components must be a list of ('Name', {kwargs}) tuples or {'Name': {kwargs}} "
            f"dicts, got {components!r}"
        )
    specs = []
    for i, spec in enumerate(components):
        if isinstance(spec, Mapping):
            if len(spec) != 1:
                raise ValueError(
                    f"components[{i}] must be a one-key dict {{'Name': {{kwargs}}}}, got {spec!r}"
                )
            name, kwargs = next(iter(spec.items()))
        elif isinstance(spec, (list, tuple)) and len(spec) == 2:
            name, kwargs = spec
        else:
            raise TypeError(
                f"components[{i}] must be ('Name', {{kwargs}}) or {{'Name': {{kwargs}}}}, got {spec!r}"
            )
        if not isinstance(name, str):
            raise TypeError(f"components[{i}]: the component name must be a str, got {name!r}")
        if kwargs is None:
            kwargs = {}
        if not isinstance(kwargs, Mapping):
            raise TypeError(f"components[{i}] ({name}): kwargs must be a dict, got {kwargs!r}")
        specs.append((name, dict(kwargs)))
    return specs


def check_scenario_attributes(env: Any) -> None:
    """Validate a scenario's ``name``, ``agent_subclasses`` and ``required_entities``."""
    cls_name = type(env).__name__
    if not isinstance(env.name, str) or not env.name:
        raise ValueError(f"Scenario class {cls_name} must define a non-empty name")
    if not isinstance(env.agent_subclasses, (list, tuple)) or not env.agent_subclasses:
        raise TypeError(
            f"{cls_name}.agent_subclasses must be a non-empty list of agent class names"
        )
    classes = [agent_registry.get(a) for a in env.agent_subclasses]
    for a in classes:
        for b in classes:
            if a is not b and issubclass(a, b):
                raise TypeError(f"{cls_name}.agent_subclasses: {a.name} is a subclass of {b.name}")
    if not isinstance(env.required_entities, (list, tuple)):
        raise TypeError(f"{cls_name}.required_entities must be a list")


def register_entities(owners: list[tuple[str, Any]]) -> dict[str, list[str]]:
    """Entity lists from ``[(owner_name, required_entities), ...]``; Coin and Labor always.

    Raises:
        KeyError: an unknown entity name (the message lists the known ones).
    """
    registries = {
        "resources": resource_registry,
        "landmarks": landmark_registry,
        "endogenous": endogenous_registry,
    }
    entities: dict[str, list[str]] = {
        "resources": ["Coin"],
        "landmarks": [],
        "endogenous": ["Labor"],
    }
    for owner, required in owners:
        for entity in required:
            kind = next((k for k, reg in registries.items() if reg.has(entity)), None)
            if kind is None:
                raise KeyError(
                    f"Unknown entity {entity!r} required by {owner!r}. Known resources: "
                    f"{resource_registry.entries}, landmarks: {landmark_registry.entries}, "
                    f"endogenous: {endogenous_registry.entries}"
                )
            name = registries[kind].get(entity).name
            if name not in entities[kind]:
                entities[kind].append(name)
    return entities


def with_keywords(func: Callable, keywords: Sequence[inspect.Parameter]) -> inspect.Signature:
    """``func``'s signature with the keyword-only ``keywords`` put before its ``**kwargs``.

    For a constructor that takes some of its arguments through ``**kwargs`` from the one place
    that lists them with their defaults (a dataclass, a builder function): set as its
    ``__signature__``, ``inspect.signature`` shows them (the run-config key check reads it).
    """
    params = list(inspect.signature(func).parameters.values())
    if not params or params[-1].kind is not inspect.Parameter.VAR_KEYWORD:
        raise TypeError(f"{func.__qualname__} has no **kwargs to take {len(keywords)} keywords")
    added = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in keywords]
    return inspect.Signature(params[:-1] + added + params[-1:])
