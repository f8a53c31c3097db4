"""Data races and barriers of a modeled kernel (`grid.KernelModel`), judged with isl.

Two statement instances of different threads *conflict* when they touch the same element and one
writes (two atomic updates do not). Threads of one block are ordered only by the barriers between
the two accesses; threads of different blocks never are. Each instance has a *time* within its
thread: its block ids, then its schedule without the grid loops as deep as barriers are placed.
With barriers that every thread of the block reaches (checked: `divergent_barriers`), an access
`a` of one thread and `b` of another in the same block are ordered iff a barrier instance's time
lies between theirs::

    separated = { a -> b : same block and exists barrier B: a < B <= b or b < B <= a }

A race is a conflicting pair that is not separated; isl gives one as a witness (block, thread and
loop values, and the sizes where it happens).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import islpy as isl

from core_compiler.cuda.grid import BARRIER, KernelModel
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Access, Statement
from core_compiler.scop.region import ArrayDecl
from core_compiler.source import SourceRange


@dataclass(frozen=True, eq=False)
class Race:
    first: Access  # a write
    second: Access
    first_stmt: Statement
    second_stmt: Statement
    witness: dict[str, int]  # iterator and size values of one racing pair: `a.<it>`, `b.<it>`, sizes
    pairs: isl.Map  # every racing pair of instances

    @property
    def same_block(self) -> bool:
        return all(self.witness[f"a{k}"] == self.witness[f"b{k}"] for k in range(self.witness["_n_block"]))


@dataclass(frozen=True)
class Divergence:
    barrier: Statement
    witness: dict[str, int]  # a thread that skips the barrier (`a<k>`), sizes


class Timing:
    """The times of a kernel's statement instances and the barrier separation between them."""

    def __init__(self, km: KernelModel) -> None:
        self.km = km
        depth = max(st.schedule.dim(isl.dim_type.out) for st in km.scop.statements)
        self.barriers = tuple(st for st in km.scop.statements if km.is_barrier(st.name))
        keep = [2 * k + 1 for k in range(km.n_block)] + list(range(2 * km.n_grid, 2 * km.n_grid + self._deepest()))
        names = [f"t{k}" for k in range(depth)]
        self.project = isl.Map.read_from_str(
            km.scop.ctx, f"{{ [{', '.join(names)}] -> [{', '.join(names[k] for k in keep)}] }}"
        )
        self.width = len(keep)
        self.space = self.time(km.scop.statements[0]).range().get_space()

    def _deepest(self) -> int:
        """The schedule dimensions within a thread that place its barriers: a barrier inside `k`
        loops is fixed by its first ``2k + 1`` (positions and loop values); the rest are 0. Any
        other statement differs from a barrier in those dimensions already (no two statements
        share a position), so times cut to them order every instance against every barrier as
        the whole times do, and the separation map has a fraction of the disjuncts (gemm's
        register-tiled kernel: 64, not 384; its race check takes half the time)."""
        return max((2 * len(b.info.loops[self.km.n_grid :]) + 1 for b in self.barriers), default=0)

    def time(self, st: Statement) -> isl.Map:
        return st.schedule.apply_range(self.project)

    @functools.cached_property
    def leaving_rows(self) -> isl.Set:
        return sizes_leaving_rows(self.km)

    def separated(self, barriers: tuple[Statement, ...]) -> isl.Map:
        """``{ time -> time }`` of same-block instance pairs with one of `barriers` between them."""
        space = self.space
        if not barriers:
            return isl.Map.empty(isl.Space.map_from_set(space))
        times = isl.Set.empty(space)
        for b in barriers:
            times = times.union(self.time(b).range())
        before = isl.Map.lex_lt(space).intersect_range(times)
        between = before.apply_range(isl.Map.lex_le(space))
        both = between.union(between.reverse())
        return both.intersect(_same_prefix(self.km, self.width))


