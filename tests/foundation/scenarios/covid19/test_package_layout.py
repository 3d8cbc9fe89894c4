"""The COVID-19 scenario keeps its components and kernels; the old import paths still work."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import ai_economist.foundation as foundation
from ai_economist.foundation.scenarios.covid19 import gpu_state

FOUNDATION = Path(foundation.__file__).parent

MOVED = {
    "ai_economist.foundation.components.covid19_components": (
        "ai_economist.foundation.scenarios.covid19.components.covid19_components"
    ),
    "ai_economist.foundation.components.covid19_components_numba": (
        "ai_economist.foundation.scenarios.covid19.components.covid19_components_numba"
    ),
    "ai_economist.foundation.scenarios.covid19.covid19_numba": (
        "ai_economist.foundation.scenarios.covid19.kernels.covid19_numba"
    ),
    "ai_economist.foundation.scenarios.covid19.covid19_numba_fused": (
        "ai_economist.foundation.scenarios.covid19.kernels.covid19_numba_fused"
    ),
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


def test_old_import_paths_are_the_moved_modules():
    for old, new in MOVED.items():
        assert importlib.import_module(old) is importlib.import_module(new), old


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
    found = {p.resolve() for p in FOUNDATION.rglob("*.cu*")}
    assert found == {p.resolve() for p in gpu_state.CUDA_SOURCES}  # no copies, no aliases
