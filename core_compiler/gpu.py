"""Host/device split and block/thread mapping, PPCG-style, on the isl schedule tree.

The tree is cut into *units*. A band whose outermost member is coincident (parallel) becomes a
parallel kernel: its band is tiled (``tile`` per member), up to two leading coincident members are
mapped to blocks (one tile per block) and up to three to threads, the innermost to ``x`` for
coalescing; a thread walks its tile with a stride of the block size. A subtree with no parallel band
becomes a one-thread kernel, so that data never moves back to the host between kernels. Outer
sequential bands stay on the host as loops; their values are kernel parameters ``h0, h1, …``.

Each kernel's body is its own isl AST, generated from the unit's subtree schedule with the host
values, block ids ``b*`` and thread ids ``t*`` as parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from core_compiler.scop.model import Scop

DEFAULT_BLOCKS = {1: (512,), 2: (32, 16), 3: (32, 4, 4)}  # CUDA order: x (innermost), y, z


@dataclass(frozen=True)
class MappingOptions:
    tile_size: int = 32
    sizes: dict[int, dict[str, tuple[int, ...]]] = field(default_factory=dict)  # kernel -> tile/block


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


def map_to_gpu(scop: Scop, schedule: isl.Schedule, options: MappingOptions = MappingOptions()) -> GpuProgram:
    mapper = _Mapper(scop, options)
    root = mapper.visit(schedule.get_root().child(0)) if schedule.get_root().n_children() else schedule.get_root()
    host_schedule = root.get_schedule()
    host_ast = mapper.host_ast(host_schedule)
    return GpuProgram(scop, schedule, host_ast, tuple(mapper.kernels))


@dataclass
class _Mapper:
    scop: Scop
    options: MappingOptions
    kernels: list[Kernel] = field(default_factory=list)
    prefixes: dict[str, isl.UnionMap] = field(default_factory=dict)  # kernel -> host values

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
        ctx = self.scop.ctx
        domain = node.get_domain()
        prefix = node.get_prefix_schedule_union_map().intersect_domain(domain)
        self.prefixes[f"kernel{index}"] = prefix
        n_host = _n_out(prefix)
        subtree = node.get_subtree_schedule_union_map().intersect_domain(domain)
        host = tuple(f"h{k}" for k in range(n_host))
        fixed = _fix_prefix(prefix, host)
        sched = subtree.intersect_domain(fixed)
        n_par = _n_coincident(node) if parallel else 0
        sizes = self.options.sizes.get(index, {})
        n_thread = min(n_par, 3)
        n_block = min(n_par, 2)
        tile = tuple(sizes.get("tile", (self.options.tile_size,) * n_thread))[:n_thread]
        tile = tile + (self.options.tile_size,) * (n_thread - len(tile))
        xyz = tuple(sizes.get("block", DEFAULT_BLOCKS.get(n_thread, ())))[:n_thread]
        block = tuple(reversed(xyz))  # outermost member first
        block = tuple(_divisor_at_most(t, b) for t, b in zip(tile, block, strict=False))
        n_dims = _n_out(sched) if not sched.is_empty() else 0
        mapping = _mapping_set(ctx, self.scop, host, n_dims, tile, block, n_block)
        kernel_sched = sched.intersect_range(mapping) if n_thread else sched
        params = self.scop.context.params()
        ast = isl.AstBuild.from_context(mapping.params() if n_thread else params).node_from_schedule_map(kernel_sched)
        gmin, gmax = _grid(ctx, sched, tile[:n_block], n_block, host)
        members = tuple(str(node.band_get_partial_schedule().get_at(k)) for k in range(n_thread))
        stmts = tuple(sorted(_names(domain)))
        return Kernel(index, parallel, stmts, host, tile[:n_block], block, n_block, ast, gmin, gmax, members)

    # --------------------------------------------------------------------------- host

    def host_ast(self, host_schedule: isl.Schedule) -> isl.AstNode:
        ctx = self.scop.ctx
        build = isl.AstBuild.from_context(self.scop.context.params())
        current: list[str] = []

        def before_mark(mark_id: isl.Id, b: isl.AstBuild) -> None:
            current.append(mark_id.get_name())

        def create_leaf(b: isl.AstBuild) -> isl.AstNode:
            # The host values of the kernel's h* parameters, in terms of the host loops (isl may
            # have folded a single-iteration host loop away, so go through the instances).
            name = current[-1]
            to_host = b.get_schedule().reverse().apply_range(self.prefixes[name])
            pma = isl.PwMultiAff.from_map(isl.Map.from_union_map(to_host).coalesce())
            pma = pma.set_tuple_id(isl.dim_type.out, isl.Id(name, context=ctx))
            return isl.AstNode.user_from_expr(b.call_from_pw_multi_aff(pma))

        build = _set_callback(build.set_before_each_mark(before_mark))
        build = _set_callback(build.set_create_leaf(create_leaf))
        return build.node_from_schedule(host_schedule)


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


def _mapping_set(
    ctx: isl.Context,
    scop: Scop,
    host: tuple[str, ...],
    n_dims: int,
    tile: tuple[int, ...],
    block: tuple[int, ...],
    n_block: int,
) -> isl.UnionSet:
    """Constraints on the unit's schedule dims: tile = block id, point ≡ thread id (mod block)."""
    params = [*scop.params, *host]
    params += [f"b{k}" for k in range(n_block)] + [f"t{k}" for k in range(len(block))]
    dims = [f"x{k}" for k in range(n_dims)]
    cons = []
    for k, (t, b) in enumerate(zip(tile, block, strict=True)):
        if k < n_block:
            cons.append(f"floor(x{k}/{t}) = b{k}")
        cons.append(f"(x{k} - t{k}) mod {b} = 0 and 0 <= t{k} < {b}")
    text = f"[{', '.join(params)}] -> {{ [{', '.join(dims)}] : {' and '.join(cons) or 'true'} }}"
    return isl.UnionSet.from_set(isl.Set.read_from_str(ctx, text))


def _grid(
    ctx: isl.Context, sched: isl.UnionMap, tile: tuple[int, ...], n_block: int, host: tuple[str, ...]
) -> tuple[tuple[isl.AstExpr, ...], tuple[isl.AstExpr, ...]]:
    """First and last tile index per block dim, as AST expressions over parameters and h*."""
    if n_block == 0 or sched.is_empty():
        return (), ()
    image = isl.Set.from_union_set(sched.range())
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


def _divisor_at_most(tile: int, block: int) -> int:
    """The largest divisor of `tile` not above `block`, so that threads cover a tile evenly."""
    for b in range(min(tile, block), 0, -1):
        if tile % b == 0:
            return b
    return 1
