"""The CPU schedule: the isl schedule's bands tiled for locality, parallel loops marked.

Every permutable band with at least two members is tiled (``tile_size`` per member), and inside a
tile the member with stride-1 accesses runs innermost (untiled, the band is interchanged the same
way); with ``jam``, the second-innermost member is then unrolled-and-jammed. A band with one member
is left as it is. The outermost band of each subtree whose first member is coincident gets a
``parallel`` mark, so a code generator can run that loop across threads (an OpenMP
``parallel for`` in C, ``GOMP_parallel`` in LLVM IR). Inner parallel loops are not marked: one level
of threads is what OpenMP runs well.

The AST is generated from the marked tree: a ``parallel`` mark node's child is the loop (a ``for``
node) of that band's first member, or what isl made of it (an ``if``/block when the loop was
split or has a single iteration), which generators then run sequentially.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from core_compiler.invariant import LoopFacts, invariant_elements
from core_compiler.scop.model import Scop

PARALLEL_MARK = "parallel"
INDEPENDENT = "independent"  # the annotation of a ``for`` node that carries no dependence


@dataclass(frozen=True)
class CpuOptions:
    tile_size: int = 32  # 0 or 1: no tiling
    parallel: bool = True  # mark parallel loops
    jam: int = 0  # > 1: unroll-and-jam the second-innermost loop of each tile (band) by this much


@dataclass(frozen=True, eq=False)
class CpuProgram:
    scop: Scop
    schedule: isl.Schedule  # tiled and marked
    ast: isl.AstNode


def cpu_program(
    scop: Scop, schedule: isl.Schedule, options: CpuOptions = CpuOptions(), deps: isl.UnionMap | None = None
) -> CpuProgram:
    """Tile, interchange and mark `schedule`; with `deps`, loops are annotated (`build_ast`)."""
    root = schedule.get_root()
    if root.n_children():
        root = _transform(root.child(0), options, inside_parallel=False, scop=scop).get_schedule().get_root()
    tiled = root.get_schedule()
    return CpuProgram(scop, tiled, build_ast(scop, tiled, deps))


# -------------------------------------------------------------------------- independent loops


def build_ast(scop: Scop, schedule: isl.Schedule, deps: isl.UnionMap | None = None) -> isl.AstNode:
    """The AST of `schedule`; given the SCoP's dependences, every ``for`` node is annotated with
    `INDEPENDENT` when no dependence is carried by that loop (its iterations touch no element
    another iteration writes), the fact a vectorizer otherwise has to check at run time, and
    carries a `LoopFacts` with the loop's invariant elements (`core_compiler.invariant`)."""
    build = isl.AstBuild.from_context(scop.context.params())
    if deps is None:
        return build.node_from_schedule(schedule)
    ctx = scop.ctx

    def before_for(b: isl.AstBuild) -> isl.Id:
        try:  # no exception may cross isl's C callback (it corrupts the heap): assume carried
            independent = _carries_nothing(b.get_schedule(), deps)
        except Exception:
            independent = False
        try:
            invariant = invariant_elements(b, scop)
        except Exception:
            invariant = ()
        facts = LoopFacts(independent, invariant)
        return isl.Id(INDEPENDENT if independent else "carries", user=facts, context=ctx)

    build, keep = build.set_before_each_for(before_for)
    ast = build.node_from_schedule(schedule)
    del keep
    return ast


def _carries_nothing(schedule: isl.UnionMap, deps: isl.UnionMap) -> bool:
    """No dependence between instances that agree on every outer loop differs on the last one
    (PPCG's test). `schedule` maps instances to the loop values down to this loop."""
    flat = _union([m.flatten_range() for m in _maps(schedule)], schedule)
    domain = flat.domain()
    pairs = deps.intersect_domain(domain).intersect_range(domain).apply_domain(flat).apply_range(flat)
    for m in _maps(pairs):
        space = m.get_space()
        if not space.domain().is_equal(space.range()):
            return False
        delta = m.deltas()
        n = delta.dim(isl.dim_type.set)
        for k in range(n - 1):
            delta = delta.fix_dim_si(k, 0)
        if n and not delta.is_subset(delta.fix_dim_si(n - 1, 0)):
            return False
    return True


