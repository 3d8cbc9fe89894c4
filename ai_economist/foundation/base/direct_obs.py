"""Observation sources that write straight into the step's flat buffer (the fast path).

An observation source (the scenario, or a component) may offer, besides its public
``generate_observations`` dict, an ``observation_writer(slots)`` method: given a
:class:`SourceSlots` (where each of its fields goes, learned from one general-path step by
:class:`~ai_economist.foundation.base.flat_assembly.FusedFlattener`) it returns a function
``write(buf, scalars, outs)`` that, every step,

* writes vector fields into ``buf`` (float32, every key's ``"flat"`` back to back) at the
  positions :meth:`SourceSlots.positions` gave it (one fancy-indexed assignment may cover
  many agents),
* appends one-value fields to ``scalars`` in the order it declared them with
  :meth:`SourceSlots.scalars` (all sources' scalars are written with one assignment),
* puts kept fields (e.g. 2-D maps) into ``outs[key][name]`` with the name from
  :meth:`SourceSlots.kept`,

or returns None (no fast path, e.g. for a configuration it does not cover). Every field of
the learned layout must be claimed exactly once, else there is no fast path, and written at
every step (only the count of scalars is checked per step). The env uses
:class:`DirectObservations` only when every source offers a writer and its class defines the
writer no higher than ``generate_observations`` (a subclass that overrides only
``generate_observations`` keeps the general path). The result equals the general path's
(same float32 values, same dicts); ``tests/foundation/base/test_direct_obs.py`` holds them
together over random steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ai_economist.foundation.base.flat_assembly import KEPT, SINGLE, FusedFlattener
from ai_economist.foundation.base.observations import filled

Writer = Callable[[np.ndarray, list, dict], None]


class Claims:
    """Slots ``(agent key, name)`` that a writer claims once each (the base of the slot maps)."""

    def __init__(self, slots: Iterable[tuple[str, Any]]):
        self._unclaimed = set(slots)

    def _take(self, key: str, name: Any) -> None:
        try:
            self._unclaimed.remove((key, name))
        except KeyError:
            raise KeyError(self._not_claimable(key, name)) from None

    def _not_claimable(self, key: str, name: Any) -> str:
        return f"{key!r}: {name!r} is not a slot or was claimed twice"

    @property
    def complete(self) -> bool:
        """Whether every slot has been claimed."""
        return not self._unclaimed


class SourceSlots(Claims):
    """Where one source's fields go in the flat buffer (see the module docstring).

    Args:
        prefix: the source's field prefix (``"world-"``, ``"<component name>-"``).
        plan: ``{str key: {field: (kind, start, stop)}}`` from the learned layout.
        offsets: ``{str key: start of its "flat" in the buffer}``.
    """

    def __init__(self, prefix: str, plan: dict[str, dict[str, tuple]], offsets: dict[str, int]):
        self.prefix = prefix
        self._plan = plan
        self._offsets = offsets
        super().__init__((k, f) for k, fields in plan.items() for f in fields)
        self.scalar_positions: list[int] = []

    def keys(self) -> list[str]:
        """The agent keys this source wrote on the learned step."""
        return list(self._plan)

    def _claim(self, key: str, field: str) -> tuple:
        self._take(key, field)
        return self._plan[key][field]

    def _not_claimable(self, key: str, field: str) -> str:
        return (
            f"{self.prefix.rstrip('-')}: field {field!r} of agent key {key!r} is not in the "
            "learned observation layout or was claimed twice"
        )

    def scalars(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Declare one-value fields ``(key, field)``, in the order the writer appends them."""
        for key, field in pairs:
            kind, start, _ = self._claim(key, field)
            if kind != SINGLE:
                raise ValueError(f"{self.prefix}{field} of {key!r} is not a one-value field")
            self.scalar_positions.append(self._offsets[key] + start)

    def positions(self, key: str, field: str) -> np.ndarray:
        """Buffer positions (int64) of a flattened field of ``key``."""
        kind, start, stop = self._claim(key, field)
        if kind == KEPT:
            raise ValueError(f"{self.prefix}{field} of {key!r} is kept, not flattened")
        return np.arange(start, stop, dtype=np.int64) + self._offsets[key]

    def kept(self, key: str, field: str) -> str:
        """The prefixed name under which the writer stores a kept field of ``key``."""
        kind, name, _ = self._claim(key, field)
        if kind != KEPT:
            raise ValueError(f"{self.prefix}{field} of {key!r} is flattened, not kept")
        return name


def _dropped() -> None:
    return None


class NotCopied:
    """Mixin: copies of the env get None here (``copy.deepcopy`` and pickling), so they
    rebuild the direct path for their own objects (the writers are closures over the
    original env's scenario and components, which a copy must not keep using)."""

    def __deepcopy__(self, memo: dict) -> None:
        return None

    def __reduce__(self) -> tuple:
        return (_dropped, ())


def _owner(cls: type, name: str) -> type | None:
    return next((c for c in cls.__mro__ if name in vars(c)), None)


def trusted_writer(
    source: Any, writer: str = "observation_writer", general: str = "generate_observations"
) -> bool:
    """Whether ``source``'s ``writer`` method belongs to its ``general`` one: defined in the
    same class or a subclass of it (so a subclass overriding only ``general`` is not fast)."""
    if general in vars(source):  # replaced on the instance
        return False
    writer_cls = _owner(type(source), writer)
    obs_cls = _owner(type(source), general)
    return writer_cls is not None and obs_cls is not None and issubclass(writer_cls, obs_cls)


