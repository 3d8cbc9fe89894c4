"""TensorBoard event files on resume: the replayed iterations are logged once, not twice.

``SummaryWriter(purge_step=...)`` only asks the TensorBoard UI to hide the old events; the old
event file still holds them, so every other reader (``EventAccumulator``, pandas exports, a
second TensorBoard version) sees the replayed iterations in two files.  On resume from
iteration ``N``, :func:`set_aside_events` therefore rewrites each event file that holds steps
after ``N`` without them, after copying the original byte for byte into
``<run_dir>/tensorboard.after_iter_<N>.<stamp>/`` (nothing is deleted).

An event file is a sequence of TFRecords (``uint64 length``, ``uint32 crc``, ``data``, ``uint32
crc``, little-endian); the kept records are copied unchanged, checksums included.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from ai_economist.warp_drive.training.durable import write_atomic

EVENT_GLOB = "events.out.tfevents.*"


def _records(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """``(raw record, event bytes)`` of each whole record; a cut-short tail is skipped."""
    offset = 0
    while offset + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        end = offset + 12 + length + 4
        if end > len(data):
            return
        yield data[offset:end], data[offset + 12 : offset + 12 + length]
        offset = end


def _step(event: bytes) -> int | None:
    """The event's step, or None when the bytes do not parse as an ``Event``."""
    from tensorboard.compat.proto.event_pb2 import Event

    try:
        return Event.FromString(event).step
    except Exception:  # noqa: BLE001  (protobuf's DecodeError and friends)
        return None


def set_aside_events(run_dir: str | Path, last_iteration: int, stamp: str) -> list[Path]:
    """Keep the events up to step ``last_iteration`` in ``run_dir/tensorboard``; return the
    folder the originals were copied to (empty list when no file held later steps)."""
    logdir = Path(run_dir) / "tensorboard"
    files = sorted(logdir.glob(EVENT_GLOB)) if logdir.is_dir() else []
    aside = Path(run_dir) / f"tensorboard.after_iter_{last_iteration}.{stamp}"
    for path in files:
        data = path.read_bytes()
        records = list(_records(data))
        kept = [raw for raw, event in records if (_step(event) or 0) <= last_iteration]
        if len(kept) == len(records) and sum(map(len, kept)) == len(data):
            continue
        aside.mkdir(exist_ok=True)
        write_atomic(aside / path.name, data, "TensorBoard events")
        write_atomic(path, b"".join(kept), "TensorBoard events")
    return [aside] if aside.is_dir() else []
