"""The CPU schedule: the isl schedule's bands tiled for locality, parallel loops marked.

Every permutable band with at least two members is tiled (``tile_size`` per member), and inside a
tile the member with stride-1 accesses runs innermost (untiled, the band is interchanged the same
way); with ``jam``, the member around the innermost (or, with ``jam_loops=2``, the two: register
tiles) is then unrolled-and-jammed, and with ``isolate`` the strips that are whole are generated
apart from the rest, so that their copies need no tests. A band with one member is left as it
is. The outermost band of each subtree whose first member is coincident gets a ``parallel``
mark, so a code generator can run that loop across threads (an OpenMP ``parallel for`` in C,
``GOMP_parallel`` in LLVM IR). A band whose first member is not, but another member's loop
carries no dependence at all (trmm's ``j``), runs that member's tiles, or untiled its strips,
outermost. A marked loop whose iterations all do the same work (`_uniform`) is marked ``parallel
blocks``: one block of iterations per thread, which keeps each thread on its own columns as the
loops around it move on, and keeps neighbouring strips, which write the same cache lines, on one
thread; a triangular one is dealt out in chunks. Otherwise a tiled band runs its tiles in
wavefronts, the second tile loop parallel; an untiled one is split above its first member
(other than the innermost) whose loop carries no dependence once the loops before it are fixed,
which is then marked (seidel's second loop: the dependences decide this, isl's coincidence
flags are not enough). With ``privatize``, an untiled band whose first loop carries only the
reuse of arrays that every iteration writes before it reads them (doitgen's ``sum``, a C89
temporary declared before the loop) is marked ``parallel private(sum)``: each thread works on a
copy, and the one that runs the last iteration copies it back (OpenMP's ``lastprivate``; the C
target prints no pragma for it). Loops inside a marked one are not marked: one level of threads is what
OpenMP runs well. Register tiles under a marked loop are isolated below it, so that it stays one
loop.

The AST is generated from the marked tree: a ``parallel`` mark node's child is the loop (a ``for``
node) of that band's first member, or what isl made of it (an ``if``/block when the loop was
split or has a single iteration), which generators then run sequentially; where isl left out a
single-iteration loop and a ``for`` inside it comes right below, the mark is dropped (`loop_of_mark`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import islpy as isl

from core_compiler.scop.dependences import Dependences
from core_compiler.scop.model import Scop
from core_compiler.transform.invariant import LoopFacts, invariant_elements

_T: Any = isl.ast_node_type  # its members `for_`, `if_` are unknown to the stubs
PARALLEL_MARK = "parallel"
INDEPENDENT = "independent"  # the annotation of a ``for`` node that carries no dependence


@dataclass(frozen=True)
class CpuOptions:
    tile_size: int = 32  # 0 or 1: no tiling
    tile_sizes: tuple[int, ...] = ()  # per band member, outermost first, where given (the tuner's); else `tile_size`
    parallel: bool = True  # mark parallel loops
    jam: int = 0  # > 1: unroll-and-jam the loop(s) around the innermost one of each tile (band) by this much
    jam_loops: int = 1  # how many loops around the innermost are jammed: 2 makes jam x jam register tiles
    isolate: bool = False  # jammed strips that are whole run apart from the rest, without guards
    privatize: bool = False  # with dependences: a loop may run in parallel on per-thread copies of arrays


@dataclass(frozen=True, eq=False)
class CpuProgram:
    scop: Scop
    schedule: isl.Schedule  # tiled and marked
    ast: isl.AstNode


def cpu_program(
    scop: Scop, schedule: isl.Schedule, options: CpuOptions = CpuOptions(), deps: Dependences | None = None
) -> CpuProgram:
    """Tile, interchange and mark `schedule`; with `deps`, loops are annotated (`build_ast`).
    Gets isl's whole operation budget; raises `isl.Error` when that does not suffice, also
    after trying again without `isolate` (separating whole strips costs the most)."""
    try:
        return _program(scop, schedule, options, deps)
    except isl.Error:
        if not options.isolate:
            raise
    return _program(scop, schedule, replace(options, isolate=False), deps)


def _program(scop: Scop, schedule: isl.Schedule, options: CpuOptions, deps: Dependences | None) -> CpuProgram:
    scop.ctx.reset_operations()
    context = _Context(options, scop, deps, None if deps is None else deps.union())
    root = schedule.get_root()
    if root.n_children():
        root = _transform(root.child(0), context, inside_parallel=False).get_schedule().get_root()
    tiled = root.get_schedule()
    return CpuProgram(scop, tiled, build_ast(scop, tiled, context.union))


# -------------------------------------------------------------------------- independent loops


def build_ast(scop: Scop, schedule: isl.Schedule, deps: isl.UnionMap | None = None) -> isl.AstNode:
    """The AST of `schedule`; given the SCoP's dependences, every ``for`` node carries a
    `LoopFacts` with the loop's invariant elements (`core_compiler.transform.invariant`), and an innermost
    one is annotated with `INDEPENDENT` when it carries no dependence (its iterations touch no
    element another iteration writes), the fact a vectorizer otherwise has to check at run time.
    (Outer loops are not tested: vectorizers take innermost loops, and on tiled, skewed
    schedules the test costs seconds.) After a compute-out, the remaining loops get no facts."""
    build, keep_marks = isl.AstBuild.from_context(scop.context.params()).set_after_each_mark(loop_of_mark)
    if deps is None:
        return build.node_from_schedule(schedule)
    ctx = scop.ctx
    gave_up = False

    def facts(node: isl.AstNode, b: isl.AstBuild) -> LoopFacts:
        nonlocal gave_up
        if gave_up:
            return LoopFacts(False)
        try:
            independent = not contains(node.for_get_body(), _T.for_) and _carries_nothing(b.get_schedule(), deps)
            return LoopFacts(independent, invariant_elements(b, scop))
        except Exception:  # isl's compute-out, most likely
            gave_up = True
            ctx.reset_operations()  # else isl refuses even the annotation below
            return LoopFacts(False)

    def after_for(node: isl.AstNode, b: isl.AstBuild) -> isl.AstNode:
        # no exception may cross isl's C callback (it corrupts the heap): `facts` raises none
        loop = facts(node, b)
        return node.set_annotation(isl.Id(INDEPENDENT if loop.independent else "carries", user=loop, context=ctx))

    build, keep = build.set_after_each_for(after_for)
    ast = build.node_from_schedule(schedule)
    del keep, keep_marks
    return ast


def loop_of_mark(mark: isl.AstNode, b: isl.AstBuild) -> isl.AstNode:
    """The ``parallel`` mark, or its child where the marked loop has one iteration and the
    ``for`` below the mark is a loop inside it (a wavefront of skewed tiles over 4 time steps:
    one time tile, so its tile loop is gone, and the next one carries dependences). isl names
    the loop of schedule dimension k with a prefix and k (``c3``, ``hx_c3``): `AstBuild`'s
    ``set_after_each_mark`` callback."""
    child = mark.mark_get_node()
    if child.get_type() != _T.for_ or not mark.mark_get_id().get_name().startswith(PARALLEL_MARK):
        return mark
    depth = b.get_schedule_space().dim(isl.dim_type.set)
    counter = re.search(r"\d+$", child.for_get_iterator().get_id().get_name())
    return mark if counter is not None and int(counter[0]) == depth else child


def contains(node: isl.AstNode, kind: isl.ast_node_type) -> bool:
    """Whether the AST `node` is or holds a node of `kind` (a ``for``, a mark)."""
    t = node.get_type()
    if t == kind:
        return True
    if t == _T.block:
        nodes = node.block_get_children()
        return any(contains(nodes.get_at(k), kind) for k in range(nodes.n_ast_node()))
    if t == _T.for_:
        return contains(node.for_get_body(), kind)
    if t == _T.mark:
        return contains(node.mark_get_node(), kind)
    if t == _T.if_:
        return contains(node.if_get_then_node(), kind) or bool(node.if_has_else_node() and contains(node.if_get_else_node(), kind))
    return False


def _carries_nothing(schedule: isl.UnionMap, deps: isl.UnionMap) -> bool:
    """No dependence between instances that agree on every outer loop differs on the last one
    (PPCG's test). `schedule` maps instances to the loop values down to this loop."""
    flat = _flat(schedule)
    domain = flat.domain()
    pairs = deps.intersect_domain(domain).intersect_range(domain).apply_domain(flat).apply_range(flat)
    for m in _maps(pairs):
        space = m.get_space()
        if not space.domain().is_equal(space.range()):
            return False
        n = m.dim(isl.dim_type.in_)
        for k in range(n - 1):  # the pairs in one iteration of every outer loop (before deltas: fewer pieces)
            m = m.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
        last = (isl.dim_type.in_, n - 1, isl.dim_type.out, n - 1)
        if n and not (m.order_lt(*last).is_empty() and m.order_gt(*last).is_empty()):
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


@dataclass(frozen=True, eq=False)
class _Context:
    options: CpuOptions
    scop: Scop
    deps: Dependences | None  # without them, only loops isl marked coincident run in parallel
    union: isl.UnionMap | None  # all of them


def member_tile(options: CpuOptions, k: int) -> int:
    """The tile size of band member `k`: `tile_sizes`' where it names one, else `tile_size`."""
    return options.tile_sizes[k] if k < len(options.tile_sizes) and options.tile_sizes[k] > 1 else options.tile_size


def _transform(node: isl.ScheduleNode, context: _Context, inside_parallel: bool) -> isl.ScheduleNode:
    """Tile (or, untiled, interchange) and mark the subtree at `node`; returns the node at the same
    position."""
    if node.get_type() != isl.schedule_node_type.band or node.band_n_member() == 0:
        return _transform_children(node, context, inside_parallel)
    options = context.options
    n = node.band_n_member()
    permutable = n >= 2 and bool(node.band_get_permutable())
    skewed_tiles = permutable and options.isolate and options.tile_size > 1 and _skewed(node)
    order = _point_order(node, context.scop) if permutable else list(range(n))
    threads = options.parallel and not inside_parallel  # this band's loops may start the threads
    tiled = permutable and options.tile_size > 1
    inner = False  # whether the band was split above a member that runs in parallel
    private: tuple[str, ...] | None = None  # the arrays each thread gets a copy of
    if tiled:
        sizes = isl.MultiVal.zero(node.band_get_space())
        for k in range(n):
            sizes = sizes.set_val(k, isl.Val.int_from_si(node.get_ctx(), member_tile(options, k)))
        across = None if not threads or node.band_member_get_coincident(0) else _parallel_member(node, context)
        if threads and across is None and not node.band_member_get_coincident(0):  # a wavefront, below
            node = _tiles_from_lower_bounds(node)
        even = threads and _uniform(node, across or 0, context)
        node = node.band_tile(sizes)  # tile band, point band
        if across is not None:  # trmm's (k, i, j): the tiles of j first, in parallel
            node = _permute(node, [across, *(k for k in range(n) if k != across)]).band_member_set_coincident(0, 1)
        parallel = threads and bool(node.band_member_get_coincident(0))
        depth = 1
        if threads and not parallel:
            node, depth = _wavefront(node), 3  # tile band, mark, tile band, point band
        points = _permute(_descend(node, depth), order)
        inside = True
    else:
        points, depth = _permute(node, order), 0
        parallel = threads and bool(points.band_member_get_coincident(0))
        if threads and not parallel:  # doitgen's r loop, with a copy of sum per thread
            private = _privatized(points, context)
            parallel = private is not None
        across = None if parallel or not threads else _parallel_member(points, context)
        even = (parallel or across is not None) and _uniform(points, across or 0, context)
        if across is not None:  # gramschmidt's (i, j): strips of j first, in parallel
            points, depth, parallel = _strips(points, across, STRIP), 1, True
        split = None if parallel or not threads else _inner_parallel(points, context)
        if split is not None:  # seidel's: its first loop carries a dependence, the second none inside it
            points, depth, inner = points.band_split(split).child(0), 1, True
        inside = inside_parallel or parallel or inner
    points = _transform_children(points, context, inside)
    if permutable and options.jam > 1:
        jam = replace(options, isolate=options.isolate and not skewed_tiles)
        points = _jam(points, jam, whole_first=inner or (parallel and not tiled and across is None))
    if inner:
        points = _mark(points, ParallelMark(blocks=_uniform(points, 0, context)))
    node = _ascend(points, depth)
    return _mark(node, ParallelMark(private or (), blocks=even)) if parallel else node


@dataclass(frozen=True)
class ParallelMark:
    """What a ``parallel`` mark says about the loop below it, and its name in the tree:
    ``parallel``, ``parallel private(sum, t)``, ``parallel blocks``."""

    private: tuple[str, ...] = ()  # arrays each thread works on a copy of (`_privatized`)
    blocks: bool = False  # each thread runs one block of consecutive iterations (OpenMP's static schedule)

    @property
    def name(self) -> str:
        clauses = ([f"private({', '.join(self.private)})"] if self.private else []) + (["blocks"] if self.blocks else [])
        return " ".join([PARALLEL_MARK, *clauses])

    @staticmethod
    def parse(name: str) -> ParallelMark | None:
        """The mark named `name`, None for other marks."""
        head, _, rest = name.partition(" ")
        if head != PARALLEL_MARK:
            return None
        private = re.search(r"private\(([^)]*)\)", rest)
        return ParallelMark(tuple(private.group(1).split(", ")) if private else (), rest.endswith("blocks"))


def _mark(node: isl.ScheduleNode, mark: ParallelMark = ParallelMark()) -> isl.ScheduleNode:
    return node.insert_mark(isl.Id(mark.name, context=node.get_ctx()))


def _privatized(band: isl.ScheduleNode, context: _Context) -> tuple[str, ...] | None:
    """The arrays to copy per thread so that the band's first loop runs in parallel (OpenMP's
    ``lastprivate``), or None: the loop carries only anti and output dependences, on arrays
    (doitgen's ``sum``, a scalar temporary declared before the loop) that each iteration writes
    before it reads them (`_private`)."""
    deps = context.deps
    if deps is None or not context.options.privatize:
        return None
    partial = band.band_get_partial_schedule()
    first = partial.drop_dims(isl.dim_type.set, 1, partial.dim(isl.dim_type.set) - 1)
    loop = band.get_prefix_schedule_union_map().flat_range_product(isl.UnionMap.from_multi_union_pw_aff(first))
    loop = _flat(loop).intersect_domain(band.get_domain())
    try:
        carried = {(d.kind, d.array) for d in deps.deps if not _carries_nothing(loop, isl.UnionMap.from_map(d.relation))}
        arrays = tuple(sorted({array for _, array in carried}))
        if carried and all(kind != "flow" for kind, _ in carried) and all(_private(a, loop, context.scop) for a in arrays):
            return arrays
    except isl.Error:  # a compute-out: the loop runs sequentially
        context.scop.ctx.reset_operations()
    return None


def _private(array: str, loop: isl.UnionMap, scop: Scop) -> bool:
    """Whether a copy of `array` per thread keeps the loop's results (`loop` maps the instances
    in it to the values of the loops around them, itself last): every value an iteration reads
    in it was written by that iteration, and every iteration writes the same elements, so the
    copy of the thread that runs the last one holds what the array holds after the loop. Arrays
    of unknown size are not copied, nor those an opaque call may write (or the hidden state of
    calls: `HIDDEN_STATE`)."""
    if any(a.may for s in scop.statements for a in s.writes if a.array == array):
        return False
    decl = next((a for a in scop.arrays if a.name == array), None)
    if decl is None:
        return False
    if decl.kind == "array" and (not decl.extents or decl.extents[0] is None):
        return False
    domain = loop.domain()
    info = isl.UnionAccessInfo.from_sink(scop.reads(array).intersect_domain(domain))
    flow = info.set_must_source(scop.writes(array)).set_schedule_map(scop.schedule()).compute_flow()
    sources = flow.get_must_dependence()
    if not flow.get_must_no_source().is_empty() or not sources.domain().is_subset(domain):
        return False
    if not all(m.deltas().is_subset(_zero(m.deltas())) for m in _maps(sources.apply_domain(loop).apply_range(loop))):
        return False
    iterations = isl.Set.from_union_set(loop.range())
    n = iterations.dim(isl.dim_type.set)
    outer = isl.Map.identity(iterations.get_space().map_from_set()).project_out(isl.dim_type.out, n - 1, 1)
    written = isl.Map.from_union_map(loop.reverse().apply_range(scop.writes(array).intersect_domain(domain)))
    every = outer.intersect_domain(iterations).apply_range(written.apply_domain(outer))
    return written.is_equal(every)


def _flat(schedule: isl.UnionMap) -> isl.UnionMap:
    return _union([m.flatten_range() for m in _maps(schedule)], schedule)


def _zero(delta: isl.Set) -> isl.Set:
    for k in range(delta.dim(isl.dim_type.set)):
        delta = delta.fix_dim_si(k, 0)
    return delta


STRIP = 32  # the width of the strips an untiled band's parallel member is cut into (`_strips`)


def _parallel_member(band: isl.ScheduleNode, context: _Context) -> int | None:
    """The first member after the first of a permutable band whose loop carries no dependence
    inside the loops around the band (its iterations touch no element another one writes,
    whatever the band's other members): its strips, or its tiles, can run outermost and in
    parallel, one region of threads instead of one per iteration of the band's first loop."""
    if context.union is None or band.band_n_member() < 2 or not band.band_get_permutable():
        return None
    prefix = band.get_prefix_schedule_union_map()
    partial = band.band_get_partial_schedule()
    try:
        for k in range(1, band.band_n_member()):
            member = isl.UnionMap.from_multi_union_pw_aff(isl.MultiUnionPwAff.from_union_pw_aff(partial.get_at(k)))
            if _carries_nothing(prefix.flat_range_product(member), context.union):
                return k
    except isl.Error:  # a compute-out: the band runs as it would without
        context.scop.ctx.reset_operations()
    return None


def _uniform(band: isl.ScheduleNode, member: int, context: _Context) -> bool:
    """Whether each iteration of the band's `member` loop does the same work, whatever its value:
    for every statement below, the values of the other loops (around, in the band, below) that
    go with one value of it do not depend on which (gramschmidt's ``j``: each column is ``m``
    rows; not cholesky's ``i``, whose ``j <= i``). Such a loop runs in one block of iterations per
    thread, balanced, and each thread keeps its block as the loops around it move on; a
    triangular one is dealt out in chunks."""
    depth = band.get_schedule_depth() + member
    full = band.get_prefix_schedule_union_map().flat_range_product(band.get_subtree_schedule_union_map())
    try:
        return all(_even(m.range(), depth) for m in _maps(_flat(full).intersect_domain(band.get_domain())))
    except isl.Error:  # a compute-out: chunks
        context.scop.ctx.reset_operations()
        return False


def _even(points: isl.Set, k: int) -> bool:
    """Whether `points` is the points whose dimension `k` is allowed by the others and whose other
    dimensions are allowed by the rest: nothing ties dimension `k` to the dimensions after it."""
    n = points.dim(isl.dim_type.set)
    if k >= n:
        return True
    around = points.project_out(isl.dim_type.set, k + 1, n - k - 1).insert_dims(isl.dim_type.set, k + 1, n - k - 1)
    rest = points.project_out(isl.dim_type.set, k, 1).insert_dims(isl.dim_type.set, k, 1)
    return around.intersect(rest).is_subset(points)


def _strips(band: isl.ScheduleNode, member: int, width: int) -> isl.ScheduleNode:
    """A band of one member above `band`, the strips of `width` consecutive values of its
    `member`, coincident (`_parallel_member`); returns `band`, below it. Legal: the band is
    permutable, so its member may be strip-mined and the strip loop moved outermost."""
    strip = isl.MultiUnionPwAff.from_union_pw_aff(band.band_get_partial_schedule().get_at(member))
    strip = strip.scale_down_val(isl.Val.int_from_si(band.get_ctx(), width)).floor()
    return band.insert_partial_schedule(strip).band_member_set_coincident(0, 1).child(0)


def _inner_parallel(band: isl.ScheduleNode, context: _Context) -> int | None:
    """The first member of an untiled band, other than the first and the innermost (the vector
    loop), whose loop carries no dependence inside the loops of the members before it."""
    if context.union is None:
        return None
    prefix = band.get_prefix_schedule_union_map()
    partial = band.band_get_partial_schedule()
    try:
        for k in range(1, band.band_n_member() - 1):
            members = partial.drop_dims(isl.dim_type.set, k + 1, partial.dim(isl.dim_type.set) - k - 1)
            if _carries_nothing(prefix.flat_range_product(isl.UnionMap.from_multi_union_pw_aff(members)), context.union):
                return k
    except isl.Error:  # a compute-out: the band runs sequentially
        context.scop.ctx.reset_operations()
    return None


def _descend(node: isl.ScheduleNode, depth: int) -> isl.ScheduleNode:
    for _ in range(depth):
        node = node.child(0)
    return node


def _ascend(node: isl.ScheduleNode, depth: int) -> isl.ScheduleNode:
    for _ in range(depth):
        node = node.parent()
    return node


def _tiles_from_lower_bounds(band: isl.ScheduleNode) -> isl.ScheduleNode:
    """Shift each member of `band` whose lower bound depends on sizes (the ``lo`` of ``for (i =
    lo; ...)``) to start at 1. isl needs a minute to build the loops of a wavefront of tiles that
    start at ``lo`` modulo 32 (a 1-D stencil from ``lo``: it gave up after 35 s), 5 s where the
    loop starts at a tile's first point, 0.1 s otherwise. Every statement moves by the same
    amount, so every dependence keeps its distance."""
    partial, domain = band.band_get_partial_schedule(), band.get_domain()
    shifted = partial
    try:
        for k in range(partial.dim(isl.dim_type.set)):
            lo = _lower_bound(partial.get_at(k), domain)
            if lo is not None and not lo.is_cst():
                start = lo.add_constant_val(isl.Val.int_from_si(band.get_ctx(), -1))
                shifted = shifted.set_at(k, partial.get_at(k).sub(isl.UnionPwAff.pw_aff_on_domain(domain, isl.PwAff.from_aff(start))))
    except isl.Error:  # a compute-out: tiles as they were
        band.get_ctx().reset_operations()
        return band
    if shifted is partial:
        return band
    coincident = [band.band_member_get_coincident(k) for k in range(band.band_n_member())]
    node = band.delete().insert_partial_schedule(shifted).band_set_permutable(band.band_get_permutable())
    for k, flag in enumerate(coincident):
        node = node.band_member_set_coincident(k, flag)
    return node


def _lower_bound(member: isl.UnionPwAff, domain: isl.UnionSet) -> isl.Aff | None:
    """The least value of `member` on `domain`, where one expression in the sizes gives it."""
    values = isl.Set.from_union_set(isl.UnionMap.from_union_pw_aff(member).intersect_domain(domain).range())
    pieces: list[isl.MultiAff] = []
    values.lexmin_pw_multi_aff().foreach_piece(lambda _, lowest: pieces.append(lowest))
    if len(pieces) != 1 or pieces[0].get_at(0).dim(isl.dim_type.div):
        return None
    return pieces[0].get_at(0)


def _wavefront(tiles: isl.ScheduleNode) -> isl.ScheduleNode:
    """Run the tiles of a band whose first loop is sequential in parallel wavefronts: the tile
    loops ``(T0, T1, ...)`` become ``(T0 + T1, T1, ...)``, and ``T1`` runs in parallel (Pluto's
    wavefront). Every dependence of a permutable band goes forward or stays in each tile loop,
    so between two tiles with equal ``T0 + T1`` it goes nowhere: their ``T1`` differ only where
    no dependence joins them. Returns the node at the same position."""
    partial = tiles.band_get_partial_schedule()
    skewed = partial.set_at(0, partial.get_at(0).add(partial.get_at(1)))
    node = tiles.delete().insert_partial_schedule(skewed).band_set_permutable(1)
    node = node.band_split(1).child(0).band_member_set_coincident(0, 1)
    node = node.band_member_set_ast_loop_type(0, isl.ast_loop_type.atomic)  # one loop, not pieces
    return _mark(node).parent()


def _jam(band: isl.ScheduleNode, options: CpuOptions, whole_first: bool = False) -> isl.ScheduleNode:
    """Unroll-and-jam: strip-mine the band's `jam_loops` members around the innermost by `jam` and
    unroll the strips inside the innermost loop (legal: the band is permutable), so the jammed
    rows share each load of the innermost loop and keep independent sums — register tiling (a
    4x4 tile of gemm's ``C`` in 16 vector registers, each ``B`` load used 4 times)."""
    n = band.band_n_member()
    jammed = range(max(n - 1 - options.jam_loops, 0), n - 1)
    factors = [options.jam if k in jammed else 1 for k in range(n)]
    sizes = isl.MultiVal.zero(band.band_get_space())
    for k, f in enumerate(factors):
        sizes = sizes.set_val(k, isl.Val.int_from_si(band.get_ctx(), f))
    strips = band.band_tile(sizes)
    split = whole_first and options.isolate and n > 1
    if split:  # the first loop runs in parallel: isolate below it, so that it stays one loop
        strips = strips.band_split(1).child(0)
    if options.isolate:
        strips = _isolate_full(strips, factors)
    unrolled = strips.child(0)
    for k in jammed:
        unrolled = unrolled.band_member_set_ast_loop_type(k, isl.ast_loop_type.unroll)
    return _ascend(unrolled, 2 if split else 1)


def _skewed(band: isl.ScheduleNode) -> bool:
    """Whether `band` or a loop around it runs along a sum of the statements' loops (seidel's
    wavefront ``4t + 2i + j`` around ``(t, i)``). Tiled, its strips are parallelograms cut by
    tiles, and isl's separation of the whole ones from the rest runs out of its operation budget
    (seidel: after 7-10 s, every time), so they are not isolated. (Untiled, it takes seidel 1 s,
    and its fastest code.)"""
    loops = band.get_prefix_schedule_multi_union_pw_aff().flat_range_product(band.band_get_partial_schedule())
    for k in range(loops.dim(isl.dim_type.set)):
        pieces: list[isl.PwAff] = []
        loops.get_at(k).foreach_pw_aff(pieces.append)
        for aff in (aff for pa in pieces for _, aff in pa.get_pieces()):
            if sum(not aff.get_coefficient_val(isl.dim_type.in_, d).is_zero() for d in range(aff.dim(isl.dim_type.in_))) > 1:
                return True
    return False


def _isolate_full(strips: isl.ScheduleNode, factors: list[int]) -> isl.ScheduleNode:
    """Have isl generate the strips whose every unrolled instance exists apart from the others, so
    that their unrolled copies run unguarded (Polly's full/partial tile separation): a strip is
    full when each point of its box of `factors` below is in the schedule's range."""
    n, m = len(factors), strips.band_n_member()  # the strip band may lack the first strip loop
    leaf = strips.child(0).child(0)
    points = isl.Set.from_union_set(leaf.get_prefix_schedule_union_map().intersect_domain(leaf.get_domain()).range())
    outer = points.dim(isl.dim_type.set) - m - n  # outer loops, strip loops, unrolled offsets
    heads = points.project_out(isl.dim_type.set, outer + m, n)
    box = heads.add_dims(isl.dim_type.set, n)
    ctx = box.get_ctx()
    for k, f in enumerate(factors):
        d = outer + m + k
        box = box.lower_bound_val(isl.dim_type.set, d, isl.Val.zero(ctx))
        box = box.upper_bound_val(isl.dim_type.set, d, isl.Val.int_from_si(ctx, f - 1))
    partial = box.subtract(points).project_out(isl.dim_type.set, outer + m, n)
    full = heads.subtract(partial)
    if full.is_empty():
        return strips
    isolate = isl.Map.from_domain(full).move_dims(isl.dim_type.out, 0, isl.dim_type.in_, outer, m).wrap()
    return strips.band_set_ast_build_options(isl.UnionSet.from_set(isolate.set_tuple_name("isolate")))


def _transform_children(node: isl.ScheduleNode, context: _Context, inside_parallel: bool) -> isl.ScheduleNode:
    for k in range(node.n_children()):
        node = _transform(node.child(k), context, inside_parallel).parent()
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
    outer = {p.get_tuple_name(isl.dim_type.in_): p for p in _maps(band.get_prefix_schedule_union_map())}
    deepest = max((m.dim(isl.dim_type.in_) for m in maps), default=0)
    for m in maps:
        stmt = scop.statement(m.get_tuple_name(isl.dim_type.in_))
        prefix = outer[stmt.name]
        step = _step(prefix.flat_range_product(m).intersect_domain(stmt.domain), prefix.dim(isl.dim_type.out) + member)
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


def _step(schedule: isl.Map, member: int) -> tuple[int, ...] | None:
    """The change of a statement's iterators that advances schedule dimension `member` by one and
    keeps the others (the outer loops' and the band's): the deltas of ``S -> B -> B + e -> S``;
    None when there is no such single constant step (the member is constant for the statement,
    or the schedule does not determine the iterators)."""
    names = [f"b{k}" for k in range(schedule.dim(isl.dim_type.out))]
    moved = [f"{b} + 1" if k == member else b for k, b in enumerate(names)]
    shift = isl.Map(f"{{ [{', '.join(names)}] -> [{', '.join(moved)}] }}", context=schedule.get_ctx())
    shift = shift.align_params(schedule.get_space())
    moves = schedule.apply_range(shift).apply_range(schedule.reverse()).deltas()
    if moves.is_empty() or not moves.is_singleton():
        return None
    point = moves.sample_point()
    return tuple(point.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(moves.dim(isl.dim_type.set)))
