"""Counted loops for Numba device functions: ``for i in range(...)`` as a ``while`` loop.

Numba lowers ``for i in range(start, stop, step)`` through its range iterator (a remaining
count, an exhausted flag, the value it yields), which LLVM cannot turn back into a plain
induction variable: every iteration keeps the iterator's compare-and-selects, and because
``i`` is then not known to be non-negative every index made from it keeps Numba's
negative-index wraparound (a compare, a select and an add per index and dimension, on int64).
The same loop written ``i = start; while i < stop: ...; i += step`` is an ordinary counted
loop: LLVM proves ``0 <= i < stop``, drops the wraparound, strength-reduces the addresses and
unrolls. On gather-trade-build's economy step kernel (``benchmarks/numba_ptx_report.py``)
that removes about a third of the PTX instructions.

:func:`device_jit` is ``cuda.jit(device=True)`` of the function with its range loops
rewritten so (:func:`while_ranges`). The rewrite keeps ``range``'s meaning wherever it is
applied: start, stop and step are evaluated once, before the loop, as int64 (``range``'s
integer type in Numba; Python ints in the simulator); ``continue`` advances the counter
first. It is applied only where that is exact: a ``for`` over ``range`` with one to three
arguments, a plain name as the target, no ``else``, a step that is not a negative literal
(runtime steps must be positive: block sizes here), and a loop variable that the body does
not assign and nothing outside the loop reads. Other loops stay as written.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from collections.abc import Callable
from typing import Any

from ai_economist.warp_drive.errors import cudasim_enabled, require_numba_cuda

INT64_NAME = "__while_ranges_int64__"  # the int64 cast's name in a rewritten function's module
_COUNTER = itertools.count()


def _names(nodes: list[ast.AST], ctx: type) -> set[str]:
    """Names used with context ``ctx`` (``ast.Load`` / ``ast.Store``) anywhere in ``nodes``."""
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)
    }


def _range_args(node: ast.For) -> tuple[ast.expr, ast.expr, ast.expr] | None:
    """``(start, stop, step)`` of a ``for`` loop the rewrite may take, else ``None``."""
    it = node.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and isinstance(node.target, ast.Name) and not node.orelse and not it.keywords
            and 1 <= len(it.args) <= 3):  # fmt: skip
        return None
    args = it.args
    if len(args) == 1:
        return ast.Constant(0), args[0], ast.Constant(1)
    step = args[2] if len(args) == 3 else ast.Constant(1)
    if isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub):
        return None
    if isinstance(step, ast.Constant) and not (isinstance(step.value, int) and step.value > 0):
        return None
    return args[0], args[1], step


class _AdvanceOnContinue(ast.NodeTransformer):
    """``continue`` of this loop (not of loops inside it) becomes ``<advance>; continue``."""

    def __init__(self, advance: ast.stmt) -> None:
        self.advance = advance

    def visit_For(self, node: ast.For) -> ast.For:
        return node

    def visit_While(self, node: ast.While) -> ast.While:
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return node

    def visit_Continue(self, node: ast.Continue) -> list[ast.stmt]:
        return [ast.copy_location(_clone(self.advance), node), node]


def _clone(node: ast.stmt) -> ast.stmt:
    return ast.parse(ast.unparse(node)).body[0]


class _WhileRanges(ast.NodeTransformer):
    """The rewrite of one function's range loops (see the module docstring)."""

    def __init__(self, function: ast.FunctionDef, cast: bool) -> None:
        self.function = function
        self.cast = cast
        self.loops = [n for n in ast.walk(function) if isinstance(n, ast.For)]

    def _read_outside(self, loop: ast.For, name: str) -> bool:
        """Whether ``name`` is read outside every loop that binds it (its value after a
        ``while`` loop differs from a ``range`` loop's)."""
        binding = [n for n in self.loops
                   if isinstance(n.target, ast.Name) and n.target.id == name]  # fmt: skip
        inside = {id(x) for n in binding for x in ast.walk(n)}
        return any(isinstance(x, ast.Name) and x.id == name and isinstance(x.ctx, ast.Load)
                   and id(x) not in inside for x in ast.walk(self.function))  # fmt: skip

    def _int(self, expr: ast.expr) -> ast.expr:
        if not self.cast:
            return expr
        return ast.Call(ast.Name(INT64_NAME, ast.Load()), [expr], [])

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        args = _range_args(node)
        if args is None:
            return node
        var = node.target.id
        if var in _names(node.body, ast.Store) or self._read_outside(node, var):
            return node
        start, stop, step = args
        k = next(_COUNTER)
        stop_name, step_name = f"_range_stop_{k}", f"_range_step_{k}"
        advance = ast.AugAssign(ast.Name(var, ast.Store()), ast.Add(),
                                ast.Name(step_name, ast.Load()))  # fmt: skip
        body: list[ast.stmt] = []
        for stmt in node.body:
            out = _AdvanceOnContinue(advance).visit(stmt)
            body.extend(out if isinstance(out, list) else [out])
        body.append(advance)
        test = ast.Compare(ast.Name(var, ast.Load()), [ast.Lt()], [ast.Name(stop_name, ast.Load())])
        new = [
            ast.Assign([ast.Name(stop_name, ast.Store())], self._int(stop)),
            ast.Assign([ast.Name(step_name, ast.Store())], self._int(step)),
            ast.Assign([ast.Name(var, ast.Store())], self._int(start)),
            ast.While(test, body, []),
        ]
        for stmt in new:
            ast.copy_location(stmt, node)
        return [ast.fix_missing_locations(stmt) for stmt in new]


def while_ranges(fn: Callable, cast: bool | None = None) -> Callable:
    """``fn`` with its range loops as counted ``while`` loops (same globals, same name).

    Args:
        fn: a plain Python function (its source must be available).
        cast: wrap start, stop and step in ``numba.int64`` (default: unless
            ``NUMBA_ENABLE_CUDASIM=1``, where ``range`` yields Python ints).
    """
    cast = (not cudasim_enabled()) if cast is None else cast
    source = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(source)
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        raise TypeError(f"while_ranges needs a function definition, got {type(function).__name__}")
    function.decorator_list = []
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)
    tree = ast.fix_missing_locations(_WhileRanges(function, cast).visit(tree))
    if cast:
        import numba

        fn.__globals__.setdefault(INT64_NAME, numba.int64)
    namespace: dict[str, Any] = {}
    closure = inspect.getclosurevars(fn).nonlocals
    if closure:
        raise TypeError(f"while_ranges: {fn.__name__} is a closure (over {sorted(closure)})")
    exec(compile(tree, inspect.getsourcefile(fn) or "<while_ranges>", "exec"),  # noqa: S102
         fn.__globals__, namespace)  # fmt: skip
    new = namespace[fn.__name__]
    new.__doc__, new.__module__, new.__qualname__ = fn.__doc__, fn.__module__, fn.__qualname__
    new.__wrapped_range_loops__ = fn
    return new


def device_jit(fn: Callable | None = None, **options: Any) -> Any:
    """``cuda.jit(device=True, **options)`` of :func:`while_ranges`\\ ``(fn)``; usable as
    ``@device_jit`` or ``@device_jit(inline=...)``."""
    cuda = require_numba_cuda()

    def build(f: Callable) -> Any:
        return cuda.jit(device=True, **options)(while_ranges(f))

    return build if fn is None else build(fn)
