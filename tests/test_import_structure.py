"""The ground floor imports nothing above it: no module under ``ai_economist/warp_drive/``
imports ``ai_economist.training``, ``ai_economist.foundation`` or ``ai_economist.example_envs``,
at the top or lazily inside a function (read statically, with ``ast``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ai_economist"
GROUND_FLOOR = PACKAGE / "warp_drive"
FORBIDDEN = ("ai_economist.training", "ai_economist.foundation", "ai_economist.example_envs")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``path``, relative ones resolved;
    ``from a import b`` yields ``a.b`` too (``b`` may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def forbidden_imports(root: Path) -> list[str]:
    bad = []
    for path in sorted(root.rglob("*.py")):
        for line, name in imported_modules(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}")
    return bad


def test_the_ground_floor_imports_no_scenario_training_or_example_module():
    bad = forbidden_imports(GROUND_FLOOR)
    assert not bad, "warp_drive/ must not import these (move the code instead):\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import ai_economist.training.config\n", True),
        ("def f():\n    from ai_economist.foundation import base\n", True),  # lazy
        ("from ai_economist import example_envs\n", True),
        ("from ... import training\n", True),  # relative, from warp_drive/sub/m.py
        ("from ai_economist.warp_drive import registry\n", False),
        ("from ai_economist.trainingsets import x\n", False),
    ],
)
def test_the_check_sees_every_form_of_import(tmp_path, monkeypatch, source, expected):
    pkg = tmp_path / "ai_economist" / "warp_drive" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "m.py").write_text(source)
    monkeypatch.setattr(f"{__name__}.PACKAGE", tmp_path / "ai_economist")
    assert bool(forbidden_imports(tmp_path / "ai_economist" / "warp_drive")) is expected
