"""benchmarks/import_costs.py times statements in fresh processes and reports failures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "import_costs.py"


def test_it_times_each_statement_and_flags_one_that_fails(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--repeats", "2", "--statements", "pass",
         "import no_such_module_here", "--pycache_prefix", str(tmp_path / "pyc")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if ":: " in line]
    assert len(lines) == 4  # two statements, with and without the prefix
    assert lines[0].endswith("rc=0 :: pass") and "rc=1 :: import no_such_module_here" in lines[1]
    assert "PYTHONPYCACHEPREFIX" in done.stdout
    assert all(len(line.split("(runs ")[1].split(")")[0].split()) == 2 for line in lines)


def test_it_refuses_zero_repeats():
    done = subprocess.run([sys.executable, str(SCRIPT), "--repeats", "0"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and "--repeats 0" in done.stderr


def test_importtime_lists_the_modules_of_a_statement_by_own_time():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--repeats", "1", "--statements", "import json",
         "--importtime", "3"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("-X importtime :: "))
    listed = lines[header + 1 : header + 4]
    assert len(listed) == 3 and all(" s own " in line for line in listed)
    assert int(re.search(r": (\d+) modules, ", lines[header]).group(1)) >= 3
    owns = [float(line.split()[0]) for line in listed]
    assert owns == sorted(owns, reverse=True)


def test_parse_importtime_reads_the_rows_and_skips_the_header():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from import_costs import parse_importtime
    finally:
        sys.path.remove(str(SCRIPT.parent))
    text = ("import time: self [us] | cumulative | imported package\n"
            "import time:       120 |        120 |   _io\n"
            "import time:      3000 |       3500 | json\n")  # fmt: skip
    assert parse_importtime(text) == [(120, 120, "_io"), (3000, 3500, "json")]
