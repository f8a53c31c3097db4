"""Dependences with isl dataflow, per-loop parallelism and reductions.

Flow (read-after-write) dependences are value-based: `compute_flow` finds, for every read, the
last write of the same element before it. Output dependences link each write to the previous write
of the element; anti dependences link the reads since the last write to the next write (writes
kill). A loop *carries* a dependence when the source and sink run in the same iteration of every
enclosing loop but in different iterations of this one; the witness is one such distance vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from core_compiler.frontend import ir
from core_compiler.scop.model import Scop, Statement
from core_compiler.scop.region import LoopInfo

KINDS = ("flow", "anti", "output")


@dataclass(frozen=True, eq=False)
class Dependence:
    kind: str  # "flow" | "anti" | "output"
    array: str
    source: str  # statement names
    sink: str
    relation: isl.Map  # source instance -> sink instance

    def __str__(self) -> str:
        return f"{self.kind} {self.source} -> {self.sink} on {self.array}"


@dataclass(frozen=True)
class Carried:
    kind: str
    array: str
    source: str
    sink: str
    distance: tuple[int, ...]  # one entry per loop enclosing both, outermost first

    def describe(self) -> str:
        d = ", ".join(map(str, self.distance))
        return f"{self.kind} dependence {self.source} -> {self.sink} on `{self.array}` (distance ({d}))"


@dataclass(frozen=True)
class Reduction:
    statement: str
    op: str  # "+", "*", "max", "min"
    array: str
    loops: tuple[str, ...]  # ids of the loops the reduction runs over


@dataclass(frozen=True)
class LoopParallelism:
    loop: LoopInfo
    carried: tuple[Carried, ...]
    reduction: bool  # every carried dependence comes from a reduction over this loop

    @property
    def parallel(self) -> bool:
        return not self.carried


@dataclass(frozen=True, eq=False)
class Dependences:
    scop: Scop
    deps: tuple[Dependence, ...]
    loops: tuple[LoopParallelism, ...]
    reductions: tuple[Reduction, ...]

    def union(self, kinds: tuple[str, ...] = KINDS) -> isl.UnionMap:
        out = isl.UnionMap.empty(isl.Space.params_alloc(self.scop.ctx, 0))
        for d in self.deps:
            if d.kind in kinds:
                out = out.union(isl.UnionMap.from_map(d.relation))
        return out

    def atomic_reductions(self) -> isl.UnionMap:
        """The self-dependences of `+`/`-` reductions: what atomic additions make harmless."""
        out = isl.UnionMap.empty(isl.Space.params_alloc(self.scop.ctx, 0))
        adds = {(r.statement, r.array) for r in self.reductions if r.op == "+"}
        for d in self.deps:
            if d.source == d.sink and (d.source, d.array) in adds:
                out = out.union(isl.UnionMap.from_map(d.relation))
        return out

    def loop(self, loop_id: str) -> LoopParallelism:
        return next(lp for lp in self.loops if lp.loop.id == loop_id)


def compute_dependences(scop: Scop) -> Dependences:
    schedule = scop.schedule()
    deps: list[Dependence] = []
    for array in sorted({a.name for a in scop.arrays}):
        reads, writes = scop.reads(array), scop.writes(array)
        if writes.is_empty():
            continue
        must, may = scop.writes(array, may=False), scop.writes(array, may=True)
        if may.is_empty():
            flow = _flow(reads, writes, None, schedule).get_must_dependence()
            output = _flow(writes, writes, None, schedule).get_must_dependence()
        else:  # an opaque call's may-writes: flow from each write that may reach the read
            flow = _flow(reads, must, may, schedule).get_may_dependence()
            output = _flow(writes, must, may, schedule).get_may_dependence()
        anti = _flow(writes, None, reads, schedule, kill=must).get_may_dependence()
        for kind, umap in (("flow", flow), ("anti", anti), ("output", output)):
            for m in _maps(umap):
                deps.append(Dependence(kind, array, m.get_tuple_name(_IN), m.get_tuple_name(_OUT), m))
    deps += _hidden_state(scop)
    reductions = tuple(_reductions(scop))
    loops = tuple(_loop_parallelism(scop, deps, reductions, loop) for loop in scop.loops)
    return Dependences(scop, tuple(deps), loops, reductions)


def reuse_dependences(scop: Scop, previous: Dependences) -> Dependences | None:
    """`previous`'s dependences, for `scop`, where `scop` models the same statement instances,
    order and accesses in the same isl context (the function edited by ``1 * `` inserted, a
    constant changed in a value): then every dependence, and each loop's carried ones, are the
    same isl objects; what reads source positions or statement text (the loops' ranges, the
    reductions) is `scop`'s own. None where anything differs (the caller computes them afresh).

    The comparison is isl's `is_equal` on each domain, schedule and access: exact, and a few
    ms where `compute_dependences` takes tens to hundreds (issue 29.3)."""
    if not _same_model(scop, previous.scop):
        return None
    reductions = tuple(_reductions(scop))
    carried = {lp.loop.id: lp.carried for lp in previous.loops}
    loops = tuple(
        LoopParallelism(loop, carried[loop.id], _by_reductions(carried[loop.id], reductions, loop))
        for loop in scop.loops
    )
    return Dependences(scop, previous.deps, loops, reductions)


def _same_model(new: Scop, old: Scop) -> bool:
    """Whether `new` and `old` have the same loops, statements, domains, schedules and accesses."""
    if new.ctx is not old.ctx or _loop_shape(new.loops) != _loop_shape(old.loops):
        return False
    if len(new.statements) != len(old.statements):
        return False
    return all(_same_statement(a, b) for a, b in zip(new.statements, old.statements, strict=True))


def _loop_shape(loops: tuple[LoopInfo, ...]) -> tuple[tuple[str, int, str | None], ...]:
    return tuple((lp.id, lp.depth, lp.parent) for lp in loops)


def _same_statement(a: Statement, b: Statement) -> bool:
    if (a.name, a.info.hidden_effects, _loop_shape(a.info.loops)) != (b.name, b.info.hidden_effects, _loop_shape(b.info.loops)):
        return False
    if len(a.reads) != len(b.reads) or len(a.writes) != len(b.writes):
        return False
    if not (a.domain.is_equal(b.domain) and a.schedule.is_equal(b.schedule)):
        return False
    pairs = zip((*a.reads, *a.writes), (*b.reads, *b.writes), strict=True)
    return all((x.array, x.may) == (y.array, y.may) and x.relation.is_equal(y.relation) for x, y in pairs)


_IN, _OUT = isl.dim_type.in_, isl.dim_type.out
HIDDEN_STATE = "global state"  # what calls with hidden effects (I/O, global variables) may all touch


def _hidden_state(scop: Scop) -> list[Dependence]:
    """Calls that may do I/O or touch global variables (`StmtInfo.hidden_effects`) keep their
    original order among themselves: each instance depends on every such instance before it."""
    calls = [s for s in scop.statements if s.info.hidden_effects]
    out = []
    for a in calls:
        for b in calls:
            before = a.schedule.lex_lt_map(b.schedule)
            if not before.is_empty():
                out.append(Dependence("output", HIDDEN_STATE, a.name, b.name, before))
    return out


def _flow(
    sink: isl.UnionMap,
    must: isl.UnionMap | None,
    may: isl.UnionMap | None,
    schedule: isl.UnionMap,
    kill: isl.UnionMap | None = None,
) -> isl.UnionFlow:
    info = isl.UnionAccessInfo.from_sink(sink)
    if must is not None:
        info = info.set_must_source(must)
    if may is not None:
        info = info.set_may_source(may)
    if kill is not None:
        info = info.set_kill(kill)
    return info.set_schedule_map(schedule).compute_flow()


def _maps(umap: isl.UnionMap) -> list[isl.Map]:
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return sorted((m for m in out if not m.is_empty()), key=lambda m: (m.get_tuple_name(_IN), m.get_tuple_name(_OUT)))


# ------------------------------------------------------------------------------ parallelism


def _loop_parallelism(
    scop: Scop, deps: list[Dependence], reductions: tuple[Reduction, ...], loop: LoopInfo
) -> LoopParallelism:
    carried = []
    for d in deps:
        dist = _carried_distance(scop, d, loop)
        if dist is not None:
            carried.append(Carried(d.kind, d.array, d.source, d.sink, dist))
    return LoopParallelism(loop, tuple(carried), _by_reductions(tuple(carried), reductions, loop))


def _by_reductions(carried: tuple[Carried, ...], reductions: tuple[Reduction, ...], loop: LoopInfo) -> bool:
    """Whether every dependence `loop` carries is a reduction's over it."""
    reducing = {(r.statement, r.array) for r in reductions if loop.id in r.loops}
    return bool(carried) and all(c.source == c.sink and (c.source, c.array) in reducing for c in carried)


