"""Where the GPU mapping puts an array, for hovers. The editor's server has them from the offload
decisions (`explorer/offload.py`, computed in the back-end worker: `placements`); a mapping made
in this process (`gpu_mapping`: tens of milliseconds to seconds per SCoP) is kept while its
analysis lives."""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from core_compiler.analysis import ScopAnalysis

if TYPE_CHECKING:
    from core_compiler.transform.gpu_mapping import GpuProgram

_CACHE: weakref.WeakKeyDictionary[ScopAnalysis, GpuProgram | None] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def gpu_mapping(sa: ScopAnalysis) -> GpuProgram | None:
    with _LOCK:
        if sa in _CACHE:
            return _CACHE[sa]
    from core_compiler.pipeline import gpu_program  # the back end loads when first used

    try:
        gpu: GpuProgram | None = gpu_program(sa)
    except Exception:  # the hover then says the placement is unknown; the views show the error
        gpu = None
    with _LOCK:
        _CACHE[sa] = gpu
    return gpu


def mapped(sa: ScopAnalysis) -> bool:
    """Whether `sa`'s GPU mapping is computed already (`placement` then costs nothing)."""
    with _LOCK:
        return sa in _CACHE


def placement(sa: ScopAnalysis, statement: str, array: str) -> str | None:
    """``shared memory in kernel0: a 32x32 tile (reused within a tile)`` and the like."""
    return describe(gpu_mapping(sa), sa, statement, array)


def placements(sa: ScopAnalysis, gpu: GpuProgram | None) -> dict[tuple[str, str], str]:
    """The placement of every array each statement of `sa` accesses, under the mapping `gpu`."""
    out = {}
    for s in sa.scop.statements:
        for a in (*s.reads, *s.writes):
            where = describe(gpu, sa, s.name, a.array)
            if where is not None:
                out[(s.name, a.array)] = where
    return out


def describe(gpu: GpuProgram | None, sa: ScopAnalysis, statement: str, array: str) -> str | None:
    """Where `gpu` puts `array` for `statement` of `sa` (None: no kernel runs the statement)."""
    kernel = next((k for k in gpu.kernels if statement in k.statements), None) if gpu else None
    if kernel is None:
        return None
    if not kernel.parallel:
        return f"global memory ({kernel.name} runs these statements on one GPU thread)"
    p = next((p for p in kernel.promotions if p.array == array), None)
    size = "x".join(map(str, p.size)) if p else ""
    if p is not None and p.place == "shared":
        return f"shared memory in {kernel.name}: a {size} tile per block ({p.reason})"
    if p is not None:
        return f"registers in {kernel.name}: {size} per thread ({p.reason})"
    g = next((g for g in kernel.global_accesses if g.array == array), None)
    why = f" ({g.reason})" if g else ""
    if statement in kernel.atomic and any(w.array == array for w in sa.scop.statement(statement).writes):
        why = " (updated with atomic additions)"
    return f"global memory in {kernel.name}{why}"