def races(km: KernelModel, timing: Timing, barriers: tuple[Statement, ...] | None = None) -> list[Race]:
    """One race per pair of conflicting accesses (write first) that nothing orders."""
    sep = timing.separated(timing.barriers if barriers is None else barriers)
    out: list[Race] = []
    seen: set[tuple[int, int]] = set()
    for s1, w in _accesses(km, writes=True):
        for s2, other in _accesses(km, writes=False):
            key = (min(id(w), id(other)), max(id(w), id(other)))
            if w.array != other.array or key in seen or _both_atomic(km, s1, s2) or km.thread_private(w.array):
                continue
            seen.add(key)
            race = _race(km, timing, sep, s1, w, s2, other)
            if race is not None:
                out.append(race)
    return out


def _accesses(km: KernelModel, writes: bool) -> list[tuple[Statement, Access]]:
    out = []
    for st in km.scop.statements:
        for a in st.writes if writes else (*st.writes, *st.reads):
            if a.array != BARRIER:
                out.append((st, a))
    return out


def _both_atomic(km: KernelModel, s1: Statement, s2: Statement) -> bool:
    return s1.info.node.range in km.atomic and s2.info.node.range in km.atomic


def _race(
    km: KernelModel, timing: Timing, sep: isl.Map, s1: Statement, w: Access, s2: Statement, other: Access
) -> Race | None:
    conflict = w.relation.apply_range(other.relation.reverse())
    conflict = conflict.subtract(_same_thread(km, s1, s2))
    if conflict.is_empty():
        return None
    ordered = timing.time(s1).apply_range(sep).apply_range(timing.time(s2).reverse())
    unordered = _within_rows(timing, conflict.subtract(ordered))
    if unordered.is_empty():
        return None
    # a race between blocks is the one no barrier can fix: show it where there is one
    across = unordered.subtract(_same_thread(km, s1, s2, km.n_block))
    shown = unordered if across.is_empty() else across
    return Race(w, other, s1, s2, _witness(km, shown.wrap().sample_point(), len(s1.iterators)), unordered)


def sizes_leaving_rows(km: KernelModel) -> isl.Set:
    """The sizes at which a column of an array in rows leaves its row: ``D[r][c]`` of rows of 24
    elements (a flat pointer read as rows, `DelinearizedRows`, or ``double (*D)[24]``) with `c`
    past ``0 <= c < 24``. The model's two subscripts assume it does not: such a column touches
    the next row's elements, which ``D[r][c]`` does not show. (hexplore's CUDA for PolyBench's MINI
    sizes indexes `D` as rows of 24 with columns up to `nl`: at ``nl > 24`` its full tiles' columns
    run into the next rows, where other threads write; at ``nl = 24``, the size it was made for,
    none does.) Races are judged at the other sizes, and a launch at these is refused
    (`cpu.CpuKernel`). Where an array is touched only at sizes where some access leaves its row
    (``A[r * 80 + c]`` with ``c < 100`` wherever it runs) the assumption is false: that array
    does not count."""
    outside = isl.Set.read_from_str(km.scop.ctx, f"{_params(km)} -> {{ : false }}")
    for decl in arrays_in_rows(km):
        past = _past_rows(km, decl, km.scop.reads(decl.name).union(km.scop.writes(decl.name)))
        if _counts(km, decl, past):
            outside = outside.union(past)
    return outside.coalesce()


def arrays_in_rows(km: KernelModel) -> list[ArrayDecl]:
    """The arrays whose subscripts after the first have a known extent (rows)."""
    return [d for d in km.scop.arrays if d.kind == "array" and any(e is not None for e in d.extents[1:])]


def rows_left_at(km: KernelModel, decl: ArrayDecl, at: isl.Set) -> bool:
    """Whether a column of `decl` leaves its row at the sizes `at` (a launch's: each size one
    value). Per access, with the sizes fixed first: the kernel's statements are bounded there, so
    this costs little where the sizes left free (`sizes_leaving_rows`) can exceed isl's budget
    (seidel's wavefront: a statement of 33 pieces, 20 accesses). Exact, not a hull: the sizes
    where a column leaves its row are refused, and races were judged only at the others."""
    outside = _outside_rows(km, decl)
    return any(array == decl.name and not touched.intersect(outside).is_empty() for array, touched in touched_at(km, at))


