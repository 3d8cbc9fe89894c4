"""Action masks written by the components straight into one buffer (the fast path).

A component may offer, besides its public ``generate_masks`` dict, a ``mask_writer(slots)``
method: given a :class:`MaskSlots` (where each of its sub-spaces sits in each agent's
flattened mask, as :class:`~ai_economist.foundation.base.flat_assembly.FlatMaskWriter` lays
them out) it returns a function ``write(buf, completions)`` that writes this step's masks
into ``buf`` (float32, every agent's flattened mask back to back, starting from the
template: ones at the NO-OP positions, zeros elsewhere) and does whatever else
``generate_masks`` does (e.g. bookkeeping of the episode count); or it returns None (no fast
path). Every sub-space of every agent must be claimed exactly once. The env uses
:class:`DirectMasks` only when every component offers a writer and its class defines the
writer no higher than ``generate_masks``; the result equals the general path's
(``tests/foundation/base/test_direct_obs.py`` holds them together).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.direct_obs import (
    Claims,
    NotCopied,
    complete_writer,
    trusted_writer,
)

MaskWriter = Callable[[np.ndarray, int], None]


class MaskSlots(Claims):
    """Where one component's sub-spaces sit in the mask buffer.

    Args:
        component: the component's name.
        slots: ``{agent key: {sub-space or None: (start, stop)}}`` within each agent's mask.
        offsets: ``{agent key: start of its mask in the buffer}``.
    """

    def __init__(
        self,
        component: str,
        slots: dict[str, dict[str | None, tuple[int, int]]],
        offsets: dict[str, int],
    ):
        self.component = component
        self._slots = slots
        self._offsets = offsets
        super().__init__((k, sub) for k, subs in slots.items() for sub in subs)

    def positions(self, key: str, sub: str | None = None) -> np.ndarray:
        """Buffer positions (int64) of sub-space ``sub`` (None: the component's only one)
        of agent ``key``'s mask."""
        self._take(key, sub)
        start, stop = self._slots[key][sub]
        return np.arange(start, stop, dtype=np.int64) + self._offsets[key]

    def _not_claimable(self, key: str, sub: str | None) -> str:
        return (
            f"{self.component}: agent {key!r} has no action sub-space {sub!r} or it was "
            "claimed twice"
        )


class DirectMasks(NotCopied):
    """Every agent's flattened mask from the components' mask writers."""

    def __init__(self, templates: dict[str, np.ndarray]) -> None:
        self._offsets: dict[str, int] = {}
        total = 0
        for key, template in templates.items():
            self._offsets[key] = total
            total += template.size
        self._bounds = [(k, o, o + templates[k].size) for k, o in self._offsets.items()]
        self._template = np.concatenate(list(templates.values())).astype(np.float32)
        self._writers: list[MaskWriter] = []
        self._components: list[Any] = []

    @classmethod
    def build(
        cls,
        templates: dict[str, np.ndarray],
        slots: dict[str, dict[str, dict[str | None, tuple[int, int]]]],
        components: Sequence[Any],
    ) -> DirectMasks | None:
        """From ``FlatMaskWriter``'s templates and slots, or None where a component offers
        no (trusted, complete) writer or an agent's sub-space belongs to no component."""
        direct = cls(templates)
        claimed = set()
        for component in components:
            if not trusted_writer(component, "mask_writer", "generate_masks"):
                return None
            own = {k: s[component.name] for k, s in slots.items() if component.name in s}
            mask_slots = MaskSlots(component.name, own, direct._offsets)
            writer = complete_writer(component.mask_writer, mask_slots)
            if writer is None:
                return None
            direct._writers.append(writer)
            direct._components.append(component)
            claimed.add(component.name)
        if any(name not in claimed for s in slots.values() for name in s):
            return None
        return direct

    def build_masks(self, completions: int) -> dict[str, np.ndarray] | None:
        """``{agent key: flattened float32 mask}`` (views of one fresh buffer), or None
        (take the general path) when a component's ``generate_masks`` was replaced on the
        instance."""
        for component in self._components:
            if "generate_masks" in vars(component):  # replaced on the instance since
                return None
        buf = self._template.copy()
        for writer in self._writers:
            writer(buf, completions)
        return {key: buf[start:stop] for key, start, stop in self._bounds}
