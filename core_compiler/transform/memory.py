"""Memory promotion for a parallel kernel, after PPCG's Algorithm 1.

All references to one array inside a kernel form one group (references that may touch the same
elements must share one copy). For each group, computed on the kernel's *extended* instances
``S[i…, T…, X…]`` (``T`` the tile origins of the band members, ``X`` the thread-mapped schedule
values):

- **registers** when the group is a bijection on the thread-mapped point loops: every element is
  used by exactly one thread, at one point of its share of the tile, whatever the sequential loops
  do. It is then loaded once per block tile before the sequential tile loops and stored after them.
  Registers need reuse to pay (an element used by several instances of the thread).
- **shared memory** when there is reuse inside a tile or the accesses are not coalesced (consecutive
  ``threadIdx.x`` not touching consecutive elements), and the tile's footprint fits in a box of fixed
  size whose offset depends on the tile origins only; copied in (what the tile reads) after the
  tile loops, with a barrier before the computation, and copied out (what it writes) after a barrier.
- **global** memory otherwise, or when the shared budget is spent (largest groups go first).

Written scalars and local arrays stay in global memory; expanded local scalars (one element per
iteration of the loops around them) may go to registers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import islpy as isl

from core_compiler.choices import DEFAULT_MAX_SHARED_BYTES
from core_compiler.scop.model import Scop
from core_compiler.scop.region import ArrayDecl
from core_compiler.transform.names import PLAIN, Names

BOX_OPERATIONS = 1_000_000
"""isl operations the box around a tile's footprint may take (else the array stays in global
memory): a footprint with existentially quantified variables took isl 70 s to exhaust the
kernel's 4e6 (fuzzer seed 390: `x[jj % 2][j / 3]` in a nest under `n % 7`)."""
ELEM_BYTES = {"double": 8, "float": 4, "int": 4, "long": 8, "char": 1, "short": 2, "unsigned": 4}


@dataclass(frozen=True)
class MemoryOptions:
    shared: bool = True
    private: bool = True
    max_shared_bytes: int = DEFAULT_MAX_SHARED_BYTES
    min_shared_uses: int = 8  # shared memory only for elements a tile uses this often (`_uses_per_tile`)
    # two shared buffers per copy where a block walks tiles in a loop and only reads them: the
    # next tile's copy is issued before the current one's computation, one barrier per tile
    # (`gpu_mapping._buffers`)
    double_buffer: bool = True


@dataclass(frozen=True, eq=False)
class Promotion:
    array: str
    place: str  # "shared" | "register"
    elem_type: str
    size: tuple[int, ...]
    offset: tuple[isl.AstExpr, ...]  # shared: first element per dim, over the tile origins T*
    read: isl.Map  # shared: [T…] -> A[a]; register: [T_block…, X…] -> A[a]
    written: isl.Map
    reason: str
    local: str  # the copy's name: shared_A, private_A (`Names.copy`)

    @property
    def elem_bytes(self) -> int:
        return ELEM_BYTES.get(self.elem_type.split()[-1], 8)

    @property
    def n_bytes(self) -> int:
        return self.elem_bytes * math.prod(self.size)


@dataclass(frozen=True)
class KernelShape:
    """Where the extended instance dims are, for one kernel."""

    n_tiled: int  # tile origins T0..T{n_tiled-1}
    n_block: int  # the first n_block tiles are block-mapped
    block: tuple[int, ...]  # threads per thread-mapped member, outermost first
    tile: tuple[int, ...]  # tile size per tiled member
    grid: tuple[int, ...] = ()  # blocks per block dim; () as many as tiles. Fewer: tiles modulo the grid
    names: Names = PLAIN  # of the block ids, thread ids, tile origins… (`core_compiler.transform.names`)
    why: str = ""  # why the tiles differ from the default, for the remark
    # > 1: the innermost thread member's points go to threads in contiguous runs of tile/block
    # (thread t_k runs T + c*t_k .. T + c*t_k + c - 1), so that OpenCL can read them with
    # `vloadN` of this width (`codegen/vectors.py`); 1: cyclic, a stride of the block
    vector: int = 1

    @property
    def n_thread(self) -> int:
        return len(self.block)

    @property
    def run_length(self) -> int:
        """Points of the innermost thread member each thread runs in a row (1: cyclic)."""
        if self.vector <= 1 or not self.block:
            return 1
        k = self.n_thread - 1
        return self.tile[k] // self.block[k]

    def thread_of(self, k: int, v: str) -> str:
        """isl constraint: schedule value `v` of thread member `k` runs on thread ``t{k}``."""
        t, b = self.names("t", k), self.block[k]
        if k == self.n_thread - 1 and self.run_length > 1:
            tile = self.tile[k]
            return f"{t} = floor((({v}) - {tile} * floor(({v}) / {tile})) / {self.run_length})"
        return f"({v}) - {t} = {b} * floor((({v}) - {t}) / {b})"

    def block_of(self, k: int, tile_index: str) -> str:
        """isl constraint: tile number `tile_index` of block dim `k` runs on block ``b{k}``."""
        b = self.names("b", k)
        if k >= len(self.grid):
            return f"{tile_index} = {b}"
        g = self.grid[k]
        return f"{tile_index} - {b} = {g} * floor(({tile_index} - {b}) / {g})"