def touched_at(km: KernelModel, at: isl.Set) -> tuple[tuple[str, isl.Set], ...]:
    """Per access, its array and the elements it touches at the sizes `at` (a launch's). Kept for
    the last launches: its footprint (`cpu.footprint`) and its rows (`rows_left_at`) ask for them."""
    return _touched_at(km, at.to_str())


@functools.lru_cache(maxsize=2)
def _touched_at(km: KernelModel, at: str) -> tuple[tuple[str, isl.Set], ...]:
    sizes = isl.Set.read_from_str(km.scop.ctx, at)
    # an access relation holds its statement's domain: no domain to intersect
    return tuple((a.array, a.relation.intersect_params(sizes).range()) for a in _all_accesses(km))


def _all_accesses(km: KernelModel) -> list[Access]:
    return [a for st in km.scop.statements for a in (*st.reads, *st.writes) if a.array != BARRIER]


def rows_assumed(km: KernelModel, decl: ArrayDecl) -> bool:
    """Whether the race check assumed `decl`'s columns stay within their rows: not where the array
    is touched only at sizes where some column leaves its row (`sizes_leaving_rows`). Exact, over
    the free sizes, so asked only of an array that leaves its rows at a launch: a hull (a superset
    of those sizes) would be safe where it only refuses more launches, but here it could find the
    array touched only where its rows are left and drop it from the check, hiding its races."""
    if all(_leaves_always(km, decl, st) for st in km.scop.statements):
        return False  # touched only where rows are left, the test below's answer in a fraction
    touched = km.scop.reads(decl.name).union(km.scop.writes(decl.name))
    return _counts(km, decl, _past_rows(km, decl, touched))


def _leaves_always(km: KernelModel, decl: ArrayDecl, st: Statement) -> bool:
    """Whether `st` does not touch `decl`, or one of its accesses leaves its row at each of its
    instances. PolyBench seidel-2d's ``A[i * 40 + j]``, its column a sum of 2s and 4s, is read as
    ``A[i][x][y][z]`` in rows of 10 x 2 x 2 with ``y < 0`` wherever the kernel runs: projecting
    the union of its accesses on the sizes (`_past_rows`) ran past isl's budget."""
    accesses = [a for a in (*st.reads, *st.writes) if a.array == decl.name]
    outside = _outside_rows(km, decl)
    return not accesses or any(a.relation.range().is_subset(outside) for a in accesses)


def _params(km: KernelModel) -> str:
    return "[" + ", ".join(isl_name(p) for p in km.scop.params) + "]"


def _outside_rows(km: KernelModel, decl: ArrayDecl) -> isl.Set:
    """``decl``'s elements whose column is past its row (or before it)."""
    names = [f"a{d}" for d in range(len(decl.extents))]
    past = " or ".join(f"a{d} < 0 or a{d} >= {e.isl()}" for d, e in enumerate(decl.extents) if d > 0 and e is not None)
    return isl.Set.read_from_str(km.scop.ctx, f"{_params(km)} -> {{ {isl_name(decl.name)}[{', '.join(names)}] : {past} }}")


def _past_rows(km: KernelModel, decl: ArrayDecl, touched: isl.UnionMap) -> isl.Set:
    """The sizes at which an access of `touched` leaves its row."""
    return touched.range().intersect(isl.UnionSet.from_set(_outside_rows(km, decl))).params()


def _counts(km: KernelModel, decl: ArrayDecl, past: isl.Set) -> bool:
    touched = km.scop.reads(decl.name).union(km.scop.writes(decl.name)).range()
    return not past.is_empty() and not touched.params().is_subset(past)


def _within_rows(timing: Timing, pairs: isl.Map) -> isl.Map:
    """`pairs` at the sizes where every column stays within its row (`sizes_leaving_rows`)."""
    outside = timing.leaving_rows
    if outside.is_empty() or pairs.is_empty():
        return pairs
    return pairs.intersect_params(pairs.params().subtract(outside))


