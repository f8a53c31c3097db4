"""Scheduling with the isl scheduler, and the schedule tree as text and JSON.

Validity is every dependence; coincidence and proximity are the dependences too, as in PPCG, with
outer coincidence on, so that parallel loops come out as leading coincident band members.
`fusion="min"` keeps strongly connected components apart (isl's serialize-SCCs), `"max"` fuses;
`maximize_coincidence` fuses only where no parallel loop is lost (the GPU's choice).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Any

import islpy as isl

from core_compiler.errors import HostOnly
from core_compiler.remarks import Remark, missed
from core_compiler.scop.dependences import Dependences
from core_compiler.scop.model import Scop


@dataclass(frozen=True)
class ScheduleOptions:
    fusion: str = "max"  # "max" | "min"
    outer_coincidence: bool = True
    # Fuse two clusters of statements only where the fused band keeps as many parallel members as
    # each had (isl's maximize-coincidence): 2mm's two products stay two kernels of 2-d parallel
    # loops instead of one kernel parallel in `i` alone (12x slower on an H100).
    maximize_coincidence: bool = False
    # Let loops that only carry `+=` reductions be parallel; `map_to_gpu(..., deps=...)` then makes
    # those updates atomic. Only for callers that pass the dependences on to the mapping.
    parallel_reductions: bool = False


BUDGET_EXCEEDED = "maximal number of operations exceeded"  # islpy keeps no error code: the message
# SCoPs whose schedule isl could not find within their operation budget, with the options asked:
# they run in the source order, and a later call does not spend the budget again (fuzzer seed
# 977: the scheduler gave up after a minute, once per back end and variant).
_GAVE_UP: weakref.WeakKeyDictionary[Scop, set[ScheduleOptions]] = weakref.WeakKeyDictionary()


def compute_schedule(scop: Scop, deps: Dependences, options: ScheduleOptions = ScheduleOptions()) -> isl.Schedule:
    """isl's schedule of `scop`; the source order where isl cannot carry a dependence or runs out
    of its operation budget (then `schedule_gave_up` gives its remark)."""
    if options in _GAVE_UP.get(scop, ()):
        return source_order(scop)
    ctx = scop.ctx
    ctx.reset_operations()
    ctx.set_schedule_outer_coincidence(1 if options.outer_coincidence else 0)
    ctx.set_schedule_serialize_sccs(1 if options.fusion == "min" else 0)
    ctx.set_schedule_whole_component(0)
    ctx.set_schedule_maximize_coincidence(1 if options.maximize_coincidence else 0)
    validity = deps.union()
    coincidence = validity
    if options.parallel_reductions:
        around = _around_reductions(scop, deps)
        validity = validity.union(around)
        coincidence = validity.subtract(deps.atomic_reductions())
    constraints = (
        isl.ScheduleConstraints.on_domain(scop.domains())
        .set_context(scop.context)
        .set_validity(validity)
        .set_coincidence(coincidence)
        .set_proximity(validity)
    )
    try:
        return constraints.compute_schedule()
    except isl.Error as e:
        if BUDGET_EXCEEDED in str(e):
            _GAVE_UP.setdefault(scop, set()).add(options)
        elif "unable to carry dependences" not in str(e):
            raise
        return source_order(scop)


def schedule_gave_up(scop: Scop, pass_name: str = "schedule") -> list[Remark]:
    """`ScheduleBudgetExceeded` where isl ran out of its operation budget scheduling `scop` (with
    some options), which then runs in the source order; else nothing."""
    if not _GAVE_UP.get(scop):
        return []
    message = (
        "hexplore gave up optimizing this loop nest: the polyhedral library exceeded its budget of "
        f"{scop.ctx.get_max_operations():,} operations looking for a better loop order (the nest is too "
        "large for it); its loops run in their original order, neither tiled nor parallel"
    )
    return [missed(pass_name, "ScheduleBudgetExceeded", message, scop.range, scop.function)]


def source_order(scop: Scop) -> isl.Schedule:
    """The statements in the order the C runs them: one band of the 2d+1 schedule, neither
    permutable nor coincident (so neither tiled nor parallel). isl's scheduler gives up on some
    non-uniform dependences it could not carry (``S[i] -> S[n - 1 - 2i]`` next to a loop that
    starts at ``n - i``) though the original order satisfies them."""
    ctx = scop.ctx
    ctx.reset_operations()
    band = isl.MultiUnionPwAff.from_union_map(scop.schedule())
    return isl.Schedule.from_domain(scop.domains()).insert_partial_schedule(band)


def _around_reductions(scop: Scop, deps: Dependences) -> isl.UnionMap:
    """Memory-based dependences between every instance of a reduction and the other statements
    touching its array: once the additions are atomic and unordered, *all* of them must finish
    before a later reader (not only the last one, as the value-based flow says) and start after
    an earlier one."""
    order = scop.schedule().lex_lt_union_map(scop.schedule())
    out = isl.UnionMap.empty(isl.Space.params_alloc(scop.ctx, 0))
    for r in deps.reductions:
        if r.op != "+":
            continue
        mine = isl.UnionSet.from_set(scop.statement(r.statement).domain)
        writes = scop.writes(r.array).intersect_domain(mine)
        others = scop.reads(r.array).union(scop.writes(r.array)).subtract_domain(mine)
        touching = writes.apply_range(others.reverse())
        out = out.union(touching.union(touching.reverse()).intersect(order))
    return out


def compute_gpu_schedule(scop: Scop, deps: Dependences, options: ScheduleOptions = ScheduleOptions()) -> isl.Schedule:
    """The strict schedule, unless some statement gets no parallel loop and `options` allows
    parallel reductions: then reductions may run in parallel (with atomics, see `map_to_gpu`).
    `HostOnly` for a SCoP that calls a function of the program (`OpaqueCall`)."""
    call = next((c for s in scop.statements for c in s.info.opaque_calls), None)
    if call is not None:
        raise HostOnly(f"these loops call `{call.name}`, a function of your program that GPU code cannot call")
    strict = compute_schedule(scop, deps, replace(options, parallel_reductions=False))
    if not options.parallel_reductions or deps.atomic_reductions().is_empty() or _all_parallel(strict):
        return strict
    return compute_schedule(scop, deps, options)


def _all_parallel(schedule: isl.Schedule) -> bool:
    """Every statement instance lies below a band whose outermost member is parallel."""
    covered = [isl.UnionSet.empty(schedule.get_domain().get_space())]

    def visit(n: isl.ScheduleNode) -> bool:
        if n.get_type() == isl.schedule_node_type.band and n.band_n_member() and n.band_member_get_coincident(0):
            covered[0] = covered[0].union(n.get_domain())
            return False
        return True

    schedule.get_root().foreach_descendant_top_down(visit)
    return schedule.get_domain().is_subset(covered[0])


def original_schedule(scop: Scop) -> isl.Schedule:
    """The source order as a schedule tree (one band over the 2d+1 map)."""
    return isl.Schedule.from_domain(scop.domains()).insert_partial_schedule(
        isl.MultiUnionPwAff.from_union_map(scop.schedule())
    )


# ------------------------------------------------------------------------------ rendering

_NODE_KINDS: dict[Any, str] = {
    isl.schedule_node_type.band: "band",
    isl.schedule_node_type.context: "context",
    isl.schedule_node_type.domain: "domain",
    isl.schedule_node_type.expansion: "expansion",
    isl.schedule_node_type.extension: "extension",
    isl.schedule_node_type.filter: "filter",
    isl.schedule_node_type.leaf: "leaf",
    isl.schedule_node_type.guard: "guard",
    isl.schedule_node_type.mark: "mark",
    isl.schedule_node_type.sequence: "sequence",
    isl.schedule_node_type.set: "set",
}


def tree_json(node: isl.ScheduleNode, scop: Scop | None = None) -> dict[str, object]:
    """A schedule (sub)tree as nested dicts: ``{"kind", "children", ...}``. With the `scop` it
    schedules, a band also says which source loops each member follows (``"loops"``, ids; none
    for a member that no loop is, a skewed ``t + i``) and the member as a C expression
    (``"exprs"``), and filters and leaves their statements (``"statements"``): what the editor's
    and the TUI's schedule views (`explorer/schedule_tree.py`) show."""
    kind = _NODE_KINDS.get(node.get_type(), "unknown")
    out: dict[str, object] = {"kind": kind}
    if kind == "domain":
        out["domain"] = str(node.domain_get_domain())
    elif kind == "filter":
        out["filter"] = str(node.filter_get_filter())
    elif kind == "mark":
        out["mark"] = node.mark_get_id().get_name()
    elif kind == "band":
        n = node.band_n_member()
        partial = node.band_get_partial_schedule()
        out["members"] = [str(partial.get_at(k)) for k in range(n)]
        out["coincident"] = [bool(node.band_member_get_coincident(k)) for k in range(n)]
        out["permutable"] = bool(node.band_get_permutable())
        if scop is not None:
            members = [partial.get_at(k).intersect_domain(node.get_domain()) for k in range(n)]
            out["loops"] = [member_loops(scop, m) for m in members]
            out["exprs"] = [member_text(scop, m) for m in members]
    if scop is not None and kind in ("filter", "leaf"):
        out["statements"] = _statements(scop, node.filter_get_filter() if kind == "filter" else node.get_domain())
    out["children"] = [tree_json(node.child(k), scop) for k in range(node.n_children())]
    return out


