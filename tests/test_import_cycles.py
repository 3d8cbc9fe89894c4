"""No import circle in ``ai_economist``, counting imports at module level and inside functions.

The imports are read statically (``ast``): relative imports are resolved, and
``from pkg import name`` counts as an import of ``pkg.name`` when that is a submodule.  A
package's own ``__init__`` is not counted as imported by its submodules (Python runs it first,
but a submodule depending on its package's ``__init__`` is not a circle in the code's design).
Imports under a module-level ``if __name__ == "__main__":`` are not counted either: they run
only when the file is the program (``python -m``), as module ``__main__``, never on import.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "ai_economist"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def module_name(path: Path) -> str:
    """The dotted module name of a file under ``ROOT``."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _is_main_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":`` at module level."""
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``module`` imports (anywhere in the file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tree.body = [node for node in tree.body if not _is_main_block(node)]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(module, is_package, node)
            # ``from pkg import name``: the submodule pkg.name when there is one, else pkg.
            subs = [f"{base}.{alias.name}" for alias in node.names]
            targets = [s if s in modules else base for s in subs]
        else:
            continue
        for target in targets:
            # ``import a.b.c`` imports a.b.c; keep the longest prefix that is ours.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_circle_path(graph, comp) for comp in components]


def _circle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest circle through the component's first module, for the failure message."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return paths[node] + [start]
            if nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return component  # unreachable for a strongly connected component


def test_the_graph_sees_lazy_relative_and_submodule_imports(tmp_path, monkeypatch):
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "sub" / "b.py").write_text("from ai_economist.sub import c\n")
    (pkg / "sub" / "c.py").write_text("import ai_economist.sub.a\n")
    (pkg / "d.py").write_text(
        "from .sub.a import f\n\nif __name__ == '__main__':\n    from ai_economist import e\n"
    )
    (pkg / "e.py").write_text("from ai_economist import d\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", pkg)
    graph = import_graph()
    assert graph["ai_economist.sub.a"] == {"ai_economist.sub.b"}
    assert graph["ai_economist.sub.b"] == {"ai_economist.sub.c"}
    assert graph["ai_economist.d"] == {"ai_economist.sub.a"}  # not e: only as a program
    assert graph["ai_economist.e"] == {"ai_economist.d"}
    assert find_cycles(graph) == [
        ["ai_economist.sub.a", "ai_economist.sub.b", "ai_economist.sub.c", "ai_economist.sub.a"]
    ]


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)