def _carried_distance(scop: Scop, dep: Dependence, loop: LoopInfo) -> tuple[int, ...] | None:
    src, dst = scop.statement(dep.source), scop.statement(dep.sink)
    if not (_inside(src, loop) and _inside(dst, loop)):
        return None
    times = isl.Map.from_domain_and_range(src.schedule.range(), dst.schedule.range())
    rel = dep.relation.apply_domain(src.schedule).apply_range(dst.schedule).intersect(times)
    deltas = rel.deltas()
    level = 2 * loop.depth + 1
    for d in range(level):
        deltas = deltas.fix_val(isl.dim_type.set, d, isl.Val.zero(scop.ctx))
    nonzero = deltas.lower_bound_val(isl.dim_type.set, level, isl.Val.one(scop.ctx))
    if nonzero.is_empty():
        nonzero = deltas.upper_bound_val(isl.dim_type.set, level, isl.Val.negone(scop.ctx))
        if nonzero.is_empty():
            return None
    point = nonzero.sample_point()
    # In execution order (the schedule negates counters of loops that count down), so a
    # dependence that is carried always has a positive first non-zero entry.
    return tuple(
        int(point.get_coordinate_val(isl.dim_type.set, 2 * k + 1).to_python())
        for k in range(loop.depth + 1)
    )


