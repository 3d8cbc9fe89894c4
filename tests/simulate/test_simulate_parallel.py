"""The same table from 1 or 2 local workers and from a local Ray cluster."""

from __future__ import annotations

import pytest

from ai_economist.simulate import run_sweep
from ai_economist.simulate.api import plan

POLICIES = ["open", "closed", "closed-180-then-open"]
SWEEP = {"infection_intercept": [0.8, 1.2], "unemployment": [1.0, 1.5]}
DAYS = 20


@pytest.fixture(scope="module")
def one_worker():
    return run_sweep(POLICIES, SWEEP, days=DAYS, chunk_size=3)


def test_plan_splits_into_chunks_of_one_model_group():
    rows, chunks = plan(POLICIES + ["real-world"], SWEEP, scenario="tutorial", days=DAYS,
                        chunk_size=5)  # fmt: skip
    assert len(rows) == 16 and [len(c.runs) for c in chunks] == [5, 5, 2, 4]
    assert [c.kind for c in chunks] == ["schedule"] * 3 + ["real-world"]
    assert sorted(i for c in chunks for i in c.runs) == list(range(16))


def test_two_workers_give_the_same_table(one_worker):
    two = run_sweep(POLICIES, SWEEP, days=DAYS, chunk_size=3, workers=2)
    assert two.equals(one_worker)


def test_local_ray_cluster_gives_the_same_table(one_worker):
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ray[default]')")
    try:
        table = run_sweep(POLICIES, SWEEP, days=DAYS, chunk_size=3, ray_address="local")
    finally:
        if ray.is_initialized():
            ray.shutdown()
    assert table.equals(one_worker)


def test_progress_bar_counts_the_runs(capsys):
    pytest.importorskip("tqdm")
    run_sweep(["open", "closed"], days=2, chunk_size=1, progress=True)
    err = capsys.readouterr().err
    assert "simulating" in err and "2/2" in err
