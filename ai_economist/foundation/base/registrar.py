"""Name -> class registries used to look up scenarios, components, agents and entities.

Every registry maps a case-insensitive name to a class that derives from the registry's
base class.  Classes register themselves when their module is imported, usually with
``@registry.add`` as a class decorator.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any


class Registry:
    """A case-insensitive mapping from ``cls.name`` to ``cls``.

    Args:
        base_class: if given, only subclasses of it can be added.

    Example::

        scenario_registry = Registry(BaseEnvironment)

        @scenario_registry.add
        class MyScenario(BaseEnvironment):
            name = "my-scenario"

        scenario_registry.get("MY-SCENARIO") is MyScenario  # True
    """

    def __init__(self, base_class: type | None = None) -> None:
        self.base_class = base_class
        self._lookup: dict[str, type] = {}

    def add(self, cls: type) -> type:
        """Register ``cls`` under ``cls.name`` and return it (usable as a decorator).

        Raises:
            TypeError: ``cls`` is not a class or not a subclass of the base class.
            ValueError: ``cls.name`` is not a non-empty string or contains ``"."``.
        """
        if not isinstance(cls, type):
            raise TypeError(f"Registry.add expects a class, got {cls!r}")
        if self.base_class is not None and not issubclass(cls, self.base_class):
            raise TypeError(
                f"{cls.__name__} must be a subclass of {self.base_class.__name__} "
                "to be added to this registry"
            )
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"{cls.__name__}.name must be a non-empty string, got {name!r}")
        if "." in name:
            raise ValueError(f"Registered names may not contain '.', got {name!r}")
        # A re-registration (e.g. a module reloaded in a notebook) replaces the old class.
        self._lookup[name.lower()] = cls
        return cls

    def get(self, cls_name: str) -> Any:
        """Return the class registered as ``cls_name`` (case-insensitive).

        Raises:
            KeyError: the name is unknown; the message lists the known entries.
        """
        try:
            return self._lookup[str(cls_name).lower()]
        except KeyError:
            kind = self.base_class.__name__ if self.base_class is not None else "entry"
            close = difflib.get_close_matches(
                str(cls_name).lower(), list(self._lookup), n=3, cutoff=0.6
            )
            hint = (
                f" Did you mean {', '.join(repr(self._lookup[c].name) for c in close)}?"
                if close
                else ""
            )
            raise KeyError(
                f"No {kind} registered under the name {cls_name!r}.{hint} "
                f"Known entries: {self.entries}"
            ) from None

    def has(self, cls_name: str) -> bool:
        """Whether ``cls_name`` (case-insensitive) is registered."""
        return str(cls_name).lower() in self._lookup

    @property
    def entries(self) -> list[str]:
        """Registered names, in their original case, sorted."""
        return sorted(cls.name for cls in self._lookup.values())

    def __contains__(self, cls_name: object) -> bool:
        return self.has(str(cls_name))

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self._lookup)

    def __repr__(self) -> str:
        kind = self.base_class.__name__ if self.base_class is not None else "object"
        return f"Registry({kind}: {self.entries})"
