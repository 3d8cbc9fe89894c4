"""The COVID-19 scenario keeps its parts (model, env, declaration, backends, kernels, components,
training) in named subpackages; 1.7.1's paths work, moved paths warn for one release."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ai_economist.foundation as foundation
from ai_economist.foundation.scenarios.covid19.declaration import gpu_state

FOUNDATION = Path(foundation.__file__).parent

#: 1.7.1's path of the components: the one alias kept (the same module object).
ALIASES = {
    "ai_economist.foundation.components.covid19_components": (
        "ai_economist.foundation.scenarios.covid19.components.covid19_components"
    ),
}
#: Paths of earlier versions of this project that served no 1.7.1 import: removed.
REMOVED = (
    "ai_economist.foundation.components.covid19_components_numba",
    "ai_economist.foundation.scenarios.covid19.covid19_numba",
    "ai_economist.foundation.scenarios.covid19.covid19_numba_fused",
)
SCENARIO = "ai_economist.foundation.scenarios.covid19"
#: The scenario's modules moved into its named parts: old path -> new path (deprecated).
DEPRECATED = {
    f"{SCENARIO}.dynamics": f"{SCENARIO}.model.dynamics",
    f"{SCENARIO}.simulation": f"{SCENARIO}.model.simulation",
    f"{SCENARIO}.one_env_step": f"{SCENARIO}.env.one_env_step",
    f"{SCENARIO}.gpu_state": f"{SCENARIO}.declaration.gpu_state",
    f"{SCENARIO}.gpu_env": f"{SCENARIO}.declaration.gpu_env",
    f"{SCENARIO}.gpu_backend": f"{SCENARIO}.backends.gpu_backend",
    f"{SCENARIO}.gpu_consistency": f"{SCENARIO}.backends.gpu_consistency",
    "ai_economist.training.demo": f"{SCENARIO}.training.demo",
    "ai_economist.training.fixed_policies": f"{SCENARIO}.training.fixed_policies",
}


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_generic_component_package_imports_no_scenario():
    for path in (FOUNDATION / "components").glob("*.py"):
        if path.name.startswith("covid19_"):
            continue  # the thin re-export modules of the old paths
        assert not any("scenarios" in m for m in _imported_modules(path)), path.name


def test_the_1_7_1_component_path_is_the_moved_module():
    for old, new in ALIASES.items():
        assert importlib.import_module(old) is importlib.import_module(new), old


@pytest.mark.parametrize("old", REMOVED)
def test_alias_paths_of_no_1_7_1_import_are_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


@pytest.mark.parametrize("old", sorted(DEPRECATED))
def test_moved_paths_warn_naming_the_new_path_and_are_the_same_module(old):
    new = DEPRECATED[old]
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{re.escape(old)} moved to {re.escape(new)}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


@pytest.mark.parametrize(
    "old, new, says",
    [
        ("ai_economist.training.demo", f"{SCENARIO}.training.demo", "--results_dir"),
        (f"{SCENARIO}.gpu_consistency", f"{SCENARIO}.backends.gpu_consistency", "--backend"),
    ],
    ids=["make-demo", "consistency-command"],
)
def test_python_m_at_the_old_path_still_runs_and_warns(old, new, says):
    proc = subprocess.run(
        [sys.executable, "-m", old, "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert f"DeprecationWarning: {old} moved to {new}" in proc.stderr
    assert says in proc.stdout


def test_components_register_under_their_names():
    from ai_economist.foundation.scenarios.covid19 import components

    for name in (
        "ControlUSStateOpenCloseStatus",
        "FederalGovernmentSubsidy",
        "VaccinationCampaign",
    ):
        assert foundation.components.get(name) is getattr(components, name)


def test_cuda_sources_are_at_the_paths_of_1_7_1():
    """The WarpDrive-era instructions register ``covid19_build.cu`` by this path."""
    scenario = FOUNDATION / "scenarios" / "covid19"
    assert gpu_state.BUILD_SOURCE == scenario / "covid19_build.cu"
    assert {p.relative_to(FOUNDATION).as_posix() for p in gpu_state.CUDA_SOURCES} == {
        "scenarios/covid19/covid19_build.cu",
        "scenarios/covid19/covid19_env_step.cu",
        "components/covid19_components_step.cu",
        "scenarios/covid19/kernels/covid19_fused_step.cu",
        "scenarios/covid19/kernels/covid19_common.cuh",
    }
    assert all(p.is_file() for p in gpu_state.CUDA_SOURCES)
    found = {p.resolve() for p in scenario.rglob("*.cu*")}
    found |= {p.resolve() for p in (FOUNDATION / "components").rglob("*.cu*")}
    assert found == {p.resolve() for p in gpu_state.CUDA_SOURCES}  # no copies, no aliases
