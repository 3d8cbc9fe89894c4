"""The counter-based random numbers of the gather-trade-build GPU env (numpy, the truth).

Every draw is a pure function of ``(env seed, episode, step, stream, index)``: no generator
state, so the numpy reference, the CUDA C kernels (``kernels/gtb_rng.cuh``) and the Numba
kernels (``gtb_world_numba.py``) draw the same numbers in any order and any thread.

``draw_bits`` chains Chris Wellons' ``lowbias32`` integer hash over the five words (32-bit
arithmetic; the 32-bit multiply is written with 16-bit halves so that int64 arithmetic in
numpy and Numba never overflows); ``uniform`` keeps the top 24 bits, ``k / 2**24`` in
``[0, 1)``, exact in float32 and float64, so a comparison ``u < p`` reads the same
everywhere. Integers below ``n`` are ``(bits >> 8) * n >> 24`` (64-bit product).

Streams and their indices (episode = the env's ``completions``; step = 0 at a reset, else the
step's ``_timestep_`` after its increment):

* ``place``: reset, agent a's try k: row from index ``2 (a T + k)``, column from ``+ 1``
  (T = :data:`PLACEMENT_TRIES`);
* ``build_skill`` / ``gather_skill``: reset, agent a: indices ``2a`` and ``2a + 1``;
* ``rank``: reset with fixed four skills and corners, agent a's sort key (index a);
* ``move_order``: step, agent a's sort key (index a): the move order sorts the keys, ties to
  the lower agent;
* ``gather``: step, agent a collecting resource j (Stone 0, Wood 1): index ``2a + j``;
* ``regrow``: step, source cell at flat index i of the env's ``resource_maps``: index i.
"""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
SEED_SALT = 0x9E3779B9
HASH_M1, HASH_M2 = 0x7FEB352D, 0x846CA68B
INV_2_24 = 1.0 / 16777216.0
PLACEMENT_TRIES = 202  # MAX_PLACEMENT_TRIES + 2, as the array model
STREAMS = {
    "place": 1,
    "build_skill": 2,
    "gather_skill": 3,
    "rank": 4,
    "move_order": 5,
    "gather": 6,
    "regrow": 7,
}


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64) & MASK32


def mul32(x: np.ndarray, c: int) -> np.ndarray:
    """``x * c mod 2**32`` for ``0 <= x < 2**32`` (int64, without overflow)."""
    lo, hi = c & 0xFFFF, c >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & MASK32


def hash32(x: np.ndarray) -> np.ndarray:
    """``lowbias32``: ``x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b;
    x ^= x >> 16`` (mod 2**32)."""
    x = _i64(x)
    x = x ^ (x >> 16)
    x = mul32(x, HASH_M1)
    x = x ^ (x >> 15)
    x = mul32(x, HASH_M2)
    return x ^ (x >> 16)


def draw_bits(seed, episode, step, stream: int, index) -> np.ndarray:
    """32 random bits (int64 in ``[0, 2**32)``) of ``(seed, episode, step, stream, index)``;
    the arguments broadcast (``stream`` < 256, ``index`` < 2**24)."""
    h = hash32(_i64(seed) ^ SEED_SALT)
    h = hash32(h ^ _i64(episode))
    h = hash32(h ^ _i64(step))
    return hash32(h ^ (((int(stream) & 0xFF) << 24) | (_i64(index) & 0xFFFFFF)))


def uniform(seed, episode, step, stream: int, index) -> np.ndarray:
    """float64 uniforms ``k / 2**24`` in ``[0, 1)`` (see :func:`draw_bits`)."""
    return (draw_bits(seed, episode, step, stream, index) >> 8) * INV_2_24


def below(bits: np.ndarray, n: int) -> np.ndarray:
    """int64 in ``[0, n)`` from :func:`draw_bits` output (``0 < n < 2**31``)."""
    return ((bits >> 8) * int(n)) >> 24


def pareto(u: np.ndarray, shape: float) -> np.ndarray:
    """Lomax (numpy's ``pareto``) by inversion: ``(1 - u)^(-1/shape) - 1``."""
    return np.expm1(-np.log1p(-u) / shape)


def lognormal(u1: np.ndarray, u2: np.ndarray, mean: float, sigma: float) -> np.ndarray:
    """``exp(mean + sigma z)``, z standard normal by Box-Muller from two uniforms."""
    z = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
    return np.exp(mean + sigma * z)


def rank_order(keys: np.ndarray) -> np.ndarray:
    """int (..., A): slot -> agent, sorting ``keys`` (..., A) ascending, ties to the lower
    agent (a stable sort)."""
    return np.argsort(keys, axis=-1, kind="stable")
