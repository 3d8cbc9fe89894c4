"""``pip install my-env-package`` then ``training_script --env my_env``: a package of its own
registers an environment through the ``ai_economist.environments`` entry point, with no edit to
this project. The fixture package (tests/fixtures/my_env_package) is installed offline into a
fresh venv and trained there for two iterations in a subprocess (about 20 s on an idle machine).
Building it without network needs setuptools in this interpreter (the ``dev`` extra has it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "my_env_package"


def make_venv(path: Path) -> Path:
    """A venv that sees this interpreter's packages (torch, numpy, ai_economist) and installs
    into its own site-packages. ``--system-site-packages`` alone reaches the base
    interpreter's, not those of a venv we run in, so a ``.pth`` adds ours as a site dir."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(path)],
        check=True,
    )
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(purelib, "outer_site.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return python


@pytest.mark.slow
def test_an_installed_package_trains_with_no_edit_to_this_project(tmp_path):
    python = make_venv(tmp_path / "venv")
    source = tmp_path / "my_env_package"  # a copy: the build writes beside the sources
    shutil.copytree(FIXTURE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PIP_NO_INPUT"] = "1"
    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
               "--no-index", "--disable-pip-version-check", str(source)]  # fmt: skip
    subprocess.run(install, check=True, cwd=tmp_path, env=env, timeout=120)
    run_dir = tmp_path / "run"
    train = [str(python), "-m", "ai_economist.training.training_script", "--env", "my_env",
             "--device", "cpu", "--results_dir", str(run_dir), "--quiet"]  # fmt: skip
    done = subprocess.run(train, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]  # 4 episodes x 4 steps / 8 per iteration
    config = (run_dir / "config.yaml").read_text()
    assert "name: my_env" in config and "env_backend: numpy" in config  # 'auto' resolved
    listing = subprocess.run(
        [str(python), "-m", "ai_economist.training.training_script", "--list_envs"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "my_env  (package 'my-env-package' (my_env_package.registration))" in listing.stdout
    assert "ring_chase" in listing.stdout  # this project's environments, beside it