@dataclass(frozen=True)
class GlobalAccess:
    array: str
    reason: str


def promote(
    scop: Scop,
    ext: dict[str, isl.Map],  # statement -> (extended instance -> original instance)
    shape: KernelShape,
    sched: isl.UnionMap,  # original instance -> kernel schedule dims x*
    options: MemoryOptions,
    atomic: frozenset[str] = frozenset(),
) -> tuple[tuple[Promotion, ...], tuple[GlobalAccess, ...]]:
    """Decide a place for every array the kernel touches; arrays updated atomically stay global."""
    promoted: list[Promotion] = []
    kept: list[GlobalAccess] = []
    atomic_arrays = {w.array for s in scop.statements if s.name in atomic for w in s.writes}
    for array in _arrays(scop, ext):
        if array in atomic_arrays:
            kept.append(GlobalAccess(array, "threads add to it atomically"))
            continue
        reads, writes = _accesses(scop, ext, array)
        scop.ctx.reset_operations()  # each array gets isl's whole budget
        try:
            choice = _place(scop, array, reads, writes, shape, sched, options)
        except isl.Error:
            choice = GlobalAccess(array, "its tiles were too costly to analyse")
        scop.ctx.reset_operations()
        if isinstance(choice, Promotion):
            promoted.append(choice)
        else:
            kept.append(choice)
    shared = sorted((p for p in promoted if p.place == "shared"), key=lambda p: (p.n_bytes, p.array))
    budget = options.max_shared_bytes
    for p in shared:
        if p.n_bytes > budget:
            promoted.remove(p)
            kept.append(GlobalAccess(p.array, f"its {p.n_bytes}-byte tile does not fit in the shared-memory budget"))
        else:
            budget -= p.n_bytes
    return tuple(sorted(promoted, key=lambda p: p.array)), tuple(sorted(kept, key=lambda g: g.array))


def _arrays(scop: Scop, ext: dict[str, isl.Map]) -> list[str]:
    names = {a.array for s in scop.statements if s.name in ext for a in (*s.reads, *s.writes)}
    return sorted(n for n in names if _promotable(next(d for d in scop.arrays if d.name == n)))


def _promotable(decl: ArrayDecl) -> bool:
    """Arrays, and scalars expanded over their loops (one element per iteration: `symm`'s
    `temp2[i][j]` is a register of each thread); not scalars written in the nest, nor local arrays."""
    return decl.kind == "array" or decl.per_iteration


def _accesses(scop: Scop, ext: dict[str, isl.Map], array: str) -> tuple[isl.UnionMap, isl.UnionMap]:
    """Extended instance -> element, for the reads and the writes of `array` in the kernel."""
    space = isl.Space.params_alloc(scop.ctx, 0)
    reads, writes = isl.UnionMap.empty(space), isl.UnionMap.empty(space)
    for s in scop.statements:
        if s.name not in ext:
            continue
        for a in (*s.reads, *s.writes):
            if a.array == array:
                m = isl.UnionMap.from_map(ext[s.name].apply_range(a.relation))
                if a.is_write:
                    writes = writes.union(m)
                else:
                    reads = reads.union(m)
    return reads, writes


