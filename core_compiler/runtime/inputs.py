"""Deterministic inputs for a layout: the same seed, name, shape and dtype give the same bytes.

Each array draws from its own generator, ``numpy.random.default_rng([seed, crc32(name)])``, so
adding or reordering parameters does not change the other arrays.

- floating arrays: uniform in [0.5, 1.5) — positive and away from zero, so that ``sqrt``, ``log``
  and divisions by array elements stay finite. Square matrices (the last two dimensions equal,
  n of them) also get ``DIAGONAL_BOOST * n`` added to their diagonal: every row is then strictly
  diagonally dominant, so the symmetric matrix built from either triangle is positive definite
  (Gershgorin) and Cholesky, LU without pivoting and triangular solves stay finite;
- integer arrays: integers in [1, 10) — small, and never 0, so integer divisions by elements do
  not trap; arrays used as indices are the caller's business (pass them explicitly);
- ``_Bool`` arrays: random 0/1.
"""

from __future__ import annotations

import zlib

import numpy as np

from core_compiler.errors import LayoutError
from core_compiler.runtime.signature import MAX_ARRAY_BYTES, ArraySlot, Layout

FLOAT_RANGE = (0.5, 1.5)
INT_RANGE = (1, 10)  # half-open
DIAGONAL_BOOST = 1.5  # the largest off-diagonal value
ALIGNMENT = 64  # bytes: a cache line, an AVX-512 vector (trmm's register tiles run 1.7x slower on 16)


def aligned_empty(shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialized C-ordered array whose first element starts a cache line, as a C compiler
    places a large static array: the times of vector code, the original's and hexplore's, then do
    not depend on where malloc put the arrays."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    buf = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    start = -buf.ctypes.data % ALIGNMENT
    return buf[start : start + nbytes].view(dt).reshape(shape)


def make_inputs(layout: Layout, seed: int = 0) -> dict[str, np.ndarray]:
    """A fresh C-contiguous array per array parameter of `layout`, keyed by parameter name."""
    return {slot.name: make_array(slot, seed) for slot in layout.arrays}


def make_array(slot: ArraySlot, seed: int = 0) -> np.ndarray:
    """Random values (seeded by `seed` and the name), or a constant table's own."""
    if slot.size * slot.dtype.itemsize > MAX_ARRAY_BYTES:
        gib = slot.size * slot.dtype.itemsize / (1 << 30)
        raise LayoutError(
            f"array {slot.name!r} would take {gib:.3g} GiB at these sizes (shape {slot.shape}); hexplore "
            f"makes arrays of at most {MAX_ARRAY_BYTES >> 30} GiB: choose smaller sizes"
        )
    if slot.values is not None:
        return np.array(slot.values, dtype=slot.dtype).reshape(slot.shape)
    rng = np.random.default_rng([seed, zlib.crc32(slot.name.encode())])
    kind = slot.dtype.kind
    if kind == "f":
        data = _boost_diagonal(rng.uniform(*FLOAT_RANGE, size=slot.shape))
    elif kind == "b":
        data = rng.integers(0, 2, size=slot.shape)
    else:
        data = rng.integers(*INT_RANGE, size=slot.shape)
    return np.ascontiguousarray(data, dtype=slot.dtype)


def _boost_diagonal(data: np.ndarray) -> np.ndarray:
    if data.ndim >= 2 and data.shape[-1] == data.shape[-2]:
        n = data.shape[-1]
        idx = np.arange(n)
        data[..., idx, idx] += DIAGONAL_BOOST * n
    return data
