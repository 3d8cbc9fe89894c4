"""Console scripts installed without their extra name the extra to install (issue 25)."""

import os
import subprocess
import sys

import pytest
from first_hour import MODULES, REPO_ROOT, _dist_name, modules_outside, pyproject

from ai_economist.extras import EXTRA_OF, MissingExtraError, require_modules

# [project.scripts] entry -> (arguments that need its extra, the extra the message must name).
# A new console script without a row here fails test_every_console_script_is_covered.
NEEDS_EXTRA = {
    "ai-economist-train": (["--env", "toy", "--device", "cpu"], "train"),
    "ai-economist-simulate": (["--policy", "checkpoint:.", "--no_progress"], "train"),
}


def run_script(name: str, args: list[str], hidden: list[str], cwd) -> subprocess.CompletedProcess:
    """The console script ``name`` in a fresh interpreter where ``hidden`` cannot be imported."""
    module, _, attr = pyproject()["project"]["scripts"][name].partition(":")
    code = (
        f"import sys\nfor _m in {hidden!r}:\n    sys.modules[_m] = None\n"
        f"from {module} import {attr}\nsys.exit({attr}({args!r}))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_every_console_script_is_covered():
    assert set(pyproject()["project"]["scripts"]) == set(NEEDS_EXTRA)


@pytest.mark.parametrize("name", sorted(NEEDS_EXTRA))
def test_console_script_without_its_extra_names_the_extra(name, tmp_path):
    args, extra = NEEDS_EXTRA[name]
    result = run_script(name, args, modules_outside([]), tmp_path)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert f'pip install "ai-economist[{extra}]"' in result.stderr
    assert "torch" in result.stderr


def test_simulate_with_fixed_policies_needs_no_extra(tmp_path):
    args = ["--policy", "open", "--days", "3", "--no_plots", "--no_progress", "--out", "o"]
    result = run_script("ai-economist-simulate", args, modules_outside([]), tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "o" / "sweep.csv").is_file()


def test_extra_of_names_an_extra_that_installs_the_module():
    optional = pyproject()["project"]["optional-dependencies"]
    for module, extra in EXTRA_OF.items():
        dists = [d for d, mods in MODULES.items() if module in mods]
        assert dists, f"{module}: not in tests/first_hour.py MODULES"
        assert dists[0] in {_dist_name(r) for r in optional[extra]}, (module, extra)
    every = {m for reqs in optional.values() for r in reqs for m in MODULES[_dist_name(r)]}
    # test and build tools of the dev extra (setuptools: the entry-point test builds a package)
    assert every - {"pytest", "ruff", "pytorch_lightning", "setuptools"} <= set(EXTRA_OF)


def test_require_modules_names_every_missing_module_and_its_extra():
    require_modules(["yaml"], "x")  # installed: no error
    with pytest.raises(MissingExtraError) as err:
        require_modules(["no_such_module_zz", "yaml"], "the thing")
    assert "the thing needs no_such_module_zz" in str(err.value)