def _maps(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def _union(maps: list[isl.Map], like: isl.UnionMap) -> isl.UnionMap:
    out = isl.UnionMap.empty(like.get_space())
    for m in maps:
        out = out.union(isl.UnionMap.from_map(m))
    return out


def _transform(node: isl.ScheduleNode, options: CpuOptions, inside_parallel: bool, scop: Scop) -> isl.ScheduleNode:
    """Tile (or, untiled, interchange) and mark the subtree at `node`; returns the node at the same
    position."""
    if node.get_type() == isl.schedule_node_type.band and node.band_n_member() > 0:
        n = node.band_n_member()
        permutable = n >= 2 and bool(node.band_get_permutable())
        order = _point_order(node, scop) if permutable else list(range(n))
        if permutable and options.tile_size > 1:
            sizes = isl.MultiVal.zero(node.band_get_space())
            for k in range(n):
                sizes = sizes.set_val(k, isl.Val.int_from_si(node.get_ctx(), options.tile_size))
            points = _permute(node.band_tile(sizes).child(0), order)  # tile band, point band
            inner, node = True, points.parent()
        else:
            node = _permute(node, order)
            inner = False
        parallel = options.parallel and not inside_parallel and bool(node.band_member_get_coincident(0))
        node = _transform_children(node.child(0) if inner else node, options, inner or inside_parallel or parallel, scop)
        if permutable and options.jam > 1:
            node = _jam(node, options.jam)
        node = node.parent() if inner else node
        if parallel:
            node = node.insert_mark(isl.Id(PARALLEL_MARK, context=node.get_ctx()))
        return node
    return _transform_children(node, options, inside_parallel, scop)


def _jam(band: isl.ScheduleNode, factor: int) -> isl.ScheduleNode:
    """Unroll-and-jam: strip-mine the band's second-innermost member by `factor` and unroll the
    strip inside the innermost loop (legal: the band is permutable), so ``factor`` rows share each
    load of the innermost loop and keep ``factor`` independent sums — register tiling."""
    n = band.band_n_member()
    sizes = isl.MultiVal.zero(band.band_get_space())
    for k in range(n):
        sizes = sizes.set_val(k, isl.Val.int_from_si(band.get_ctx(), factor if k == n - 2 else 1))
    strip = band.band_tile(sizes).child(0)
    return strip.band_member_set_ast_loop_type(n - 2, isl.ast_loop_type.unroll).parent()


def _transform_children(node: isl.ScheduleNode, options: CpuOptions, inside_parallel: bool, scop: Scop) -> isl.ScheduleNode:
    for k in range(node.n_children()):
        node = _transform(node.child(k), options, inside_parallel, scop).parent()
    return node


# ------------------------------------------------------------------------------ point-loop order


def _point_order(band: isl.ScheduleNode, scop: Scop) -> list[int]:
    """Inside a tile the loops may run in any order (the band is permutable): put innermost the
    member along which most accesses touch consecutive elements (and parallel ones first among
    equals), so the innermost loop vectorizes — gemm's point loops become i, k, j, not i, j, k.
    Scored on the band before tiling, whose members are plain iterators."""
    n = band.band_n_member()
    scores = [_score(band, m, scop) for m in range(n)]
    best = max(range(n), key=lambda m: (scores[m], m))
    if best == n - 1 or scores[best] <= scores[n - 1]:
        return list(range(n))
    return [m for m in range(n) if m != best] + [best]


def _permute(points: isl.ScheduleNode, order: list[int]) -> isl.ScheduleNode:
    if order == sorted(order):
        return points
    partial = points.band_get_partial_schedule()
    coincident = [bool(points.band_member_get_coincident(m)) for m in order]
    mupa = partial
    for k, m in enumerate(order):
        mupa = mupa.set_at(k, partial.get_at(m))
    node = points.delete().insert_partial_schedule(mupa).band_set_permutable(1)
    for k, c in enumerate(coincident):
        node = node.band_member_set_coincident(k, int(c))
    return node


def _score(band: isl.ScheduleNode, member: int, scop: Scop) -> float:
    """+1 per access whose last subscript moves by ±1 along the member, -1 per access it strides
    over (the member moves an outer subscript); +0.5 when the member is parallel. Moving "along
    the member" means the step in the statement's iterators that advances this member by one and
    keeps the band's others fixed: ``j`` for ``(t, t + i, t + j)``'s last member, as for a plain
    ``j``. Accesses of the band's deepest statements count fully, the others (a ``t[i] = 0``
    before the ``j`` loop, run once per ``j`` loop) a hundredth: they execute far less often."""
    score = 0.5 if band.band_member_get_coincident(member) else 0.0
    maps = _maps(band.band_get_partial_schedule_union_map())
    deepest = max((m.dim(isl.dim_type.in_) for m in maps), default=0)
    for m in maps:
        stmt = scop.statement(m.get_tuple_name(isl.dim_type.in_))
        step = _step(m.intersect_domain(stmt.domain), member)
        if step is None:
            continue
        weight = 1.0 if m.dim(isl.dim_type.in_) == deepest else 0.01
        for a in (*stmt.reads, *stmt.writes):
            moves = [sum(i.coeff(it) * d for it, d in zip(stmt.iterators, step, strict=True)) for i in a.info.indices]
            if not moves:
                continue
            if abs(moves[-1]) == 1 and not any(moves[:-1]):
                score += weight
            elif any(moves[:-1]):
                score -= weight
    return score


def _step(band_map: isl.Map, member: int) -> tuple[int, ...] | None:
    """The change of a statement's iterators that advances band member `member` by one and keeps
    the others: the deltas of ``S -> B -> B + e_member -> S``; None when there is no such single
    constant step (the member is constant for the statement, or the band is not invertible)."""
    names = [f"b{k}" for k in range(band_map.dim(isl.dim_type.out))]
    moved = [f"{b} + 1" if k == member else b for k, b in enumerate(names)]
    shift = isl.Map(f"{{ [{', '.join(names)}] -> [{', '.join(moved)}] }}", context=band_map.get_ctx())
    shift = shift.align_params(band_map.get_space())
    moves = band_map.apply_range(shift).apply_range(band_map.reverse()).deltas()
    if moves.is_empty() or not moves.is_singleton():
        return None
    point = moves.sample_point()
    return tuple(point.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(moves.dim(isl.dim_type.set)))
