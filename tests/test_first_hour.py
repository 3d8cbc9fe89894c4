"""A new user's first hour: entry points, licence metadata, README snippets without the
optional packages, and docs that cite only files of this repository."""

import importlib
import re
import shutil
import subprocess
import sys

import pytest
from first_hour import REPO_ROOT, modules_outside, pyproject, run_without

README = (REPO_ROOT / "README.md").read_text()


def test_every_declared_entry_point_imports():
    scripts = pyproject()["project"].get("scripts", {})
    assert "ai-economist-train" in scripts
    for name, target in scripts.items():
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name)
        assert callable(getattr(module, attr, None)), f"{name} = {target}: no callable {attr!r}"


def test_licence_file_names_the_code_licence_and_credits_the_data():
    text = (REPO_ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "ai_economist contributors" in text
    for credit in (
        "OxCGRT",
        "Johns Hopkins",
        "Our World in Data",
        "Bureau of Labor Statistics",
        "Public domain",
        "CRFB",
        "AI Economist 1.7.1",
        "salesforce.com",
    ):
        assert credit in text, credit
    assert text.count("CC BY 4.0") >= 3


def test_licence_is_part_of_the_package_metadata(tmp_path):
    project = tmp_path / "project"
    (project / "ai_economist").mkdir(parents=True)
    (project / "ai_economist" / "__init__.py").write_text("")
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(REPO_ROOT / name, project / name)
    out = tmp_path / "out"
    out.mkdir()
    code = (
        "import setuptools.build_meta as b, sys; "
        f"print(b.prepare_metadata_for_build_wheel({str(out)!r}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    dist_info = out / result.stdout.strip().splitlines()[-1]
    metadata = (dist_info / "METADATA").read_text()
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "License-File: LICENSE" in metadata
    assert (dist_info / "licenses" / "LICENSE").read_text() == (REPO_ROOT / "LICENSE").read_text()
    entry_points = (dist_info / "entry_points.txt").read_text()
    for line in entry_points.splitlines():  # every console script names an existing module
        if " = " in line:
            module = line.split(" = ")[1].split(":")[0]
            assert (REPO_ROOT / (module.replace(".", "/") + ".py")).is_file(), line
    assert "ai-economist-simulate = ai_economist.simulate.cli:main" in entry_points


def readme_section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def test_readme_simulator_snippets_run_with_the_plain_install():
    """README: ``pip install -e .`` is the simulator: its snippets run without any extra."""
    assert re.search(r"pip install -e \.\s+# simulator", README)
    blocks = re.findall(r"```python\n(.*?)```", readme_section("Using the simulator"), re.S)
    assert len(blocks) == 2
    code = "\n".join(blocks) + "\nassert rewards.shape == (1000, 51)\nprint('ok')\n"
    assert run_without(modules_outside([]), code).strip().endswith("ok")


def test_numpy_backend_without_torch_keeps_numpy_buffers():
    code = """
import numpy as np
from ai_economist import foundation
from ai_economist.foundation.env_wrapper import FoundationEnvWrapper
from ai_economist.foundation.scenarios.covid19.configs import TRAINING_ENV_CONFIG, env_config

for backend in ("numpy", "cpu"):
    env = foundation.make_env_instance(
        "CovidAndEconomySimulation", **env_config(TRAINING_ENV_CONFIG, episode_length=3)
    )
    wrapper = FoundationEnvWrapper(env, num_envs=2, env_backend=backend)
    wrapper.reset_all_envs()
    for _ in range(3):
        wrapper.actions("a")[...] = 10
        wrapper.step_all_envs({"a": np.full((2, 51), 10.0)})
    assert isinstance(wrapper.observations("a"), np.ndarray), backend
    assert wrapper.device == "cpu" and wrapper.done().tolist() == [1, 1]
    assert (wrapper.pull("stringency_level") == 10).all()
    if backend == "numpy":
        assert "backend_state" in wrapper.state_dict()
    wrapper.reset_only_done_envs()
    assert wrapper.pull("_timestep_").tolist() == [0, 0]
print("ok")
"""
    assert run_without(["torch"], code).strip().endswith("ok")


def test_without_torch_the_trainer_says_what_to_install():
    code = """
from ai_economist.warp_drive.data_manager import CUDADataManager
try:
    CUDADataManager(num_agents=2, episode_length=3, num_envs=1, device="cpu")
except ImportError as err:
    print(err)
"""
    assert "Install it with" in run_without(["torch"], code)


@pytest.mark.parametrize(
    "path",
    ["README.md", "tests/fixtures/golden/README.md"]
    + sorted(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "docs").rglob("*.md")),
)
def test_docs_cite_only_files_of_this_repository(path):
    text = (REPO_ROOT / path).read_text()
    outside = re.findall(r"(?:\.\./shared\S*|/work/\S+|(?<![\w.])/home/\S+)", text)
    assert not outside, f"{path} cites paths outside the repository: {outside}"


def test_ci_runs_the_linters():
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make lint$", ci, re.M), ".ci/run must call `make lint`"
    makefile = (REPO_ROOT / "Makefile").read_text()
    lint = makefile[makefile.index("\nlint:") :].split("\n\n")[0]
    assert "ruff check" in lint and "ruff format --check" in lint
