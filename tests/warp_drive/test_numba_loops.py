"""``numba_loops.while_ranges``: range loops become counted while loops with the same
results, and loops it cannot rewrite exactly stay as written."""

from __future__ import annotations

import numpy as np
import pytest

from ai_economist.warp_drive.numba_loops import INT64_NAME, while_ranges


def _walk(n, start, stop, step, out):
    """Every loop form the rewrite takes: one to three arguments, continue, break, nesting."""
    total = 0
    for i in range(n):
        if i % 3 == 1:
            continue
        total += i
        for j in range(start, stop):
            if j == 2:
                continue
            if j > 6:
                break
            out[i, j] += i * 10 + j
    for k in range(start, stop, step):
        total = total * 3 + k
    return total


def _after(n):
    """The loop variable is read after the loop: ``range`` leaves its last value."""
    i = -5
    for i in range(n):  # noqa: B007 - its value after the loop is the point
        pass
    return i


def _down(n):
    """A negative step: not a counted upward loop."""
    seen = []
    for i in range(n, 0, -1):
        seen.append(i)
    return seen


def _assigns(n):
    """The body assigns the loop variable: ``range`` would reset it each iteration."""
    total = 0
    for i in range(n):
        total += i
        i = 100
    return total


def _has_range(fn) -> bool:
    return "range" in fn.__code__.co_names


@pytest.mark.parametrize("cast", [False, True])
@pytest.mark.parametrize(("n", "start", "stop", "step"),
                         [(0, 0, 0, 1), (5, 0, 9, 1), (7, 3, 12, 4), (4, 5, 2, 2)])  # fmt: skip
def test_while_ranges_same_results(cast, n, start, stop, step):
    new = while_ranges(_walk, cast=cast)
    assert _has_range(_walk) and not _has_range(new)
    want, got = np.zeros((max(n, 1), 13)), np.zeros((max(n, 1), 13))
    assert new(n, start, stop, step, got) == _walk(n, start, stop, step, want)
    np.testing.assert_array_equal(got, want)
    if cast:
        assert INT64_NAME in new.__code__.co_names


@pytest.mark.parametrize("fn", [_after, _down, _assigns])
def test_while_ranges_keeps_loops_it_cannot_rewrite(fn):
    new = while_ranges(fn, cast=False)
    assert _has_range(new)
    for n in (0, 1, 4):
        assert new(n) == fn(n)


def test_while_ranges_keeps_name_doc_and_lines():
    new = while_ranges(_walk, cast=False)
    assert new.__name__ == _walk.__name__ and new.__doc__ == _walk.__doc__
    assert new.__code__.co_firstlineno == _walk.__code__.co_firstlineno
