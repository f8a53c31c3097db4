"""Loop interchange: may two perfectly nested loops of a modeled nest swap places?

Legal iff every dependence between statements of the nest stays lexicographically positive when
the two loops' dimensions of the original (2d+1) schedule are swapped: the sink still runs after
the source. Where one would not, `Interchange.reason` says so in C terms, with one witness::

    for (int i = 1; i < n; i++)
      for (int j = 0; j < n - 1; j++)
        a[i][j] = a[i - 1][j + 1];

    interchange(scop, deps, "L0").reason
    # "`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 1]` in iteration
    #  (i+1, j-1): swapping `i` and `j` would run the read first"

The swap itself is a source rewrite (`header_edits`): the two ``for (...)`` headers trade places,
which is the same loops only when the inner loop's bounds do not read the outer loop's counter
(a triangular nest is refused with that reason).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from core_compiler.scop.dependences import HIDDEN_STATE, Dependence, Dependences
from core_compiler.scop.model import Access, Scop, Statement
from core_compiler.scop.region import LoopInfo
from core_compiler.source import SourceRange

_ROLE = {  # kind -> (what the source access does, what the sink access does, what goes wrong)
    "flow": ("written", "read", "the read first"),
    "anti": ("read", "overwritten", "the write first"),
    "output": ("written", "written again", "the writes in the other order"),
}


@dataclass(frozen=True)
class Interchange:
    outer: LoopInfo
    inner: LoopInfo  # perfectly nested in `outer`
    legal: bool
    reason: str = ""  # why not, for a C programmer ("" when legal)


def inner_loop(scop: Scop, outer: LoopInfo) -> LoopInfo | None:
    """The loop perfectly nested in `outer`: its only child, around every statement `outer` holds."""
    children = [lp for lp in scop.loops if lp.parent == outer.id]
    if len(children) != 1:
        return None
    inner = children[0]
    inside = [s for s in scop.statements if _in(s, outer)]
    return inner if inside and all(_in(s, inner) for s in inside) else None


def interchange(scop: Scop, deps: Dependences, outer_id: str, text: str | None = None) -> Interchange | None:
    """Whether the loop `outer_id` may swap with the loop perfectly nested in it (None: there is
    no such loop); `text`, the file's, gives the reason the accesses as written. Raises isl.Error
    when isl's budget runs out."""
    outer = next(lp for lp in scop.loops if lp.id == outer_id)
    inner = inner_loop(scop, outer)
    if inner is None:
        return None
    bounds = {v for dnf in (inner.start, inner.cond) for conj in dnf for c in conj for v in c.expr.variables()}
    if outer.var in bounds:
        why = (f"the bounds of `{inner.var}` depend on `{outer.var}`: swapping the two `for` headers "
               "would not run the same iterations")  # fmt: skip
        return Interchange(outer, inner, False, why)
    scop.ctx.reset_operations()
    swapped = {s.name: _swapped(s, outer, inner) for s in scop.statements if _in(s, outer)}
    for d in deps.deps:
        if d.source in swapped and d.sink in swapped:
            why = _violation(scop, d, swapped, (outer, inner), text)
            if why:
                return Interchange(outer, inner, False, why)
    return Interchange(outer, inner, True)


def header_edits(outer: LoopInfo, inner: LoopInfo, text: str) -> tuple[tuple[SourceRange, str], ...]:
    """The rewrite: each header's range with the other header's text (`text`: the whole file)."""
    return ((outer.header_range, source_text(text, inner.header_range)),
            (inner.header_range, source_text(text, outer.header_range)))  # fmt: skip


def source_text(text: str, r: SourceRange) -> str:
    """The text of `r` (1-based lines, byte columns, end exclusive) in `text`."""
    data = text.encode()
    lines = data.split(b"\n")

    def offset(line: int, col: int) -> int:
        return sum(len(x) + 1 for x in lines[: line - 1]) + col - 1

    return data[offset(r.line, r.col) : offset(r.end_line, r.end_col)].decode(errors="replace")


