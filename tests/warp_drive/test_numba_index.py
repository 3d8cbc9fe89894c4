"""``numba_index.index_divmod`` equals Python's ``divmod`` on non-negative indices (in the
simulator, where device functions run as Python)."""

from __future__ import annotations

import pytest

from ai_economist.warp_drive.errors import cudasim_enabled

pytestmark = pytest.mark.skipif(not cudasim_enabled(), reason="set NUMBA_ENABLE_CUDASIM=1")


@pytest.mark.parametrize("n", [1, 2, 11, 121, 625, 2**31 + 5])
def test_index_divmod_is_divmod(n):
    from ai_economist.warp_drive.numba_index import index_divmod

    for p in [q for q in (0, 1, n - 1, n, n + 1, 7 * n + 3, 2**32 - 1) if q < 2**32]:
        assert tuple(int(v) for v in index_divmod(p, n)) == divmod(p, n), (p, n)


def test_hw_index_is_the_index():
    from ai_economist.warp_drive.numba_index import hw_index

    assert [int(hw_index(i)) for i in (0, 1, 31, 2**31 - 1)] == [0, 1, 31, 2**31 - 1]
