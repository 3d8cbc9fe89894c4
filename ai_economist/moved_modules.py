"""Old module paths that keep working for one release after a move, with a DeprecationWarning.

``redirect(package, {old_name: new_module})`` makes ``import <package>.<old_name>`` warn once
(naming the new path) and return the module at its new path, the same object (no copy, so
monkeypatches and registrations are shared).  The table lives in the package that moved the
modules; nothing else is aliased.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def moved_message(old: str, new: str) -> str:
    """The DeprecationWarning text of a moved module."""
    return f"{old} moved to {new}; the old path is removed in the next release"


def warn_moved(old: str, new: str, stacklevel: int | None = None) -> None:
    """Warn that module ``old`` is now ``new``; by default the warning names the line that
    imports ``old`` (past importlib's frames, this module's and ``old``'s own)."""
    if stacklevel is None:
        stacklevel = _importer_level(old)
    warnings.warn(moved_message(old, new), DeprecationWarning, stacklevel=stacklevel)


def deprecated_attributes(
    module: str, attributes: Mapping[str, tuple[str, Callable[[], Any]]]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names kept one release: ``attributes`` maps each name to
    ``(advice, value)``; reading one warns ``"<module>.<name> is deprecated: <advice>"``
    (a DeprecationWarning naming the reading line) and returns ``value()``."""

    def __getattr__(name: str) -> Any:
        if name not in attributes:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        advice, value = attributes[name]
        warnings.warn(f"{module}.{name} is deprecated: {advice}", DeprecationWarning, stacklevel=2)
        return value()

    return __getattr__


def _importer_level(old: str) -> int:
    """``warnings.warn``'s stacklevel, called from here, of the frame importing ``old``."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        internal = frame.f_code.co_filename.startswith("<frozen importlib")
        if not internal and frame.f_code.co_filename != __file__:
            if frame.f_globals.get("__name__") != old:
                return level
        frame = frame.f_back
        level += 0 if internal else 1  # warnings.warn skips importlib's frames itself
    return level


class _MovedLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a placeholder, replaced in sys.modules by exec_module

    def get_code(self, fullname: str):
        """``python -m <old>``: warn, then run the new module as ``__main__``."""
        source = (
            "import runpy\n"
            "from ai_economist.moved_modules import warn_moved\n"
            f"warn_moved({fullname!r}, {self.new!r}, stacklevel=2)\n"
            f"runpy.run_module({self.new!r}, run_name='__main__', alter_sys=True)\n"
        )
        return compile(source, f"<moved module {fullname}>", "exec")

    def exec_module(self, module: ModuleType) -> None:
        warn_moved(module.__name__, self.new)
        sys.modules[module.__name__] = importlib.import_module(self.new)


class _MovedFinder(importlib.abc.MetaPathFinder):
    def __init__(self, table: Mapping[str, str]) -> None:
        self.table = dict(table)

    def find_spec(self, fullname, path=None, target=None):
        new = self.table.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(new))


def redirect(package: str, moved: Mapping[str, str]) -> None:
    """Serve ``<package>.<old>`` from ``moved[old]`` (a full module name), with a warning."""
    table = {f"{package}.{old}": new for old, new in moved.items()}
    for finder in sys.meta_path:
        if isinstance(finder, _MovedFinder):
            finder.table.update(table)
            return
    sys.meta_path.insert(0, _MovedFinder(table))
