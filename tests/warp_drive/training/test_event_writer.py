"""The TensorBoard event files the trainer writes without TensorBoard: TensorBoard's own reader
loads them (scalars, steps, the purge marker), and the CRC and framing match the format."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from ai_economist.warp_drive.training import event_writer as ew


def test_crc32c_of_the_standard_check_string():
    assert ew.crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert ew.crc32c(b"") == 0


def test_a_record_is_length_crc_data_crc():
    record = ew.tfrecord(b"abc")
    assert struct.unpack("<Q", record[:8]) == (3,)
    assert struct.unpack("<I", record[8:12]) == (ew.masked_crc32c(record[:8]),)
    assert record[12:15] == b"abc"
    assert struct.unpack("<I", record[15:]) == (ew.masked_crc32c(b"abc"),)


def test_tensorboard_reads_the_scalars_steps_and_purge_marker(tmp_path):
    pytest.importorskip("tensorboard", reason="TensorBoard is part of the train extra")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event

    writer = ew.ScalarEventWriter(tmp_path / "tb", purge_step=3)
    writer.add_scalars({"loss": 0.5, "env/social/equality": 0.25, "steps": 7}, 3)
    writer.add_scalars({"loss": -1.5}, 4)
    writer.add_scalars({}, 5)  # nothing to write
    writer.close()
    writer.close()
    events = [Event.FromString(raw) for raw in RawEventFileLoader(str(writer.path)).Load()]
    assert events[0].file_version == "brain.Event:2"
    assert [e.step for e in events] == [0, 3, 3, 3, 4]
    assert events[2].session_log.status == events[2].session_log.START
    scalars = [(e.step, v.tag, v.simple_value) for e in events for v in e.summary.value]
    assert scalars == [(3, "loss", 0.5), (3, "env/social/equality", 0.25), (3, "steps", 7.0),
                       (4, "loss", -1.5)]  # fmt: skip
    accumulator = EventAccumulator(str(tmp_path / "tb"))
    accumulator.Reload()  # what the TensorBoard UI reads
    assert [(s.step, s.value) for s in accumulator.Scalars("loss")] == [(3, 0.5), (4, -1.5)]
    assert sorted(accumulator.Tags()["scalars"]) == ["env/social/equality", "loss", "steps"]
    assert writer.path.name.startswith("events.out.tfevents.")


def test_negative_and_large_steps_encode_as_protobuf_int64():
    assert ew._varint(1) == b"\x01"
    assert ew._varint(300) == b"\xac\x02"
    assert ew._varint(-1) == b"\xff" * 9 + b"\x01"  # ten bytes, two's complement


def test_writing_events_imports_no_tensorboard(tmp_path):
    code = (
        "import sys; from ai_economist.warp_drive.training.metrics_logger import MetricsLogger; "
        f"m = MetricsLogger({str(tmp_path)!r}); m.log({{'iteration': 1, 'loss': 2.0}}); "
        "m.close(); print(sorted(k for k in sys.modules if k.split('.')[0] == 'tensorboard' or 'utils.tensorboard' in k))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert len(list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))) == 1