def _place(
    scop: Scop,
    array: str,
    reads: isl.UnionMap,
    writes: isl.UnionMap,
    shape: KernelShape,
    sched: isl.UnionMap,
    options: MemoryOptions,
) -> Promotion | GlobalAccess:
    decl = next(d for d in scop.arrays if d.name == array)
    both = reads.union(writes)
    reuse = _has_reuse(both, shape)
    if options.private and reuse and _is_private(both, shape):
        return _register(array, decl.elem_type, reads, writes, shape)
    coalesced = _coalesced(scop, array, sched, shape)
    if not options.shared or not (reuse or not coalesced):
        why = "shared memory is off" if not options.shared and (reuse or not coalesced) else "no reuse in a tile and coalesced accesses"
        return GlobalAccess(array, why)
    promo = _shared(array, decl.elem_type, reads, writes, shape, "reused within a tile" if reuse else "accesses are not coalesced")
    if promo is None:
        return GlobalAccess(array, "its tile has no fixed size")
    uses = _uses_per_tile(scop, array, both, shape) / math.prod(promo.size)
    if uses < options.min_shared_uses:
        return GlobalAccess(array, f"each element of its tile would be used about {uses:.0f} times, which the GPU's cache serves as well")
    return promo


# `MemoryOptions.min_shared_uses`: an element copied to shared memory must be used this many
# times in its tile, else the copy, its barriers and the shared loads cost more than the L1 cache
# they replace: on an H100, global memory was 1.5x faster for jacobi-2d (a 5-point stencil: each
# element used about 4 times) and 2.3x for adi (rows read across threads only to coalesce them);
# gemm's tiles use each element 32 to 64 times, and there shared memory was 1.6x faster.


def _uses_per_tile(scop: Scop, array: str, both: isl.UnionMap, shape: KernelShape) -> int:
    """About how many accesses to `array` a full tile makes: each statement's references to it
    times the tile's points (an over-count for statements outside the band's inner loops)."""
    names: list[str] = []
    both.foreach_map(lambda m: names.append(m.get_tuple_name(isl.dim_type.in_)))
    points = math.prod(shape.tile[: shape.n_tiled]) if shape.n_tiled else 1
    refs = 0
    for name in set(names):
        stmt = scop.statement(name)
        refs += sum(1 for a in (*stmt.reads, *stmt.writes) if a.array == array)
    return refs * points


# ------------------------------------------------------------------------------ tests of the group


def _project_ext(m: isl.Map, keep_tiles: int, keep_threads: bool, shape: KernelShape) -> isl.Map:
    """Extended instance -> element  ==>  [T0..T{keep_tiles-1} (X…)] -> element."""
    n_in = m.dim(isl.dim_type.in_)
    n_iter = n_in - shape.n_tiled - shape.n_thread
    m = m.project_out(isl.dim_type.in_, 0, n_iter)  # [T…, X…] -> a
    if not keep_threads:
        m = m.project_out(isl.dim_type.in_, shape.n_tiled, shape.n_thread)
    m = m.project_out(isl.dim_type.in_, keep_tiles, shape.n_tiled - keep_tiles)
    return m.reset_tuple_id(isl.dim_type.in_)


def _union_project(um: isl.UnionMap, keep_tiles: int, keep_threads: bool, shape: KernelShape) -> isl.Map | None:
    maps: list[isl.Map] = []
    um.foreach_map(maps.append)
    out: isl.Map | None = None
    for m in maps:
        p = _project_ext(m, keep_tiles, keep_threads, shape)
        out = p if out is None else out.union(p)
    return out.coalesce() if out is not None else None


def _has_reuse(both: isl.UnionMap, shape: KernelShape) -> bool:
    """Some element is touched by two instances of one tile: instance -> (T, element) is not injective."""
    maps: list[isl.Map] = []
    both.foreach_map(maps.append)
    keyed: isl.UnionMap | None = None
    for m in maps:
        n_in = m.dim(isl.dim_type.in_)
        n_iter = n_in - shape.n_tiled - shape.n_thread
        tiles = m.domain().identity().project_out(isl.dim_type.out, n_in - shape.n_thread, shape.n_thread)
        tiles = tiles.project_out(isl.dim_type.out, 0, n_iter).reset_tuple_id(isl.dim_type.out)
        k = isl.UnionMap.from_map(tiles.range_product(m))
        keyed = k if keyed is None else keyed.union(k)
    return keyed is not None and not keyed.is_injective()


def _is_private(both: isl.UnionMap, shape: KernelShape) -> bool:
    """Each element belongs to one thread-mapped point: [T_block…, X…] <-> element is a bijection,
    and no sequential tile loop over thread-mapped members (their registers could not be hoisted)."""
    if shape.n_thread == 0 or shape.n_thread > shape.n_block:
        return False
    m = _union_project(both, shape.n_block, True, shape)
    return m is not None and m.is_bijective()