def _inside(stmt: Statement, loop: LoopInfo) -> bool:
    return any(lp.id == loop.id for lp in stmt.info.loops)


# ------------------------------------------------------------------------------ reductions

_REDUCTION_OPS = {"+=": "+", "-=": "+", "*=": "*"}
_REDUCTION_CALLS = {"fmax": "max", "fmaxf": "max", "max": "max", "fmin": "min", "fminf": "min", "min": "min"}


def reduction_op(node: ir.Assign) -> tuple[str, ir.Expr] | None:
    """The associative operator and the other operand, for ``x += e``, ``x = x * e``, ``x = fmax(x, e)``."""
    if node.op in _REDUCTION_OPS:
        return (_REDUCTION_OPS[node.op], node.value)
    if node.op != "=":
        return None
    v, target = node.value, str(node.target)
    if isinstance(v, ir.Binary) and v.op in ("+", "*"):
        if str(v.lhs) == target:
            return (v.op, v.rhs)
        if str(v.rhs) == target:
            return (v.op, v.lhs)
    if isinstance(v, ir.Call) and v.name in _REDUCTION_CALLS and len(v.args) == 2:
        a, b = v.args
        if str(a) == target:
            return (_REDUCTION_CALLS[v.name], b)
        if str(b) == target:
            return (_REDUCTION_CALLS[v.name], a)
    return _chosen_extreme(v, target)


def _chosen_extreme(v: ir.Expr, target: str) -> tuple[str, ir.Expr] | None:
    """``m = a[i] > m ? a[i] : m`` (``if (a[i] > m) m = a[i];``) as ("max", a[i]); ``<`` for "min"."""
    if not (isinstance(v, ir.Ternary) and isinstance(v.cond, ir.Binary) and v.cond.op in ("<", "<=", ">", ">=")):
        return None
    lhs, rhs, picked = str(v.cond.lhs), str(v.cond.rhs), (str(v.then), str(v.other))
    if target not in (lhs, rhs) or picked not in ((lhs, rhs), (rhs, lhs)):
        return None
    larger = (v.cond.op in (">", ">=")) == (picked[0] == lhs)
    other = v.cond.rhs if lhs == target else v.cond.lhs
    return ("max" if larger else "min", other)


def _reductions(scop: Scop):  # type: ignore[no-untyped-def]
    for s in scop.statements:
        if s.info.opaque_calls:
            continue
        found = reduction_op(s.info.assignment)
        if found is None:
            continue
        op, operand = found
        (write,) = s.writes
        if any(
            isinstance(e, ir.Subscript | ir.Var) and _base_name(e) == write.array
            for e in ir.walk_expr(operand)
        ):
            continue  # the other operand reads the reduced array too: not a plain reduction
        used = {n for idx in write.info.indices for n in idx.names}
        over = tuple(lp.id for lp in s.info.loops if lp.var not in used)
        if over:
            yield Reduction(s.name, op, write.array, over)


def _base_name(e: ir.Expr) -> str:
    return e.base if isinstance(e, ir.Subscript) else str(e)
