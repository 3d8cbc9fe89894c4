"""TensorBoard scalar event files, written directly (no TensorBoard or torch.utils.tensorboard
import: those cost about 0.16 s of a process's start-up on an H200).

The file is what TensorBoard's own writer produces for scalars: TFRecord framing (little-endian
length, masked CRC-32C of the length, the record, masked CRC-32C of the record) around
``Event`` protocol buffers encoded by hand: a first event with ``file_version
"brain.Event:2"``, then per step one event whose ``summary`` holds ``simple_value`` entries.
``purge_step`` writes the ``SessionLog START`` event TensorBoard's UI reads as "hide the events
of later steps from earlier files", as ``SummaryWriter(purge_step=...)`` does.
"""

from __future__ import annotations

import itertools
import os
import socket
import struct
import time
from pathlib import Path


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """The CRC-32C (Castagnoli) of ``data``."""
    crc, table = 0xFFFFFFFF, _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC: rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data: bytes) -> bytes:
    """``data`` framed as one TFRecord."""
    length = struct.pack("<Q", len(data))
    return (
        length
        + struct.pack("<I", masked_crc32c(length))
        + data
        + struct.pack("<I", masked_crc32c(data))
    )


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # int64 fields: two's complement, as protobuf encodes them
    while True:
        bits, value = value & 0x7F, value >> 7
        out.append(bits | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def event_bytes(
    wall_time: float,
    step: int,
    scalars: dict[str, float] | None = None,
    file_version: str | None = None,
    session_start: bool = False,
) -> bytes:
    """One ``tensorboard.Event`` message: ``wall_time`` (field 1), ``step`` (2), and one of
    ``file_version`` (3), a ``Summary`` of ``simple_value`` scalars (5), ``SessionLog START`` (7)."""
    out = b"\x09" + struct.pack("<d", wall_time) + b"\x10" + _varint(step)
    if file_version is not None:
        out += _field(3, file_version.encode())
    if scalars:
        values = b"".join(
            _field(1, _field(1, tag.encode()) + b"\x15" + struct.pack("<f", float(value)))
            for tag, value in scalars.items()
        )
        out += _field(5, values)
    if session_start:
        out += _field(7, b"\x08\x01")  # session_log (field 7): SessionLog.status = START
    return out


_FILE_IDS = itertools.count()


class ScalarEventWriter:
    """Scalars of a run into ``logdir/events.out.tfevents.<time>.<host>.<pid>.<n>``.

    Args:
        logdir: the folder (created).
        purge_step: where a resumed run continues (``SummaryWriter``'s ``purge_step``).
    """

    def __init__(self, logdir: str | Path, purge_step: int | None = None) -> None:
        self.logdir = Path(logdir)
        self.logdir.mkdir(parents=True, exist_ok=True)
        now = time.time()
        name = f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}.{os.getpid()}"
        self.path = self.logdir / f"{name}.{next(_FILE_IDS)}"
        self._file = self.path.open("ab")
        self._write(event_bytes(now, 0, file_version="brain.Event:2"))
        if purge_step is not None:
            self._write(event_bytes(now, purge_step, file_version="brain.Event:2"))
            self._write(event_bytes(now, purge_step, session_start=True))

    def _write(self, event: bytes) -> None:
        self._file.write(tfrecord(event))

    def add_scalars(self, scalars: dict[str, float], step: int) -> None:
        """One event with every scalar of ``scalars`` at ``step``."""
        if scalars:
            self._write(event_bytes(time.time(), step, scalars))

    def flush(self) -> None:
        """Hand the written events to the OS."""
        self._file.flush()

    def close(self) -> None:
        """Flush and close the file (idempotent)."""
        if not self._file.closed:
            self._file.close()