def _in(s: Statement, loop: LoopInfo) -> bool:
    return any(lp.id == loop.id for lp in s.info.loops)


def _swapped(s: Statement, outer: LoopInfo, inner: LoopInfo) -> isl.Map:
    """`s`'s schedule with the time dimensions of the two loops exchanged."""
    n = s.schedule.dim(isl.dim_type.out)
    a, b = 2 * outer.depth + 1, 2 * inner.depth + 1
    dims = [f"t{k}" for k in range(n)]
    image = list(dims)
    image[a], image[b] = dims[b], dims[a]
    swap = isl.Map.read_from_str(s.schedule.get_ctx(), f"{{ [{', '.join(dims)}] -> [{', '.join(image)}] }}")
    return s.schedule.apply_range(swap)


def _violation(
    scop: Scop, d: Dependence, swapped: dict[str, isl.Map], loops: tuple[LoopInfo, LoopInfo], text: str | None
) -> str:
    """Why the swapped schedules would run an instance pair of `d` in the wrong order ("" if never)."""
    outer, inner = loops
    src, dst = swapped[d.source], swapped[d.sink]
    later_or_same = isl.Map.lex_ge(src.get_space().range())
    wrong = src.apply_range(later_or_same).apply_range(dst.reverse())  # source -> sinks not after it
    bad = d.relation.intersect(wrong).intersect_params(scop.context)
    if bad.is_empty():
        return ""
    if d.array == HIDDEN_STATE:  # no access to point at: calls that may do I/O or touch globals
        call = scop.statement(d.source).info.text
        return f"`{call}` may do I/O or touch global variables: swapping `{outer.var}` and `{inner.var}` would reorder its calls"
    first, second, bad = _culprits(scop, d, bad)
    point = bad.wrap().sample_point()
    n_in, n_out = bad.dim(isl.dim_type.in_), bad.dim(isl.dim_type.out)
    coords = [int(point.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(n_in + n_out)]
    x, y = coords[:n_in], coords[n_in:]
    done, then, wrong_order = _ROLE[d.kind]
    k, m = outer.depth, inner.depth
    at = f"({outer.var}, {inner.var})"
    later = f"({_plus(outer.var, y[k] - x[k])}, {_plus(inner.var, y[m] - x[m])})"
    a, b = _written(first, text), _written(second, text)
    as_ = f" as `{b}`" if b != a else ""
    return (f"`{a}` is {done} in iteration {at} and {then}{as_} in iteration {later}: "
            f"swapping `{outer.var}` and `{inner.var}` would run {wrong_order}")  # fmt: skip


def _culprits(scop: Scop, d: Dependence, bad: isl.Map) -> tuple[Access, Access, isl.Map]:
    """The source and sink accesses of `d.array` that touch one element at a pair of `bad`, and
    those pairs."""
    source, sink = scop.statement(d.source), scop.statement(d.sink)
    firsts = [a for a in _side(source, d, True) if a.array == d.array]
    seconds = [a for a in _side(sink, d, False) if a.array == d.array]
    for a in firsts:
        for b in seconds:
            same = bad.intersect(a.relation.apply_range(b.relation.reverse()))
            if not same.is_empty():
                return a, b, same
    return firsts[0], seconds[0], bad


def _side(s: Statement, d: Dependence, source_side: bool) -> tuple[Access, ...]:
    """The accesses that make `s` the source (or sink) of `d`: writes, or reads."""
    writes = d.kind == "output" or (d.kind == "flow") == source_side
    return s.writes if writes else s.reads


def _written(a: Access, text: str | None) -> str:
    """The access as written in `text` (the file) where it is given and holds it on one line."""
    r = a.info.range
    if text is not None and r.line == r.end_line:
        return source_text(text, r)
    return a.info.text


def _plus(var: str, delta: int) -> str:
    return var if delta == 0 else f"{var}{delta:+d}"
