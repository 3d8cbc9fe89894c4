"""``benchmarks/startup_profile.py``: the phases of a whole training process add up to its
wall time, each second counted once (CPU: the toy env, one short hooked process)."""

from __future__ import annotations

import time

import pytest


@pytest.fixture
def startup(import_benchmark):
    return import_benchmark("startup_profile")


def test_nested_phases_are_charged_once_to_the_innermost(startup):
    timeline = startup.Timeline()

    def inner():
        time.sleep(0.05)

    def outer():
        time.sleep(0.05)
        timeline.wrap(inner, "imports")()

    timeline.wrap(outer, "training", finishes=True)()
    timeline._charge()
    assert timeline.totals["imports"][0] == pytest.approx(0.05, abs=0.04)
    assert timeline.totals["training"][0] == pytest.approx(0.05, abs=0.04)
    assert timeline.finished_at is not None and timeline.stack == ["checks"]


def test_the_phases_of_one_training_process_add_up_to_its_wall_time(startup, tmp_path):
    command = [*startup.PUBLISHED[:3], "toy", "--device", "cpu", "--quiet",
               "trainer.num_envs=4", "trainer.train_batch_size=40", "trainer.num_episodes=8",
               "saving.tensorboard=false"]  # fmt: skip
    phases = startup.one_process(command, cold=True, hooked=True, workdir=str(tmp_path))
    wall, cpu = phases.pop("total")
    assert isinstance(phases.pop("compiled"), list)
    assert set(phases) <= set(startup.PHASES)
    assert {"interpreter start", "imports", "trainer set-up", "training", "teardown"} <= set(phases)
    assert phases["imports"][0] > 0.1  # torch at least
    assert sum(w for w, _ in phases.values()) == pytest.approx(wall, abs=0.05 * wall + 0.1)
    assert 0 < sum(c for _, c in phases.values()) <= cpu + 0.1


def test_modules_compiled_from_source_are_counted_and_named(startup, tmp_path, monkeypatch):
    from importlib import _bootstrap_external as external

    monkeypatch.setattr(
        external.SourceLoader, "source_to_code", external.SourceLoader.source_to_code
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    (tmp_path / "startup_probe_mod.py").write_text("VALUE = 1\n")
    compiled = startup.count_source_compiles()
    import importlib
    import sys

    importlib.import_module("startup_probe_mod")
    assert compiled == [str(tmp_path / "startup_probe_mod.py")]
    del sys.modules["startup_probe_mod"]
    importlib.import_module("startup_probe_mod")  # now from the cache written above
    assert len(compiled) == 1
    del sys.modules["startup_probe_mod"]
    assert "none compiled" in startup.bytecode_note([[], []])
    note = startup.bytecode_note([compiled, []])
    assert "compiled [1, 0] modules from source" in note and "PYTHONPYCACHEPREFIX" in note
    site = ["/v/lib/site-packages/torch/a.py", "/v/lib/site-packages/torch/nn/b.py", "/w/m.py"]
    assert "2 under /v/lib/site-packages/torch, 1 under /w" in startup.bytecode_note([site])