def member_loops(scop: Scop, member: isl.UnionPwAff) -> list[str]:
    """The source loops (ids) a band member follows: for each statement it schedules, the member
    is that statement's loop counter (or its negation) or a constant (a statement outside the
    loop, placed before or after it). Empty when some statement's value is neither."""
    as_map = isl.UnionMap.from_multi_union_pw_aff(isl.MultiUnionPwAff.from_union_pw_aff(member))
    loops: list[str] = []
    for s in scop.statements:
        mine = as_map.intersect_domain(isl.UnionSet.from_set(s.domain))
        if mine.is_empty():
            continue
        found = _counter(s.domain, s.info.loops, mine)
        if found is None and not isl.Set.from_union_set(mine.range()).is_singleton():
            return []
        if found is not None and found not in loops:
            loops.append(found)
    return loops


def _counter(domain: isl.Set, loops: Any, mine: isl.UnionMap) -> str | None:
    space = isl.LocalSpace.from_space(domain.get_space())
    for d, loop in enumerate(loops):
        aff = isl.Aff.var_on_domain(space, isl.dim_type.set, d)
        for candidate in (aff, aff.neg()):
            if mine.is_equal(isl.UnionMap.from_map(isl.Map.from_aff(candidate).intersect_domain(domain))):
                return str(loop.id)
    return None