def _same_thread(km: KernelModel, s1: Statement, s2: Statement, dims: int | None = None) -> isl.Map:
    """Pairs of instances of one thread (the first `dims` grid ids equal: one block with
    ``km.n_block``)."""
    a = [f"a{k}" for k in range(len(s1.iterators))]
    b = [f"b{k}" for k in range(len(s2.iterators))]
    same = " and ".join(f"a{k} = b{k}" for k in range(km.n_grid if dims is None else dims)) or "true"
    params = "[" + ", ".join(isl_name(p) for p in km.scop.params) + "]"
    text = f"{params} -> {{ {s1.name}[{', '.join(a)}] -> {s2.name}[{', '.join(b)}] : {same} }}"
    return isl.Map.read_from_str(km.scop.ctx, text)


def _witness(km: KernelModel, point: isl.Point, n_first: int) -> dict[str, int]:
    """A sampled pair as values: `a<k>`/`b<k>` the two instances' iterators, and the sizes."""
    space = point.get_space()
    values: dict[str, int] = {"_n_block": km.n_block}
    for k, p in enumerate(km.scop.params):
        values[p] = point.get_coordinate_val(isl.dim_type.param, k).to_python()
    n = space.dim(isl.dim_type.set)
    for k in range(n):
        name = f"a{k}" if k < n_first else f"b{k - n_first}"
        values[name] = point.get_coordinate_val(isl.dim_type.set, k).to_python()
    return values


def _same_prefix(km: KernelModel, width: int) -> isl.Map:
    """Pairs of times in the same block (equal block ids, the first dimensions)."""
    a = [f"a{k}" for k in range(width)]
    b = [f"b{k}" for k in range(width)]
    same = " and ".join(f"a{k} = b{k}" for k in range(km.n_block)) or "true"
    params = "[" + ", ".join(isl_name(p) for p in km.scop.params) + "]"
    return isl.Map.read_from_str(km.scop.ctx, f"{params} -> {{ [{', '.join(a)}] -> [{', '.join(b)}] : {same} }}")


# ------------------------------------------------------------------------------ barriers


def divergent_barriers(km: KernelModel, timing: Timing) -> list[Divergence]:
    """Barriers that some threads of a block reach and others, at the same point, do not."""
    out: list[Divergence] = []
    for b in timing.barriers:
        thread_dims = (km.n_block, len(km.shape.thread_axes))
        reached = b.domain.project_out(isl.dim_type.set, *thread_dims)
        everyone = reached.insert_dims(isl.dim_type.set, km.n_block, thread_dims[1])
        everyone = everyone.set_tuple_id(b.domain.get_tuple_id()).intersect(_thread_box(km, b))
        skipped = everyone.subtract(b.domain)
        if not skipped.is_empty() and all(barrier_range(d.barrier) != barrier_range(b) for d in out):
            out.append(Divergence(b, _witness(km, skipped.sample_point(), len(b.iterators))))
    return out


def _thread_box(km: KernelModel, st: Statement) -> isl.Set:
    names = [f"a{k}" for k in range(len(st.iterators))]
    bounds = [
        f"0 <= a{km.n_block + k} < {km.shape.block[axis]}" for k, axis in enumerate(km.shape.thread_axes)
    ]
    params = "[" + ", ".join(isl_name(p) for p in km.scop.params) + "]"
    return isl.Set.read_from_str(km.scop.ctx, f"{params} -> {{ {st.name}[{', '.join(names)}] : {' and '.join(bounds)} }}")


def redundant_barriers(km: KernelModel, timing: Timing, found: list[Race]) -> list[SourceRange]:
    """The `__syncthreads()` calls whose removal adds no race: they order no conflicting accesses.
    (A call in an unrolled loop is several barrier statements; all of them go together.)"""
    out = []
    before = {(id(r.first), id(r.second)): r.pairs for r in found}
    for rng in dict.fromkeys(barrier_range(b) for b in timing.barriers):
        rest = tuple(x for x in timing.barriers if barrier_range(x) != rng)
        after = races(km, timing, rest)
        key = lambda r: (id(r.first), id(r.second))  # noqa: E731
        if all(key(r) in before and r.pairs.is_subset(before[key(r)]) for r in after):
            out.append(rng)
    return out


def barrier_range(st: Statement) -> SourceRange:
    return st.info.node.range
