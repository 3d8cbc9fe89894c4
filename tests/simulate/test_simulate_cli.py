"""``ai-economist-simulate`` end to end: CSV, plots, summary; and with the plain install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from first_hour import modules_outside, run_without

from ai_economist.simulate import SweepTable
from ai_economist.simulate.cli import main


def test_command_writes_the_table_plots_and_summary(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    args = ["--policy", "open", "closed", "--sweep", "infection_intercept=0.5:1.5:3",
            "--sweep", "seed=0,1", "--days", "30", "--out", str(out), "--no_progress"]  # fmt: skip
    assert main(args) == 0
    table = SweepTable.from_csv(out / "sweep.csv")
    assert len(table) == 12 and list(table["infection_intercept"][:3]) == [0.5, 0.5, 1.0]
    assert (out / "frontier.png").is_file() and (out / "welfare.png").is_file()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["policy", "runs"]
    assert lines[1].split()[:2] == ["open", "6"] and lines[2].split()[:2] == ["closed", "6"]
    assert lines[-1].startswith("12 runs of 30 days in ")


def test_command_runs_with_the_plain_install(tmp_path):
    """``pip install ai-economist`` (no torch, tqdm or matplotlib): the CSV is written."""
    code = (
        "from ai_economist.simulate.cli import main\n"
        f"assert main(['--policy', 'closed-180-then-open', '--out', {str(tmp_path)!r}]) == 0\n"
    )
    stdout = run_without(modules_outside([]), code)
    assert "435.61" in stdout and (tmp_path / "sweep.csv").is_file()
    assert not (tmp_path / "frontier.png").exists()


def test_readme_python_snippet_runs(tmp_path, monkeypatch, capsys):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("## Policy research from the command line")
    section = readme[start : readme.index("\n## ", start + 1)]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert len(SweepTable.from_csv(tmp_path / "sweep.csv")) == 6
    assert capsys.readouterr().out.startswith("[")