def member_text(scop: Scop, member: isl.UnionPwAff) -> str:
    """A band member as C, on the first statement where it is not a constant: ``t + i``."""
    pieces = {pa.get_domain_space().get_tuple_name(isl.dim_type.set): pa for pa in _pw_affs(member)}
    chosen = [pieces[s.name] for s in scop.statements if s.name in pieces]
    varying = [pa for pa in chosen if not pa.is_cst()] or chosen
    if not varying:
        return ""
    printer = isl.Printer.to_str(scop.ctx).set_output_format(isl.format.C)
    return str(printer.print_pw_aff(varying[0]).get_str())


def _pw_affs(member: isl.UnionPwAff) -> list[isl.PwAff]:
    found: list[isl.PwAff] = []
    member.foreach_pw_aff(found.append)
    return found


def _statements(scop: Scop, domain: isl.UnionSet) -> list[str]:
    sets: list[isl.Set] = []
    domain.foreach_set(sets.append)
    names = {s.get_tuple_name() for s in sets}
    return [s.name for s in scop.statements if s.name in names]


def render_tree(schedule: isl.Schedule) -> str:
    """Indented text: one line per node, band members with their flags."""
    lines: list[str] = []
    _render(tree_json(schedule.get_root()), 0, lines)
    return "\n".join(lines) + "\n"


def _render(t: dict[str, object], depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    kind = t["kind"]
    if kind == "band":
        members = t["members"]
        coincident = t["coincident"]
        assert isinstance(members, list) and isinstance(coincident, list)
        flags = "permutable" if t["permutable"] else "not permutable"
        lines.append(f"{pad}band ({flags})")
        for m, c in zip(members, coincident, strict=True):
            lines.append(f"{pad}  {'parallel  ' if c else 'sequential'} {m}")
    elif kind == "leaf":
        return
    else:
        detail = t.get(str(kind), "")
        lines.append(f"{pad}{kind}" + (f" {detail}" if detail else ""))
    children = t["children"]
    assert isinstance(children, list)
    for child in children:
        _render(child, depth + 1, lines)
