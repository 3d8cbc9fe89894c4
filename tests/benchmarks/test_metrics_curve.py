"""benchmarks/metrics_curve.py: the evenly spaced rows and the first iteration reaching a value."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import metrics_curve  # noqa: E402


def write_csv(path: Path) -> Path:
    lines = ["iteration,env_steps,env/social/productivity"]
    lines += [f"{i},{i * 100},{'' if i == 1 else i * 10}" for i in range(1, 11)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_curve_and_first_reaching(tmp_path: Path, capsys) -> None:
    path = write_csv(tmp_path / "metrics.csv")
    code = metrics_curve.main([str(path), "--columns", "env/social/productivity", "--rows", "5",
                               "--reach", "env/social/productivity=55"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    body = [line.split() for line in out[2:-1]]
    # every 2nd row from the first, the last included; iteration 1's empty value prints "-"
    assert body == [["1", "-"], ["3", "30"], ["5", "50"], ["7", "70"], ["9", "90"],
                    ["10", "100"]]  # fmt: skip
    assert out[-1] == "env/social/productivity >= 55: iteration 6, env-step 600"


def test_never_reached_and_bad_input(tmp_path: Path, capsys) -> None:
    path = write_csv(tmp_path / "metrics.csv")
    metrics_curve.main([str(path), "--reach", "env/social/productivity=1e9"])
    assert capsys.readouterr().out.splitlines()[-1].endswith(": never")
    with pytest.raises(SystemExit, match="missing.csv: cannot be read"):
        metrics_curve.main([str(tmp_path / "missing.csv")])
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SystemExit, match="expected a metrics.csv with an 'iteration' column"):
        metrics_curve.main([str(tmp_path / "other.csv")])
