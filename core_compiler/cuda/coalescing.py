"""How a warp's 32 threads touch memory, for each access of a modeled kernel.

The threads of a warp are the block's first 32 in x-major order (lane ``l`` is ``threadIdx.x =
l % blockDim.x``, ``threadIdx.y = l / blockDim.x % blockDim.y``, …). Within one access the
terms that do not involve thread ids are the same for the whole warp, so the lanes' element
offsets are the subscripts' thread-id terms times each dimension's stride (the product of the
extents after it; a size such as `n` is taken as 1024, a typical large row).

- global memory moves 32-byte segments: an access whose lanes use less than half of the bytes
  of the segments they touch is *uncoalesced* (``A[threadIdx.x * n]``: 32 segments for 32
  values);
- shared memory has 32 banks of 4-byte words: lanes reading different words of one bank are
  served one after the other (``s[threadIdx.x][k]`` on ``float s[32][32]``: 32-way). Eight-byte
  elements are served by half-warps.
"""

from __future__ import annotations

from dataclasses import dataclass

from core_compiler.cuda.grid import BARRIER, KernelModel
from core_compiler.scop.affine import Affine
from core_compiler.scop.model import Access
from core_compiler.scop.region import ArrayDecl

WARP = 32
SEGMENT = 32  # bytes
BANKS = 32
TYPICAL_SIZE = 1024  # a size parameter's value where a stride depends on it
_SIZES = {"char": 1, "short": 2, "int": 4, "unsigned": 4, "float": 4, "long": 8, "double": 8}


@dataclass(frozen=True)
class Uncoalesced:
    access: Access
    stride: str  # the distance between adjacent threads' elements, as C text
    segments: int
    ideal: int  # the segments the same requests need when adjacent threads use adjacent elements


@dataclass(frozen=True)
class BankConflict:
    access: Access
    ways: int
    lanes: tuple[int, int]  # two lanes that collide
    extents: tuple[int | None, ...]  # the shared array's declared sizes


def element_size(type_name: str) -> int:
    words = type_name.replace("unsigned ", "unsigned").split()
    return next((_SIZES[w] for w in reversed(words) if w in _SIZES), 4)


def lanes(km: KernelModel) -> list[dict[str, int]]:
    """The thread ids of the first warp's lanes."""
    b = km.shape.block
    n = min(WARP, b["x"] * b["y"] * b["z"])
    return [
        {"threadIdx.x": lane % b["x"], "threadIdx.y": lane // b["x"] % b["y"], "threadIdx.z": lane // (b["x"] * b["y"])}
        for lane in range(n)
    ]


def offsets(a: Access, decl: ArrayDecl, warp: list[dict[str, int]]) -> list[int] | None:
    """Each lane's element offset from lane 0's, or None where the subscripts are not plain
    (a thread id inside `/` or `%`, or a stride through an unknown extent)."""
    thread_vars = set(warp[0])
    if any(thread_vars & op.names for idx in a.info.indices for atom in idx.atoms for op in atom.operands()):
        return None
    out = [0] * len(warp)
    for k, idx in enumerate(a.info.indices):
        coeffs = {v: idx.coeff(v) for v in thread_vars if idx.coeff(v)}
        if not coeffs:
            continue
        stride = _stride(decl, k)
        if stride is None:
            return None
        for lane, ids in enumerate(warp):
            out[lane] += stride * sum(c * ids[v] for v, c in coeffs.items())
    return out


def _stride(decl: ArrayDecl, k: int) -> int | None:
    stride = 1
    for extent in decl.extents[k + 1 :]:
        value = _value(extent)
        if value is None:
            return None
        stride *= value
    return stride


def _value(extent: Affine | None) -> int | None:
    if extent is None or extent.atoms:
        return None
    return extent.const + sum(c * TYPICAL_SIZE for _, c in extent.coeffs)


def stride_text(a: Access, decl: ArrayDecl) -> str:
    """The distance between the elements of threads `x` and `x + 1`, as C text (``n``, ``2 * n``)."""
    parts = []
    for k, idx in enumerate(a.info.indices):
        c = idx.coeff("threadIdx.x")
        if not c:
            continue
        extents = [e.isl() for e in decl.extents[k + 1 :] if e is not None]
        factors = ([str(c)] if c != 1 or not extents else []) + [f"({e})" if " " in e else e for e in extents]
        parts.append(" * ".join(factors))
    return " + ".join(parts) or "0"


def uncoalesced(km: KernelModel) -> list[Uncoalesced]:
    warp = lanes(km)
    out = []
    for a, decl in _accesses(km, kinds=("array",)):
        offs = offsets(a, decl, warp)
        if offs is None:
            continue
        size = element_size(decl.elem_type)
        segments = len({o * size // SEGMENT for o in offs})
        ideal = -(-len(offs) * size // SEGMENT)  # a warp's requests, back to back
        if segments > 2 * ideal:  # a broadcast (every lane one element) needs fewer, not more
            out.append(Uncoalesced(a, stride_text(a, decl), segments, ideal))
    return out


def bank_conflicts(km: KernelModel) -> list[BankConflict]:
    warp = lanes(km)
    out = []
    for a, decl in _accesses(km, kinds=("local-array",)):
        if a.array not in km.shared:
            continue
        offs = offsets(a, decl, warp)
        if offs is None:
            continue
        size = element_size(decl.elem_type)
        group = WARP // 2 if size == 8 else WARP
        worst = max((_conflict(offs[g : g + group], size, g) for g in range(0, len(offs), group)), key=lambda c: c[0])
        if worst[0] > 1:
            sizes = tuple(_value(e) for e in decl.extents[km.n_block :])
            out.append(BankConflict(a, worst[0], worst[1], sizes))
    return out


def _conflict(offs: list[int], size: int, first_lane: int) -> tuple[int, tuple[int, int]]:
    """The most distinct words one bank serves for these lanes, and two lanes that collide."""
    banks: dict[int, dict[int, int]] = {}  # bank -> word -> a lane reading it
    for lane, o in enumerate(offs):
        word = o * size // 4
        banks.setdefault(word % BANKS, {}).setdefault(word, first_lane + lane)
    bank = max(banks.values(), key=len)
    lanes_ = sorted(bank.values())
    return len(bank), (lanes_[0], lanes_[1] if len(lanes_) > 1 else lanes_[0])


def _accesses(km: KernelModel, kinds: tuple[str, ...]) -> list[tuple[Access, ArrayDecl]]:
    """Each access of these kinds of arrays once per source range (unrolled copies repeat it)."""
    decls = {d.name: d for d in km.scop.arrays}
    seen = set()
    out = []
    for st in km.scop.statements:
        for a in (*st.writes, *st.reads):
            decl = decls.get(a.array)
            if a.array == BARRIER or decl is None or decl.kind not in kinds or a.info.range in seen:
                continue
            seen.add(a.info.range)
            out.append((a, decl))
    return out
