"""Proxy sizes: where a loop nest runs for seconds per call, the race of CPU variants ranks them at
sizes at which it does a fraction of its work, then times only the fastest there at full size.

Only a *repetition count* shrinks — a size that barely changes where the loops reach in memory, a
stencil's time steps (``tsteps``, ``tmax``) — so that the arrays, what one step does to the
caches and how often the threads meet per step stay as they are, and the time scales with the
count. Smaller arrays would rank the variants by what fits caches it does not, and by how the
threads' start-up weighs against less work (heat-3d at n=50 instead of 120 ranked its untiled
register tiles first, 10x off), so a nest without a repetition count gets no proxy::

    proxy_sizes(scop, {"tsteps": 500, "n": 1300}, 0.1)   # {"tsteps": 50, "n": 1300}
    proxy_sizes(scop, {"n": 2000}, 0.1)                  # {}: no repetition count
"""

from __future__ import annotations

from collections.abc import Mapping

from core_compiler.runtime.footprint import box_volume
from core_compiler.scop.model import Scop

REPETITION_SHARE = 0.01  # a size whose halving changes the elements reached by less than this
MIN_SIZE = 2


def proxy_sizes(scop: Scop, sizes: Mapping[str, int], ratio: float) -> dict[str, int]:
    """`sizes` with the repetition counts of the loop nest shrunk so that it does about `ratio`
    (< 1) of its work; {} where nothing shrinks (no repetition count, or too small already)."""
    mine = {p: v for p, v in sizes.items() if p in scop.params and v > MIN_SIZE}
    repeats = repetition_counts(scop, sizes, mine)
    shrunk = {p: max(MIN_SIZE, round(mine[p] * ratio ** (1 / len(repeats)))) for p in repeats}
    if all(shrunk[p] >= sizes[p] for p in shrunk):
        return {}
    return {**sizes, **shrunk}


def repetition_counts(scop: Scop, sizes: Mapping[str, int], candidates: Mapping[str, int]) -> tuple[str, ...]:
    """The `candidates` whose halving leaves the boxes around what the nest touches of each array
    nearly as they are (`footprint.box_volume`, within `REPETITION_SHARE`): fdtd-2d's ``tmax``
    also reads ``_fict_[t]``, 500 elements of 3.6 million."""
    whole = box_volume(scop, sizes)
    if whole == 0:
        return ()
    return tuple(
        p for p, v in candidates.items()
        if abs(box_volume(scop, {**sizes, p: v // 2}) - whole) < REPETITION_SHARE * whole
    )  # fmt: skip
