"""Host/device split and block/thread mapping, PPCG-style, on the isl schedule tree.

The tree is cut into *units*. A band whose outermost member is coincident (parallel) becomes a
parallel kernel: its band is tiled (``tile`` per member), up to two leading coincident members are
mapped to blocks (one tile per block) and up to three to threads, the innermost to ``x`` for
coalescing; a thread walks its tile with a stride of the block size. A subtree with no parallel band
becomes a one-thread kernel, so that data never moves back to the host between kernels. Outer
sequential bands stay on the host as loops; their values are kernel parameters ``h0, h1, …``.

Each kernel's body is its own isl AST, generated from the unit's subtree schedule with the host
values, block ids ``b*`` and thread ids ``t*`` as parameters. (Those are the names unless the
code uses one: see `core_compiler.transform.names`.)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import islpy as isl

from core_compiler.scop.affine import isl_name
from core_compiler.scop.dependences import Dependences
from core_compiler.scop.model import Scop
from core_compiler.transform.memory import (
    GlobalAccess,
    KernelShape,
    MemoryOptions,
    Promotion,
    promote,
)
from core_compiler.transform.names import Names, identifiers, names_avoiding
from core_compiler.transform.sizes import Sizes, sizes_for

DEFAULT_BLOCKS = {1: (512,), 2: (32, 16), 3: (32, 4, 4)}  # CUDA order: x (innermost), y, z
# Register tiles: a band of two parallel members over a sequential one (gemm's i, j over k) whose
# sums stay in registers gets 32x64 tiles, 16 steps of k and 16x8 threads (x, y): 16 sums per
# thread, each value loaded from shared memory feeding 4 of them. gemm's kernel on an H100
# (LARGE): 0.398 ms, against 0.478 ms with PPCG's 32x32x32 tiles on 32x16 threads (2 sums per
# thread) and 0.545 to 0.93 ms with 64x64, 128x64 or 64x128 tiles (fewer, larger blocks); 32 or
# 64 sums per thread (128 to 218 registers) 0.96 to 2.06 ms.
REGISTER_TILE, REGISTER_BLOCK = (32, 64, 16), (16, 8)
REGISTER_SHARE = 2  # register tiles get this part of isl's budget (gemm, 2mm, 3mm, syrk, syr2k need less)
# Small tiles where the default ones leave the GPU idle: a kernel whose loops have constant bounds
# (or sizes bounded by its arrays' declared extents), at least MIN_POINTS_FOR_SMALL_TILES
# iterations of the band's loops per launch, that 32-wide tiles would cut into fewer
# blocks than a big GPU has multiprocessors (an H100 has 132), gets 16-wide tiles. On an H100 at
# PolyBench LARGE: heat-3d (16 blocks of 32x32) 69.5 -> 55.4 ms, adi (32 blocks) 427 -> 366 ms.
MIN_BLOCKS, SMALL_TILE, MIN_POINTS_FOR_SMALL_TILES = 132, 16, 1 << 19


@dataclass(frozen=True)
class MappingOptions:
    tile_size: int = 32
    sizes: Sizes = field(default_factory=dict)  # kernel (None: all) -> tile/block/grid, PPCG's --sizes
    memory: MemoryOptions = field(default_factory=MemoryOptions)
    # OpenCL vector width along the innermost thread member (PPOpenCL's): > 1 gives each thread
    # contiguous points there (`KernelShape.vector`), where the tile is a multiple of the block
    # and a thread has at least this many points; register promotion is off in such kernels
    vector: int = 1


@dataclass(frozen=True, eq=False)
class Phase:
    """One step of a parallel kernel's tile loop: its statements' AST, run by every thread with the
    tile origins ``T0, T1, …`` as parameters (set by the enclosing loops), or a barrier."""

    name: str
    ast: isl.AstNode | None  # None: a barrier
    tiles: tuple[int, ...]  # positions of T0, T1, … among the call's arguments
    full: isl.AstNode | None = None  # the same AST for a tile wholly inside the loops' bounds
    full_when: isl.AstExpr | None = None  # when the tile is such a full tile (over T0, T1, …)


@dataclass(frozen=True, eq=False)
class Kernel:
    index: int
    parallel: bool
    statements: tuple[str, ...]
    host_params: tuple[str, ...]  # h0, h1, … (values of the enclosing host loops)
    tile: tuple[int, ...]  # per block-mapped member
    block: tuple[int, ...]  # threads per mapped member, outermost member first
    n_block_dims: int
    ast: isl.AstNode
    grid_min: tuple[isl.AstExpr, ...]  # first and last tile index per block dim, over params + h
    grid_max: tuple[isl.AstExpr, ...]
    band_members: tuple[str, ...]  # the mapped band members, for remarks
    shape: KernelShape = field(default_factory=lambda: KernelShape(0, 0, (), ()))
    promotions: tuple[Promotion, ...] = ()
    global_accesses: tuple[GlobalAccess, ...] = ()
    phases: dict[str, Phase] = field(default_factory=dict)  # user nodes of `ast` -> their code
    atomic: frozenset[str] = frozenset()  # statements whose `+=` runs as an atomic addition
    buffers: int = 1  # 2: each shared copy is double-buffered along the last sequential tile loop (`_buffers`)

    @property
    def name(self) -> str:
        return f"kernel{self.index}"

    @property
    def n_thread_dims(self) -> int:
        return len(self.block)


@dataclass(frozen=True, eq=False)
class GpuProgram:
    scop: Scop
    schedule: isl.Schedule
    host_ast: isl.AstNode
    kernels: tuple[Kernel, ...]
    names: Names  # of what the kernels and the host code declare
    # per kernel name: its instances -> the host loops' values (one launch per value), and its
    # instances -> its own schedule dims (the mapped band first); what `gpu_cost` counts on
    host_values: dict[str, isl.UnionMap] = field(default_factory=dict)
    kernel_schedules: dict[str, isl.UnionMap] = field(default_factory=dict)


def map_to_gpu(
    scop: Scop, schedule: isl.Schedule, options: MappingOptions = MappingOptions(), deps: Dependences | None = None
) -> GpuProgram:
    """With `deps`, `+=` reductions that the mapping runs in parallel become atomic additions
    (needed when the schedule was computed with `parallel_reductions`)."""
    scop.ctx.reset_operations()
    reductions = deps.atomic_reductions() if deps is not None else None
    names = names_avoiding([*identifiers(scop.region.stmts), *scop.params, *(a.name for a in scop.arrays)])
    mapper = _Mapper(scop, options, reductions, names)
    root = mapper.visit(schedule.get_root().child(0)) if schedule.get_root().n_children() else schedule.get_root()
    host_schedule = root.get_schedule()
    host_ast = mapper.host_ast(host_schedule)
    return GpuProgram(scop, schedule, host_ast, tuple(mapper.kernels), names, mapper.prefixes, mapper.subtrees)


@dataclass
class _Mapper:
    scop: Scop
    options: MappingOptions
    reductions: isl.UnionMap | None
    names: Names
    kernels: list[Kernel] = field(default_factory=list)
    prefixes: dict[str, isl.UnionMap] = field(default_factory=dict)  # kernel -> host values
    subtrees: dict[str, isl.UnionMap] = field(default_factory=dict)  # kernel -> its schedule dims
    parallel: dict[int, int] = field(default_factory=dict)  # kernel -> leading members mapped in parallel

    @functools.cached_property
    def sizes_in_bounds(self) -> isl.Set | None:
        return _sizes_in_bounds(self.scop)

    # --------------------------------------------------------------------------- tree walk

    def visit(self, node: isl.ScheduleNode) -> isl.ScheduleNode:
        kind = node.get_type()
        if kind == isl.schedule_node_type.band:
            if node.band_member_get_coincident(0) and node.band_n_member() > 0:
                return self.make_unit(node, parallel=True)
            if not _has_parallel_band(node):
                return self.make_unit(node, parallel=False)
            for k in range(node.band_n_member()):  # one host loop per member: no peeled copies
                node = node.band_member_set_ast_loop_type(k, isl.ast_loop_type.atomic)
            return self.visit(node.child(0)).parent()
        if kind == isl.schedule_node_type.leaf:
            return self.make_unit(node, parallel=False)
        for k in range(node.n_children()):
            node = self.visit(node.child(k)).parent()
        return node

    def make_unit(self, node: isl.ScheduleNode, parallel: bool) -> isl.ScheduleNode:
        index = len(self.kernels)
        self.kernels.append(self.kernel(node, index, parallel))
        marked = node.insert_mark(isl.Id(f"kernel{index}", context=self.scop.ctx))
        child = marked.child(0)
        if child.get_type() != isl.schedule_node_type.leaf:
            child = child.cut()
        return child.parent()

    # --------------------------------------------------------------------------- kernels

    def kernel(self, node: isl.ScheduleNode, index: int, parallel: bool) -> Kernel:
        domain = node.get_domain()
        prefix = node.get_prefix_schedule_union_map().intersect_domain(domain)
        self.prefixes[f"kernel{index}"] = prefix
        host = tuple(self.names.seq("h", _n_out(prefix)))
        subtree = node.get_subtree_schedule_union_map().intersect_domain(domain)
        self.subtrees[f"kernel{index}"] = subtree
        sched = subtree.intersect_domain(_fix_prefix(prefix, host))
        stmts = tuple(sorted(_names(domain)))
        if not parallel or sched.is_empty():
            ast = self.names.ast_build(self.scop.context.params()).node_from_schedule_map(sched)
            return Kernel(index, False, stmts, host, (), (), 0, ast, (), (), (), KernelShape(0, 0, (), (), names=self.names))
        self.parallel[index] = self.n_parallel(node, sched)
        atomic = _atomic_statements(self.reductions, sched, self.parallel[index])
        shape, promotions, kept, ast, phases, buffers = self.parallel_body(node, index, sched, host, atomic)
        self.scop.ctx.reset_operations()  # the grid's bounds get the whole budget, not what is left
        gmin, gmax = _grid(self.scop.ctx, sched, shape.tile[: shape.n_block], shape.n_block, host)
        partial = node.band_get_partial_schedule()
        members = tuple(str(partial.get_at(k)) for k in range(shape.n_thread))
        return Kernel(
            index, True, stmts, host, shape.tile[: shape.n_block], shape.block, shape.n_block, ast,
            gmin, gmax, members, shape, promotions, kept, phases, atomic, buffers,
        )

    def n_parallel(self, node: isl.ScheduleNode, sched: isl.UnionMap) -> int:
        """The band's leading parallel members that the mapping uses. A member parallel only
        because its reduction runs with atomic additions stays sequential where two others are
        parallel without them: correlation's `corr[i][j] += …` over `k` made 2e9 atomic additions
        (16 ms of its 32 on an H100); sequential, each thread keeps its sum in a register."""
        n = _n_coincident(node)
        if n >= 3 and _atomic_statements(self.reductions, sched, n) and not _atomic_statements(self.reductions, sched, n - 1):
            return n - 1
        return n

    def parallel_body(
        self, node: isl.ScheduleNode, index: int, sched: isl.UnionMap, host: tuple[str, ...], atomic: frozenset[str]
    ) -> tuple[KernelShape, tuple[Promotion, ...], tuple[GlobalAccess, ...], isl.AstNode, dict[str, Phase], int]:
        """Tile the whole band and promote; where isl's budget runs out (skewed stencils), fall
        back to global memory, then to tiling only the parallel members, each with a quarter of
        the budget (a kernel that exhausted it once mostly does again: seidel's took 5 s more).
        Register tiles get half (REGISTER_SHARE): those that succeed need less, symm's spent 4.4 s
        before it failed."""
        no_copies = MemoryOptions(shared=False, private=False)
        attempts = [(True, self.options.memory, 1), (True, no_copies, 4), (False, no_copies, 4)]
        ctx = self.scop.ctx
        budget = ctx.get_max_operations()
        full_tiles = _FullTiles(sched)
        for whole_band, memory, share in attempts:
            for shape in self.shapes(node, index, whole_band):
                ctx.reset_operations()
                ctx.set_max_operations(budget // share // (REGISTER_SHARE if shape.tile == REGISTER_TILE else 1))
                try:
                    ext = _extended_instances(sched, shape)
                    own = replace(memory, private=False) if shape.vector > 1 else memory  # registers index points cyclically
                    promotions, kept = promote(self.scop, ext, shape, sched, own, atomic)
                    registers = any(p.place == "register" for p in promotions)
                    if shape.tile == REGISTER_TILE and not registers:
                        continue
                    buffers = _buffers(shape, promotions, own)
                    kernel_sched = _kernel_schedule(self.scop, sched, ext, shape, promotions, self.prefixes[f"kernel{index}"], buffers)
                    ast, phases = _phased_ast(self.scop, host, shape, kernel_sched, registers, full_tiles(shape), buffers)
                except isl.Error:
                    continue
                finally:
                    ctx.set_max_operations(budget)
                if memory is not self.options.memory:
                    kept = tuple(GlobalAccess(g.array, "the kernel was too costly to analyse for promotion") for g in kept)
                return shape, promotions, kept, ast, phases, buffers
        return (*self.plain_body(node, index, sched, host), 1)

    def plain_body(
        self, node: isl.ScheduleNode, index: int, sched: isl.UnionMap, host: tuple[str, ...]
    ) -> tuple[KernelShape, tuple[Promotion, ...], tuple[GlobalAccess, ...], isl.AstNode, dict[str, Phase]]:
        """The cheapest mapping: one AST over the band with tiles pinned to blocks and points to
        threads, no copies and no barriers (skewed stencils whose tiled ASTs exceed isl's budget)."""
        self.scop.ctx.reset_operations()
        shape = self.shape(node, index, whole_band=False)
        n_dims = _n_out(sched)
        mapping = _mapping_set(self.scop.ctx, self.scop, host, n_dims, shape)
        ast = self.names.ast_build(mapping.params()).node_from_schedule_map(sched.intersect_range(mapping))
        names = set(_names(sched.domain()))
        arrays = sorted({a.array for s in self.scop.statements if s.name in names for a in (*s.reads, *s.writes)})
        kept = tuple(GlobalAccess(a, "the kernel was too costly to analyse for promotion") for a in arrays)
        return KernelShape(0, shape.n_block, shape.block, shape.tile[: shape.n_block], shape.grid, self.names), (), kept, ast, {}

    def shapes(self, node: isl.ScheduleNode, index: int, whole_band: bool) -> list[KernelShape]:
        """The shapes to try, in order: register tiles (`REGISTER_TILE`) where the band has the
        form and the user gave no sizes, which stand only if the sums do go to registers."""
        default = self.shape(node, index, whole_band)
        if sizes_for(self.options.sizes, index) or self.options.tile_size != MappingOptions.tile_size:
            return [default]
        default = self._small_tiles(node, index, whole_band, default)
        if default.n_tiled != len(REGISTER_TILE) or default.n_thread != len(REGISTER_BLOCK):
            return [default]
        return [self.shape(node, index, whole_band, {"tile": REGISTER_TILE, "block": REGISTER_BLOCK}), default]

    def _small_tiles(self, node: isl.ScheduleNode, index: int, whole_band: bool, default: KernelShape) -> KernelShape:
        """`default`, or the same with SMALL_TILE-wide tiles where the default tiles give a big
        kernel too few blocks (MIN_BLOCKS)."""
        extents = _band_extents(node, self.sizes_in_bounds)
        if extents is None or math.prod(extents) < MIN_POINTS_FOR_SMALL_TILES:
            return default
        blocks = math.prod(-(-e // t) for e, t in zip(extents[: default.n_block], default.tile, strict=False))
        if blocks >= MIN_BLOCKS:
            return default
        small = self.shape(node, index, whole_band, {"tile": (SMALL_TILE,) * default.n_tiled})
        why = f"{SMALL_TILE}-wide tiles: {default.tile[0]}-wide ones give {blocks} blocks, fewer than a big GPU's {MIN_BLOCKS} multiprocessors"
        return replace(small, why=why)

    def shape(self, node: isl.ScheduleNode, index: int, whole_band: bool = True, sizes: Mapping[str, tuple[int, ...]] | None = None
    ) -> KernelShape:
        """Tiles for every member of a permutable band (only the parallel ones otherwise); blocks
        for up to two, threads for up to three leading parallel members."""
        n_par = self.parallel.get(index, _n_coincident(node))
        n_tiled = node.band_n_member() if node.band_get_permutable() and whole_band else n_par
        n_thread, n_block = min(n_par, 3), min(n_par, 2)
        sizes = sizes or sizes_for(self.options.sizes, index)
        tile = tuple(sizes.get("tile", ()))[:n_tiled]
        tile = tile + (self.options.tile_size,) * (n_tiled - len(tile))
        xyz = tuple(sizes.get("block", DEFAULT_BLOCKS.get(n_thread, ())))[:n_thread]
        block = tuple(_divisor_at_most(t, b) for t, b in zip(tile, reversed(xyz), strict=False))
        grid = tuple(reversed(tuple(sizes.get("grid", ()))[:n_block]))  # PPCG gives grid sizes x first
        vector = self.options.vector if _runs_fit(tile, block, self.options.vector) else 1
        return KernelShape(n_tiled, n_block, block, tile, grid if len(grid) == n_block else (), self.names, vector=vector)

    # --------------------------------------------------------------------------- host

    def host_ast(self, host_schedule: isl.Schedule) -> isl.AstNode:
        ctx = self.scop.ctx
        build = self.names.ast_build(self.scop.context.params())
        current: list[str] = []

        def before_mark(mark_id: isl.Id, b: isl.AstBuild) -> None:
            current.append(mark_id.get_name())

        def create_leaf(b: isl.AstBuild) -> isl.AstNode:
            # The host values of the kernel's h* parameters, in terms of the host loops (isl may
            # have folded a single-iteration host loop away, so go through the instances).
            name = current[-1]
            to_host = b.get_schedule().reverse().apply_range(self.prefixes[name])
            if to_host.is_empty():  # a kernel none of whose instances ever run
                return isl.AstNode.user_from_expr(isl.AstExpr.from_id(isl.Id(name, context=ctx)).call(isl.AstExprList.alloc(ctx, 0)))
            pma = isl.PwMultiAff.from_map(isl.Map.from_union_map(to_host).coalesce())
            pma = pma.set_tuple_id(isl.dim_type.out, isl.Id(name, context=ctx))
            return isl.AstNode.user_from_expr(_when(b, b.call_from_pw_multi_aff(pma)))

        build = _set_callback(build.set_before_each_mark(before_mark))
        build = _set_callback(build.set_create_leaf(create_leaf))
        # A launch runs every instance of its host values, so the instances of one kernel at the
        # same host values must meet in one leaf: otherwise isl may emit them in separate parts
        # (`S1[i] -> [0]` and `S0[i] -> [i]`: a launch at 0, then a loop launching from 0 again),
        # and every statement of that step runs twice (the periodic adjoint of issue 26).
        grouped = ctx.get_ast_build_group_coscheduled()
        ctx.set_ast_build_group_coscheduled(1)
        try:
            return build.node_from_schedule(host_schedule)
        finally:
            ctx.set_ast_build_group_coscheduled(grouped)


# A host leaf that runs only under a condition: ``hx_when(cond, kernel0(h0, h1))`` (`host_ast`
# emits it where a kernel's launches cover only some iterations of the loops around it).
WHEN = "hx_when"


def when_parts(e: isl.AstExpr) -> tuple[isl.AstExpr | None, isl.AstExpr]:
    """A user node's condition (None: always) and the call it guards."""
    if e.get_op_n_arg() == 3 and e.get_op_arg(0).get_type() == isl.ast_expr_type.id and e.get_op_arg(0).get_id().get_name() == WHEN:
        return e.get_op_arg(1), e.get_op_arg(2)
    return None, e


def _when(build: isl.AstBuild, call: isl.AstExpr) -> isl.AstExpr:
    """`call`, guarded by the iterations of the loops around it where the leaf has instances
    (``hx_when(cond, call)``), unless it has some at every iteration or a condition on the sizes
    alone would do (a launch with no instance is harmless, a second launch at the same values is
    not: fuzzer seed 193)."""
    points = isl.Set.from_union_set(build.get_schedule().range()).coalesce()
    no_instance = isl.Set.universe(points.get_space()).intersect_params(points.params().complement())
    cond = build.expr_from_set(points.union(no_instance).coalesce())
    if cond.get_type() == isl.ast_expr_type.int and cond.get_val().is_one():
        return call
    args = isl.AstExprList.alloc(build.get_ctx(), 2).add(build.expr_from_set(points)).add(call)
    return isl.AstExpr.from_id(isl.Id(WHEN, context=build.get_ctx())).call(args)


def _set_callback(result: object) -> isl.AstBuild:
    """islpy's callback setters return ``(build, callback)``; keep the callback alive."""
    if isinstance(result, tuple):
        build, keep = result
        _KEEP.append(keep)
        return build
    assert isinstance(result, isl.AstBuild)
    return result


_KEEP: list[object] = []


def _has_parallel_band(node: isl.ScheduleNode) -> bool:
    found = [False]

    def check(n: isl.ScheduleNode) -> bool:
        is_band = n.get_type() == isl.schedule_node_type.band and n.band_n_member() > 0
        if is_band and n.band_member_get_coincident(0):
            found[0] = True
        return not found[0]

    node.foreach_descendant_top_down(check)
    return found[0]


def _sizes_in_bounds(scop: Scop) -> isl.Set | None:
    """The sizes for which every access stays inside its array's declared extents, as C assumes:
    ``n <= 120`` where ``A[i + 1]`` with ``i < n - 1`` indexes a ``double A[120]``. None if isl
    gave up."""
    try:
        accesses = scop.reads().union(scop.writes()).intersect_domain(scop.domains())
        elements = isl.UnionSet.empty(isl.Space.params_alloc(scop.ctx, 0))
        for extent in scop.extents.values():
            elements = elements.union(isl.UnionSet.from_set(extent))
        outside = accesses.subtract_range(elements).domain().params()
        return scop.context.params().subtract(outside)
    except isl.Error:
        return None


def _box(image: isl.UnionSet) -> tuple[int, ...] | None:
    """How many values each dim of `image` (one space) takes; None where one has no constant bound."""
    if image.is_empty():
        return None
    box = isl.Set.from_union_set(image)
    extents = []
    for k in range(box.dim(isl.dim_type.set)):
        lo, hi = box.dim_min_val(k), box.dim_max_val(k)
        if not (lo.is_int() and hi.is_int()):
            return None
        extents.append(hi.to_python() - lo.to_python() + 1)
    return tuple(extents)


def _band_extents(node: isl.ScheduleNode, sizes: isl.Set | None) -> tuple[int, ...] | None:
    """How many values each member of the band takes with the sizes in `sizes`; None where one
    has no constant bound or isl gave up."""
    if sizes is None:
        return None
    try:
        return _box(node.get_domain().intersect_params(sizes).apply(node.band_get_partial_schedule_union_map()))
    except isl.Error:
        node.get_ctx().reset_operations()
        return None


def _n_coincident(node: isl.ScheduleNode) -> int:
    n = 0
    while n < node.band_n_member() and node.band_member_get_coincident(n):
        n += 1
    return n


def _n_out(umap: isl.UnionMap) -> int:
    maps: list[isl.Map] = []
    umap.foreach_map(maps.append)
    return maps[0].dim(isl.dim_type.out) if maps else 0


def _names(uset: isl.UnionSet) -> list[str]:
    sets: list[isl.Set] = []
    uset.foreach_set(sets.append)
    return [s.get_tuple_name() for s in sets]


def _fix_prefix(prefix: isl.UnionMap, host: tuple[str, ...]) -> isl.UnionSet:
    """The statement instances whose host-loop values equal the parameters ``h0, h1, …``."""
    ctx = prefix.get_ctx()
    if not host:
        return prefix.domain()
    dims = ", ".join(f"x{k}" for k in range(len(host)))
    eqs = " and ".join(f"x{k} = {h}" for k, h in enumerate(host))
    pinned = isl.Set.read_from_str(ctx, f"[{', '.join(host)}] -> {{ [{dims}] : {eqs} }}")
    return prefix.intersect_range(isl.UnionSet.from_set(pinned)).domain()


def _atomic_statements(reductions: isl.UnionMap | None, sched: isl.UnionMap, n_mapped: int) -> frozenset[str]:
    """Reduction statements whose self-dependence crosses the block/thread-mapped members."""
    if reductions is None or n_mapped == 0:
        return frozenset()
    out = set()
    for m in _maps(reductions.intersect_domain(sched.domain())):
        distances = isl.UnionMap.from_map(m).apply_domain(sched).apply_range(sched).deltas()
        for d in _sets(distances):
            same = " and ".join(f"d{k} = 0" for k in range(n_mapped))
            dims = ", ".join(f"d{k}" for k in range(d.dim(isl.dim_type.set)))
            zero = isl.Set.read_from_str(d.get_ctx(), f"{{ [{dims}] : {same} }}")
            if not d.reset_tuple_id().is_subset(zero):
                out.add(m.get_tuple_name(isl.dim_type.in_))
    return frozenset(out)


def _isl_params(scop: Scop) -> list[str]:
    """The parameters as isl spells them (`min` is an isl keyword: `min_`)."""
    return [isl_name(p) for p in scop.params]


def _sets(us: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    us.foreach_set(out.append)
    return out


def _extended_instances(sched: isl.UnionMap, shape: KernelShape) -> dict[str, isl.Map]:
    """Per statement, ``S[i…, T…, X…] -> S[i…]``: each instance with its tile origins ``T`` and its
    thread-mapped schedule values ``X``, which code generation needs at every statement."""
    maps: list[isl.Map] = []
    sched.foreach_map(maps.append)
    d = maps[0].dim(isl.dim_type.out)
    nm = shape.names
    xs, ts, ps = nm.seq("x", d), nm.seq("T", shape.n_tiled), nm.seq("X", shape.n_thread)
    cons = [f"{ts[k]} = {t} * floor({xs[k]} / {t})" for k, t in enumerate(shape.tile)]
    cons += [f"{ps[k]} = {xs[k]}" for k in range(shape.n_thread)]
    text = f"{{ [{', '.join(xs)}] -> [{', '.join(ts + ps)}] : {' and '.join(cons) or 'true'} }}"
    tx = isl.Map.read_from_str(maps[0].get_ctx(), text)
    out = {}
    for m in maps:
        name = m.get_tuple_name(isl.dim_type.in_)
        out[name] = m.apply_range(tx).domain_map().flatten_domain().set_tuple_name(isl.dim_type.in_, name)
    return out


# The kernel schedule: [T_block…, P1, T_seq…, P2, inner…]. P1 orders register loads (one position
# per array), the tile loops (BODY) and register stores; P2 orders, inside one tile, shared loads
# (one position per array), a barrier, the statements (BODY), a barrier, shared stores and a barrier
# before the next tile's loads.
BODY = 100
LOADS, STORES = 0, BODY + 10


def _buffers(shape: KernelShape, promotions: tuple[Promotion, ...], memory: MemoryOptions) -> int:
    """2 where the shared copies are double-buffered: the block walks its tiles in a sequential
    loop (gemm's `k`), every shared copy is only read, and twice the copies fit in shared memory.
    Tile `T`'s copy then runs in the step before `T`'s (into the other buffer, ``(T / tile) & 1``),
    with one barrier per step instead of two; CUDA issues it as an asynchronous copy
    (``cp.async``) that lands while the step computes. Else 1."""
    shared = [p for p in promotions if p.place == "shared"]
    if not (memory.double_buffer and shared and shape.n_tiled > shape.n_block):
        return 1
    if any(not p.written.is_empty() for p in shared) or 2 * sum(p.n_bytes for p in shared) > memory.max_shared_bytes:
        return 1
    return 2


def _kernel_schedule(
    scop: Scop, sched: isl.UnionMap, ext: dict[str, isl.Map], shape: KernelShape, promotions: tuple[Promotion, ...],
    prefix: isl.UnionMap, buffers: int = 1,
) -> isl.UnionMap:
    maps: list[isl.Map] = []
    sched.foreach_map(maps.append)
    d = maps[0].dim(isl.dim_type.out)
    inner = max([d, shape.n_thread] + [len(p.size) for p in promotions])
    lay = _Layout(scop, shape, inner)
    out = isl.UnionMap.empty(sched.get_space())
    xs = shape.names.seq("x", d)
    tiles = [f"{t} * floor({xs[k]} / {t})" for k, t in enumerate(shape.tile)]
    in_registers = any(p.place == "register" for p in promotions)
    order = _point_order(xs, shape) if in_registers else xs
    body = lay.lift(xs, tiles, BODY, BODY, order, threads=xs[: shape.n_thread])
    for m in maps:
        name = m.get_tuple_name(isl.dim_type.in_)
        out = out.union(isl.UnionMap.from_map(ext[name].apply_range(m).apply_range(body)))
    mine = frozenset(m.get_tuple_name(isl.dim_type.in_) for m in maps)
    ahead = shape.tile[shape.n_tiled - 1] if buffers == 2 else 0
    for g, p in enumerate(promotions):
        if not _iteration_local(scop, p.array, mine, prefix):
            out = out.union(_copies(lay, p, g, ahead if p.place == "shared" else 0))
    if any(p.place == "shared" for p in promotions):
        tiles_used = _tiles_used(ext, shape)
        writes_back = any(p.place == "shared" and not p.written.is_empty() for p in promotions)
        phases = (BODY + 1,) if ahead else (BODY - 1, BODY + 1, 2 * BODY) if writes_back else (BODY - 1, BODY + 1)
        if ahead:  # the step before the first tile copies it, and waits for it
            tiles_used = tiles_used.union(_shifted(tiles_used, shape.n_tiled - 1, -ahead)).coalesce()
        for phase in phases:
            ts = shape.names.seq("T", shape.n_tiled)
            lift = lay.lift(ts, ts, BODY, phase, [])
            out = out.union(isl.UnionMap.from_map(lift.intersect_domain(tiles_used).set_tuple_name(isl.dim_type.in_, f"sync{phase}")))
    return out


def _shifted(s: isl.Set, pos: int, by: int) -> isl.Set:
    """`s` moved by `by` along its dim `pos`."""
    n = s.dim(isl.dim_type.set)
    xs = [f"x{k}" for k in range(n)]
    ys = [f"{x} + ({by})" if k == pos else x for k, x in enumerate(xs)]
    move = isl.Map.read_from_str(s.get_ctx(), f"{{ [{', '.join(xs)}] -> [{', '.join(ys)}] }}")
    return s.apply(move.align_params(s.get_space()))


@dataclass(frozen=True)
class _Layout:
    scop: Scop
    shape: KernelShape
    inner: int

    def lift(
        self, dims: list[str], tiles: list[str], p1: int, p2: int, inner: list[str], threads: list[str] | None = None,
        zero_threads: bool = False,
    ) -> isl.Map:
        """``{ [dims] -> [kernel schedule] }`` with the block ids pinned and, for `threads`, the
        thread ids (``threads[k] ≡ t_k mod block_k``)."""
        sh, nm = self.shape, self.shape.names
        ys = [*tiles[: sh.n_block], str(p1), *tiles[sh.n_block :], str(p2)]
        ys += list(inner) + ["0"] * (self.inner - len(inner))
        names = nm.seq("y", len(ys))
        cons = [f"{n} = {v}" for n, v in zip(names, ys, strict=True)]
        cons += [f"{names[k]} = {t} * floor({names[k]} / {t}) and {sh.block_of(k, f'floor({names[k]} / {t})')}" for k, t in enumerate(sh.tile[: sh.n_block])]  # fmt: skip
        cons += [sh.thread_of(k, v) for k, v in enumerate(threads or [])]
        if zero_threads:
            cons += [f"{nm('t', k)} = 0" for k in range(len(threads or []), sh.n_thread)]
        return isl.Map.read_from_str(self.scop.ctx, f"[{', '.join(self.params())}] -> {{ [{', '.join(dims)}] -> [{', '.join(names)}] : {' and '.join(cons)} }}")

    def params(self) -> list[str]:
        sh = self.shape
        return [*_isl_params(self.scop), *sh.names.seq("b", sh.n_block), *sh.names.seq("t", sh.n_thread)]


def _copies(lay: _Layout, p: Promotion, g: int, ahead: int = 0) -> isl.UnionMap:
    """Loads before and stores after: shared tiles per tile, registers per block tile. With
    `ahead`, a shared tile's loads run in the step `ahead` before it (`_buffers`)."""
    sh, nm = lay.shape, lay.shape.names
    out = isl.UnionMap.empty(p.read.get_space().params())
    rank = p.read.dim(isl.dim_type.out)
    elems = nm.seq("a", rank)
    for direction, footprint in (("in", p.read), ("out", p.written)):
        if footprint.is_empty():
            continue
        points = footprint.wrap().flatten()
        if p.place == "shared":
            ts = nm.seq("T", sh.n_tiled)
            mapped = elems[max(0, rank - sh.n_thread) :]
            # the innermost element dim goes to the innermost thread dim
            thread_of = list(range(sh.n_thread - len(mapped), sh.n_thread))
            at = [*ts[:-1], f"{ts[-1]} - {ahead}"] if ahead else ts
            lift = lay.lift([*ts, *elems], at, BODY, (LOADS if direction == "in" else STORES) + g, elems)
            lift = _pin_threads(lay, lift, [*ts, *elems], dict(zip(thread_of, mapped, strict=True)))
        else:
            ts, xs = nm.seq("T", sh.n_block), nm.seq("X", sh.n_thread)
            zeros = ["0"] * (sh.n_tiled - sh.n_block)
            p1 = (LOADS if direction == "in" else STORES) + g
            lift = lay.lift([*ts, *xs, *elems], [*ts, *zeros], p1, 0, xs, threads=xs)
        name = f"{'load' if direction == 'in' else 'store'}_{p.local}"
        out = out.union(isl.UnionMap.from_map(lift.intersect_domain(points.reset_tuple_id()).set_tuple_name(isl.dim_type.in_, name)))
    return out


def _point_order(xs: list[str], shape: KernelShape) -> list[str]:
    """The order of a thread's loops over its points in a tile: the tiled members it is not
    mapped on first (gemm's `k`), then those it is (`i`, `j`), then the rest. The tiled band is
    permutable, so any order of its members is legal; this one reuses each value a step of `k`
    loads (``shared_B[k][t1]``) for all the thread's points, which hold their sums in registers.
    Only for kernels with register copies: heat-3d's stencil (shared memory) ran 0.83x as fast
    on an H100 with its unmapped member outermost."""
    n_thread, n_tiled = shape.n_thread, max(shape.n_tiled, shape.n_thread)
    return [*xs[n_thread:n_tiled], *xs[:n_thread], *xs[n_tiled:]]


def _iteration_local(scop: Scop, array: str, kernel: frozenset[str], prefix: isl.UnionMap) -> bool:
    """A scalar expanded over its loops that only the `kernel`'s statements touch, each element
    in one launch (`prefix`: instance -> host-loop values): each element lives in one iteration,
    which writes it before reading it, and nothing after the nest reads it: its register needs no
    load or store. An element written in one launch and read in another (the host loops may part
    the statements of one iteration: fuzzer seed 283) goes through the global buffer."""
    decl = next(a for a in scop.arrays if a.name == array)
    users = {s.name for s in scop.statements if any(a.array == array for a in (*s.reads, *s.writes))}
    if not (decl.per_iteration and users <= kernel):
        return False
    if _n_out(prefix) == 0:
        return True
    touched = scop.reads(array).union(scop.writes(array)).intersect_domain(prefix.domain())
    return touched.reverse().apply_range(prefix).is_single_valued()  # element -> host values


def _pin_threads(lay: _Layout, lift: isl.Map, dims: list[str], thread_of: dict[int, str]) -> isl.Map:
    """Threads share out a copy: element dim `thread_of[k]` ≡ t_k mod block_k; unused threads idle."""
    sh = lay.shape
    cons = []
    for k in range(sh.n_thread):
        v, t = thread_of.get(k), sh.names("t", k)
        if v is None:
            cons.append(f"{t} = 0")
        else:
            cons.append(f"{v} - {t} = {sh.block[k]} * floor(({v} - {t}) / {sh.block[k]})")
    text = f"[{', '.join(lay.params())}] -> {{ [{', '.join(dims)}] : {' and '.join(cons) or 'true'} }}"
    return lift.intersect_domain(isl.Set.read_from_str(lay.scop.ctx, text))


def _tiles_used(ext: dict[str, isl.Map], shape: KernelShape) -> isl.Set:
    out: isl.Set | None = None
    for m in ext.values():
        n_in = m.dim(isl.dim_type.in_)
        n_iter = n_in - shape.n_tiled - shape.n_thread
        t = m.domain().project_out(isl.dim_type.set, n_in - shape.n_thread, shape.n_thread)
        t = t.project_out(isl.dim_type.set, 0, n_iter).reset_tuple_id()
        out = t if out is None else out.union(t)
    assert out is not None
    return out.coalesce()


def _phased_ast(
    scop: Scop, host: tuple[str, ...], shape: KernelShape, kernel_sched: isl.UnionMap, registers: bool = False,
    full: isl.Set | None = None, buffers: int = 1,
) -> tuple[isl.AstNode, dict[str, Phase]]:
    """The kernel as an outer AST over tile loops and phases, whose domains do not depend on the
    thread ids — so barriers are never inside thread-dependent conditions — and one inner AST per
    phase for what the threads do in it. Double-buffered (`buffers` 2), a step's shared loads
    are the next tile's, full where that tile is."""
    n_prefix = shape.n_tiled + 2
    tile_pos = [*range(shape.n_block), *range(shape.n_block + 1, shape.n_tiled + 1)]
    groups: dict[tuple[int, int], isl.UnionMap] = {}
    maps: list[isl.Map] = []
    kernel_sched.foreach_map(maps.append)
    for m in maps:
        rng = m.range()
        if rng.is_empty():
            continue
        p1, p2 = (int(rng.dim_min_val(pos).to_python()) for pos in (shape.n_block, n_prefix - 1))
        groups[p1, p2] = groups.get((p1, p2), isl.UnionMap.empty(m.get_space().params())).union(isl.UnionMap.from_map(m))
    outer = isl.UnionMap.empty(kernel_sched.get_space().params())
    phases: dict[str, Phase] = {}
    for i, key in enumerate(sorted(groups)):
        name = f"phase{i}"
        prefix = _on_tile_lattice(_without_threads(_prefix(groups[key], n_prefix), shape), shape, tile_pos)
        prefix = prefix.set_tuple_name(name)
        outer = outer.union(isl.UnionMap.from_map(prefix.identity().reset_tuple_id(isl.dim_type.out)))
        is_sync = all(m.get_tuple_name(isl.dim_type.in_).startswith("sync") for m in _maps(groups[key]))
        # the body and the register copies run over the thread's own points (`_point_order`):
        # unrolled, their register indices are constants (`_unrolled`); shared copies are not
        unroll = None if not registers or (key[0] == BODY and key[1] != BODY) else 0 if key[0] != BODY else _thread_points_at(shape)
        if is_sync:
            phases[name] = Phase(name, None, tuple(tile_pos))
            continue
        inner = _inner_ast(scop, host, shape, groups[key], prefix, tile_pos, unroll)
        ahead = buffers == 2 and key[0] == BODY and key[1] < BODY
        own_full = _full_ahead(full, shape) if ahead and full is not None else full
        phases[name] = _specialized(Phase(name, inner, tuple(tile_pos)), scop, host, shape, groups[key], prefix, tile_pos, unroll, own_full)
    context = _thread_context(scop, host, shape, with_threads=False)
    return shape.names.ast_build(context).node_from_schedule_map(outer), phases


def _full_ahead(full: isl.Set, shape: KernelShape) -> isl.Set:
    """The steps whose next tile along the last sequential tile loop is full: `full` (over the
    tile origins as parameters) with that origin one tile ahead."""
    k = shape.n_tiled - 1
    origin, ahead = shape.names("T", k), shape.names("T", shape.n_tiled)  # the latter is unused
    pos = full.find_dim_by_name(isl.dim_type.param, origin)
    if pos < 0:
        return full
    moved = full.set_dim_name(isl.dim_type.param, pos, ahead)
    step = isl.Set.read_from_str(full.get_ctx(), f"[{origin}, {ahead}] -> {{ : {ahead} = {origin} + {shape.tile[k]} }}")
    moved = moved.align_params(step.get_space()).intersect(step.align_params(moved.get_space()))
    return moved.project_out(isl.dim_type.param, moved.find_dim_by_name(isl.dim_type.param, ahead), 1).coalesce()


def _on_tile_lattice(prefix: isl.Set, shape: KernelShape, tile_pos: list[int]) -> isl.Set:
    """The tiles (and phases) where a phase may run: `prefix` without its existentially quantified
    variables, on the lattice of the block's tile origins. An over-approximation, which the
    per-tile inner AST makes exact (a tile where a phase has nothing to do runs empty loops).
    Statements under a modulo guard (`if ((i + j) % 5 == 0)`) bring such variables, and isl spent
    minutes building the outer AST of their exact tile sets (floyd_warshall's init_array)."""
    if all(b.dim(isl.dim_type.div) == 0 for b in prefix.get_basic_sets()):
        return prefix
    ys = shape.names.seq("y", prefix.dim(isl.dim_type.set))
    on = [f"{ys[pos]} = {t} * floor({ys[pos]} / {t})" for pos, t in zip(tile_pos, shape.tile, strict=True)]
    on += [shape.block_of(k, f"floor({ys[tile_pos[k]]} / {shape.tile[k]})") for k in range(shape.n_block)]
    params = [str(prefix.get_dim_name(isl.dim_type.param, k)) for k in range(prefix.dim(isl.dim_type.param))]
    text = f"[{', '.join(params)}] -> {{ [{', '.join(ys)}] : {' and '.join(on)} }}"
    lattice = isl.Set.read_from_str(prefix.get_ctx(), text).align_params(prefix.get_space())
    return prefix.remove_divs().intersect(lattice).coalesce()


def _without_threads(s: isl.Set, shape: KernelShape) -> isl.Set:
    for k in range(shape.n_thread):
        pos = s.find_dim_by_name(isl.dim_type.param, shape.names("t", k))
        if pos >= 0:
            s = s.project_out(isl.dim_type.param, pos, 1)
    return s


def _maps(um: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    um.foreach_map(out.append)
    return out


def _prefix(um: isl.UnionMap, n_prefix: int) -> isl.Set:
    out: isl.Set | None = None
    for m in _maps(um):
        r = m.range()
        r = r.project_out(isl.dim_type.set, n_prefix, r.dim(isl.dim_type.set) - n_prefix)
        out = r if out is None else out.union(r)
    assert out is not None
    return out.coalesce()


def _full_tiles(sched: isl.UnionMap, shape: KernelShape) -> isl.Set | None:
    """The tile origins ``T0, T1, …`` (with the parameters) of the tiles whose every point lies
    within each tiled member's bounds over the kernel: there, no point needs a bound check
    (``if (ni >= T0 + t0 + 17)``, ``hx_min(T0 + 63, ni - 1)``), which in gemm's unrolled body
    cost a test per point per step of `k`. A heuristic: any set gives correct code, since the
    specialized AST is only run under its condition; so it gets `FULL_TILES_OPERATIONS` of isl's
    budget, and None (no specialized AST) where that runs out."""
    if shape.n_tiled == 0:
        return None
    ctx = sched.get_ctx()
    budget = ctx.get_max_operations()
    ctx.set_max_operations(min(budget, FULL_TILES_OPERATIONS) if budget else FULL_TILES_OPERATIONS)
    ctx.reset_operations()
    try:
        return _full_tile_origins(sched, shape)
    except isl.Error:
        return None
    finally:
        ctx.reset_operations()
        ctx.set_max_operations(budget)


FULL_TILES_OPERATIONS = 1_000_000
"""isl operations `_full_tiles` may take. Fuzzer seed 435 (bounds with `n % 7`, `ii / 2`, and
subscripts `/ 2`, `/ 4`) spent the kernel's whole budget there, for each tile shape tried, and
then the attempt failed: minutes per GPU compile; PolyBench's kernels need far less."""


@dataclass
class _FullTiles:
    """`_full_tiles` for each tile shape a kernel tries, given up for the others once isl's
    budget ran out on one: the kernel's domain, not the shape, makes it costly."""

    sched: isl.UnionMap
    costly: bool = False

    def __call__(self, shape: KernelShape) -> isl.Set | None:
        if self.costly or shape.n_tiled == 0:
            return None
        found = _full_tiles(self.sched, shape)
        self.costly = found is None
        return found


def _full_tile_origins(sched: isl.UnionMap, shape: KernelShape) -> isl.Set:
    values: isl.Set | None = None
    for m in _maps(sched):
        r = m.range().reset_tuple_id()
        values = r if values is None else values.union(r)
    assert values is not None
    ts = shape.names.seq("T", shape.n_tiled)
    full = isl.Set.universe(values.get_space().params())
    for k, t in enumerate(shape.tile[: shape.n_tiled]):
        n = values.dim(isl.dim_type.set)
        member = values.project_out(isl.dim_type.set, k + 1, n - k - 1).project_out(isl.dim_type.set, 0, k)
        box = isl.Set.read_from_str(values.get_ctx(), f"[{ts[k]}] -> {{ [x] : {ts[k]} <= x < {ts[k]} + {t} }}")
        member = member.align_params(box.get_space())
        box = box.align_params(member.get_space())
        outside = box.subtract(member).params()
        full = full.align_params(outside.get_space()).intersect(outside.complement())
    return full.coalesce()


def _specialized(
    phase: Phase, scop: Scop, host: tuple[str, ...], shape: KernelShape, group: isl.UnionMap, prefix: isl.Set,
    tile_pos: list[int], unroll: int | None, full: isl.Set | None,
) -> Phase:
    """`phase` with a second AST for full tiles (`_full_tiles`), where that one is simpler."""
    if full is None or full.is_empty() or phase.ast is None:
        return phase
    scop.ctx.reset_operations()  # a second AST of the phase, with a budget of its own
    ast = _inner_ast(scop, host, shape, group, prefix, tile_pos, unroll, full)
    if ast.to_C_str() == phase.ast.to_C_str():
        return phase
    context = _thread_context(scop, host, shape, with_threads=False, extra=shape.names.seq("T", shape.n_tiled)).params()
    when = shape.names.ast_build(context).expr_from_set(full.align_params(context.get_space()).gist(context))
    return Phase(phase.name, phase.ast, phase.tiles, ast, when)


def _inner_ast(
    scop: Scop, host: tuple[str, ...], shape: KernelShape, group: isl.UnionMap, prefix: isl.Set, tile_pos: list[int],
    unroll: int | None = None, full: isl.Set | None = None,
) -> isl.AstNode:
    """The phase's statements with the tile origins as parameters ``T0, T1, …``."""
    maps = _maps(group)
    n_out = maps[0].dim(isl.dim_type.out)
    ys, ts = shape.names.seq("y", n_out), shape.names.seq("T", shape.n_tiled)
    fix = " and ".join(f"{ys[pos]} = {t}" for pos, t in zip(tile_pos, ts, strict=True)) or "true"
    pin = isl.Set.read_from_str(scop.ctx, f"[{', '.join(ts)}] -> {{ [{', '.join(ys)}] : {fix} }}")
    n_prefix = prefix.dim(isl.dim_type.set)
    inner = isl.UnionMap.empty(group.get_space())
    for m in maps:
        pinned = m.intersect_range(pin)
        inner = inner.union(isl.UnionMap.from_map(pinned.project_out(isl.dim_type.out, 0, n_prefix)))
    tiles = [f"{ts[k]} = {t} * floor({ts[k]} / {t})" for k, t in enumerate(shape.tile)]
    tiles += [shape.block_of(k, f"floor({ts[k]} / {shape.tile[k]})") for k in range(shape.n_block)]
    context = _thread_context(scop, host, shape, extra=ts, constraints=tiles)
    pinned_prefix = prefix.reset_tuple_id()
    pin_prefix = isl.Set.read_from_str(scop.ctx, f"[{', '.join(ts)}] -> {{ [{', '.join(ys[:n_prefix])}] : {fix} }}")
    context = context.intersect_params(pinned_prefix.intersect(pin_prefix).params())
    if full is not None:
        context = context.intersect_params(full.align_params(context.get_space()))
    build = shape.names.ast_build(context)
    if unroll is not None:
        build = build.set_options(_unrolled(scop, shape, n_out - n_prefix, unroll, separate=full is not None))
    return build.node_from_schedule_map(inner)


MAX_UNROLL = 16  # points of one thread in a tile, at most, that unrolled loops give (more: registers run out)


def _thread_points_at(shape: KernelShape) -> int:
    """Where the loops over the thread-mapped members start in the body's point loops."""
    return max(shape.n_tiled, shape.n_thread) - shape.n_thread


def _unrolled(scop: Scop, shape: KernelShape, n_inner: int, at: int, separate: bool = False) -> isl.UnionMap:
    """isl's AST option that unrolls the loops over the points each thread runs of the band
    members it is mapped on (tile 32 over 16 threads: 2 points, ``c0`` and ``c0 + 16``), so that
    each point's register (``private_C[1][0]``) has a constant index: indexed by a loop counter,
    nvcc keeps the array in local memory (a 16-byte stack frame in gemm's kernel). With `separate`
    (full tiles), isl also splits the other loops where the statements they run change: gemm's
    first step of `k`, which alone runs `C *= beta`, is peeled out of the loop."""
    ys = shape.names.seq("y", n_inner)
    dims, points = [], 1
    for k in range(shape.n_thread):
        count = shape.tile[k] // shape.block[k]
        if at + k < n_inner and shape.tile[k] % shape.block[k] == 0 and count > 1 and points * count <= MAX_UNROLL:
            dims.append(k)
            points *= count
    options = [f"[{', '.join(ys)}] -> unroll[{at + k}]" for k in dims]
    if separate:
        options += [f"[{', '.join(ys)}] -> separate[{x}]" for x in range(n_inner) if x - at not in dims]
    text = "; ".join(options)
    return isl.UnionMap.read_from_str(scop.ctx, f"{{ {text} }}")


def _thread_context(
    scop: Scop, host: tuple[str, ...], shape: KernelShape, with_threads: bool = True,
    extra: list[str] | None = None, constraints: list[str] | None = None,
) -> isl.Set:
    nm = shape.names
    params = [*_isl_params(scop), *host, *nm.seq("b", shape.n_block)]
    params += nm.seq("t", shape.n_thread) if with_threads else []
    params += extra or []
    cons = [f"0 <= {nm('t', k)} < {b}" for k, b in enumerate(shape.block)] if with_threads else []
    cons += constraints or []
    text = f"[{', '.join(params)}] -> {{ : {' and '.join(cons) or 'true'} }}"
    return isl.Set.read_from_str(scop.ctx, text).intersect_params(scop.context.params())


def _mapping_set(ctx: isl.Context, scop: Scop, host: tuple[str, ...], n_dims: int, shape: KernelShape) -> isl.UnionSet:
    """Constraints on the unit's schedule dims: tile = block id, point ≡ thread id (mod block)."""
    nm = shape.names
    params = [*_isl_params(scop), *host, *nm.seq("b", shape.n_block), *nm.seq("t", shape.n_thread)]
    dims = nm.seq("x", n_dims)
    cons = []
    for k, (t, b) in enumerate(zip(shape.tile, shape.block, strict=False)):
        x, tid = dims[k], nm("t", k)
        if k < shape.n_block:
            cons.append(shape.block_of(k, f"floor({x}/{t})"))
        cons.append(f"({x} - {tid}) mod {b} = 0 and 0 <= {tid} < {b}")
    text = f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] : {' and '.join(cons) or 'true'} }}"
    return isl.UnionSet.from_set(isl.Set.read_from_str(ctx, text))


def _grid(
    ctx: isl.Context, sched: isl.UnionMap, tile: tuple[int, ...], n_block: int, host: tuple[str, ...]
) -> tuple[tuple[isl.AstExpr, ...], tuple[isl.AstExpr, ...]]:
    """First and last tile index per block dim, as AST expressions over parameters and h*. Where
    isl's budget runs out on the exact bounds (`GRID_OPERATIONS`), those of the image's box: a
    block whose tile holds no instance runs nothing."""
    if n_block == 0 or sched.is_empty():
        return (), ()
    image = isl.Set.from_union_set(sched.range())
    budget = ctx.get_max_operations()
    ctx.set_max_operations(min(budget, GRID_OPERATIONS) if budget else GRID_OPERATIONS)
    try:
        return _tile_bounds(ctx, image, tile, n_block)
    except isl.Error:
        ctx.reset_operations()
        ctx.set_max_operations(budget)
        return _tile_bounds(ctx, isl.Set.from_basic_set(image.simple_hull()), tile, n_block)
    finally:
        ctx.set_max_operations(budget)


GRID_OPERATIONS = 1_000_000
"""isl operations the exact first and last tiles of a grid may take before those of the box
around the image are used (fuzzer seed 435: the exact ones spent the whole budget, 90 s)."""


def _tile_bounds(
    ctx: isl.Context, image: isl.Set, tile: tuple[int, ...], n_block: int
) -> tuple[tuple[isl.AstExpr, ...], tuple[isl.AstExpr, ...]]:
    build = isl.AstBuild.from_context(image.params())
    lo, hi = [], []
    for k in range(n_block):
        tiles = image.project_out(isl.dim_type.set, k + 1, image.dim(isl.dim_type.set) - k - 1)
        tiles = tiles.project_out(isl.dim_type.set, 0, k)
        scaled = isl.Map.read_from_str(ctx, f"{{ [x] -> [floor(x/{tile[k]})] }}")
        tiles = tiles.apply(scaled)
        lo.append(build.expr_from_pw_aff(tiles.dim_min(0).coalesce()))
        hi.append(build.expr_from_pw_aff(tiles.dim_max(0).coalesce()))
    return tuple(lo), tuple(hi)


def _runs_fit(tile: tuple[int, ...], block: tuple[int, ...], vector: int) -> bool:
    """Whether the innermost thread member's points split into runs of at least `vector` per thread."""
    if vector <= 1 or not block:
        return False
    k = len(block) - 1
    return tile[k] % block[k] == 0 and tile[k] // block[k] >= vector


def _divisor_at_most(tile: int, block: int) -> int:
    """The largest divisor of `tile` not above `block`, so that threads cover a tile evenly."""
    for b in range(min(tile, block), 0, -1):
        if tile % b == 0:
            return b
    return 1