def _coalesced(scop: Scop, array: str, sched: isl.UnionMap, shape: KernelShape) -> bool:
    """Neighbouring threadIdx.x (schedule member n_thread-1, +1) touch neighbouring elements."""
    if shape.n_thread == 0:
        return True
    acc = scop.reads(array).union(scop.writes(array))
    on_sched = sched.reverse().apply_range(acc)  # [x…] -> a
    maps: list[isl.Map] = []
    on_sched.foreach_map(maps.append)
    if not maps:
        return True
    n = maps[0].dim(isl.dim_type.in_)
    xi = shape.n_thread - 1
    dims = ", ".join(f"x{k}" for k in range(n))
    moved = ", ".join(f"x{k} + 1" if k == xi else f"x{k}" for k in range(n))
    step = isl.UnionMap.read_from_str(scop.ctx, f"{{ [{dims}] -> [{moved}] }}")
    pairs = on_sched.reverse().apply_range(step).apply_range(on_sched)
    rank = maps[0].dim(isl.dim_type.out)
    same = ", ".join("0" for _ in range(rank))
    next_ = ", ".join("1" if k == rank - 1 else "0" for k in range(rank))
    ok = isl.UnionSet.read_from_str(scop.ctx, f"{{ [{same}]; [{next_}] }}")
    deltas = pairs.deltas()
    return deltas.is_empty() or _strip(deltas).is_subset(ok)


def _strip(u: isl.UnionSet) -> isl.UnionSet:
    """Deltas keep the array's name; compare them as plain vectors."""
    sets: list[isl.Set] = []
    u.foreach_set(sets.append)
    out = isl.UnionSet.empty(u.get_space())
    for s in sets:
        out = out.union(isl.UnionSet.from_set(s.reset_tuple_id()))
    return out


# ------------------------------------------------------------------------------ promotions


def _register(array: str, elem: str, reads: isl.UnionMap, writes: isl.UnionMap, shape: KernelShape) -> Promotion:
    size = tuple(-(-t // b) for t, b in zip(shape.tile[: shape.n_thread], shape.block, strict=True))
    read = _union_project(reads, shape.n_block, True, shape)
    written = _union_project(writes, shape.n_block, True, shape)
    return Promotion(
        array, "register", elem, size, (), _or_empty(read, written), _or_empty(written, read),
        "each element is used by one thread only, several times", shape.names.copy("private", array),
    )


def _shared(
    array: str, elem: str, reads: isl.UnionMap, writes: isl.UnionMap, shape: KernelShape, reason: str
) -> Promotion | None:
    read = _union_project(reads, shape.n_tiled, False, shape)
    written = _union_project(writes, shape.n_tiled, False, shape)
    footprint = read if written is None else written if read is None else read.union(written)
    assert footprint is not None
    ctx = footprint.get_ctx()
    budget = ctx.get_max_operations()
    ctx.set_max_operations(min(budget, BOX_OPERATIONS) if budget else BOX_OPERATIONS)
    ctx.reset_operations()
    try:
        return _shared_box(array, elem, read, written, footprint, shape, reason)
    finally:
        ctx.set_max_operations(budget)


def _shared_box(
    array: str, elem: str, read: isl.Map | None, written: isl.Map | None, footprint: isl.Map, shape: KernelShape, reason: str
) -> Promotion | None:
    offsets, sizes = [], []
    for k in range(footprint.dim(isl.dim_type.out)):
        lo, hi = footprint.dim_min(k), footprint.dim_max(k)
        extent = hi.sub(lo).add_constant_val(isl.Val.one(footprint.get_ctx())).max_val()
        if not extent.is_int():
            return None
        sizes.append(max(int(extent.to_python()), 1))
        as_params = lo.move_dims(isl.dim_type.param, lo.dim(isl.dim_type.param), isl.dim_type.in_, 0, lo.dim(isl.dim_type.in_))
        offsets.append(isl.AstBuild.from_context(as_params.domain()).expr_from_pw_aff(as_params))
    read, written = _or_empty(read, footprint), _or_empty(written, footprint)
    return Promotion(array, "shared", elem, tuple(sizes), tuple(offsets), read, written, reason, shape.names.copy("shared", array))


def _or_empty(m: isl.Map | None, like: isl.Map | None) -> isl.Map:
    if m is not None:
        return m
    assert like is not None
    return isl.Map.empty(like.get_space())