def complete_writer(make: Callable[[Any], Any], slots: Any) -> Any:
    """``make(slots)``, or None where it raises ``KeyError``/``ValueError``, offers no writer
    or leaves ``slots`` incomplete (so the caller takes the general path)."""
    try:
        writer = make(slots)
    except (KeyError, ValueError):
        return None
    return writer if writer is not None and slots.complete else None


class DirectObservations(NotCopied):
    """The step's observations from the sources' writers (see the module docstring)."""

    def __init__(
        self, sizes: dict[str, int], time_slots: dict[str, int | None], kept: dict[str, list]
    ):
        self._offsets: dict[str, int] = {}
        total = 0
        for key, n in sizes.items():
            self._offsets[key] = total
            total += n
        self._size = total
        self._bounds = [(k, o, o + sizes[k]) for k, o in self._offsets.items()]
        self._timed = list(time_slots)
        self._time_positions = [
            self._offsets[k] + s for k, s in time_slots.items() if s is not None
        ]
        self._templates = {
            k: dict.fromkeys((["time"] if k in time_slots else []) + kept.get(k, [])) for k in sizes
        }
        self._writers: list[Writer] = []
        self._sources: list[Any] = []
        self._scalar_idx = np.zeros(0, dtype=np.int64)
        self._n_scalars = 0
        self._obs_keys: list[str] = []
        # (key, start, stop, only a "flat") of the keys that are not observation keys
        self._planner_order: list[tuple[str, int, int, bool]] = []
        # per key of the per-step dicts: (key, index of its time value or None, start, stop)
        self._fill_plan: list[tuple[str, int | None, int, int]] = []
        self._outs_are_obs = False  # the per-step dicts' keys are the observation keys

    @classmethod
    def build(
        cls, fused: FusedFlattener, sources: Sequence[tuple[str, Any]], obs_keys: Sequence[str]
    ) -> DirectObservations | None:
        """From the layout ``fused`` learned and the objects behind ``sources`` (``(prefix,
        source object)``), or None where a source offers no (trusted, complete) writer."""
        plans, sizes, time_slots = fused.layout()
        if plans is None or len(plans) != len(sources):
            return None
        kept: dict[str, list] = {}
        for plan in plans:
            for key, fields in plan.items():
                kept.setdefault(key, []).extend(s for k, s, _ in fields.values() if k == KEPT)
        direct = cls(sizes, time_slots, kept)
        positions = list(direct._time_positions)
        for (prefix, source), plan in zip(sources, plans):
            if not trusted_writer(source):
                return None
            slots = SourceSlots(prefix, plan, direct._offsets)
            writer = complete_writer(source.observation_writer, slots)
            if writer is None:
                return None
            direct._writers.append(writer)
            direct._sources.append(source)
            positions += slots.scalar_positions
        direct._scalar_idx = np.array(positions, dtype=np.int64)
        direct._n_scalars = len(positions)
        direct._obs_keys = list(obs_keys)
        direct._split_flat_only()
        return direct

    def _split_flat_only(self) -> None:
        """Take the keys that are not observation keys and hold only a ``"flat"`` (the
        planner's per-agent entries) out of the per-step dicts: :meth:`assemble` gives
        them their slice of the buffer directly, in the same order."""
        flat_only = {k for k, t in self._templates.items() if not t and k not in self._obs_keys}
        self._templates = {k: t for k, t in self._templates.items() if k not in flat_only}
        self._planner_order = [
            (k, start, stop, k in flat_only)
            for k, start, stop in self._bounds
            if k not in self._obs_keys
        ]
        self._bounds = [b for b in self._bounds if b[0] not in flat_only]
        self._plan_fills()

    def _plan_fills(self) -> None:
        """One entry per key of the per-step dicts for :meth:`assemble`'s single pass
        (its ``time`` view, then its ``"flat"`` view: each dict gets its keys in the same
        order as by two passes), and whether those dicts are the observation dicts as
        they are (the same keys in the same order, so no re-keyed copy is needed)."""
        time_index = {k: i for i, k in enumerate(self._timed)}
        self._fill_plan = [(k, time_index.get(k), start, stop) for k, start, stop in self._bounds]
        self._outs_are_obs = list(self._templates) == self._obs_keys

    def assemble(self, time_value: float) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``(obs, agent-wise planner obs)`` as ``merge_and_flatten`` returns them, or None
        (take the general path) when a source's ``generate_observations`` was replaced on
        the instance or a writer did not append the declared number of scalars."""
        for source in self._sources:
            if "generate_observations" in vars(source):  # replaced on the instance since
                return None
        buf = np.empty(self._size, dtype=np.float32)
        scalars: list = [time_value] * len(self._time_positions)
        outs = {k: t.copy() for k, t in self._templates.items()}
        for writer in self._writers:
            writer(buf, scalars, outs)
        if len(scalars) != self._n_scalars:
            return None
        buf[self._scalar_idx] = scalars  # (faster than buf.put for a list)
        # one (1,) array per key, as filled(1, time_value) each: disjoint views of one array
        times = filled(len(self._timed), time_value)
        for key, i, start, stop in self._fill_plan:
            out = outs[key]
            if i is not None:
                out["time"] = times[i : i + 1]
            out["flat"] = buf[start:stop]
        obs = outs if self._outs_are_obs else {k: outs.pop(k) for k in self._obs_keys}
        planner = {}
        for key, start, stop, flat_only in self._planner_order:
            if flat_only:
                planner[key] = buf[start:stop]
            else:
                o = outs[key]
                planner[key] = o["flat"] if len(o) == 1 else o
        return obs, planner
