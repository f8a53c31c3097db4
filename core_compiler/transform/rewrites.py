"""Loop transformations as source rewrites, each checked against the dependences first: tile,
unroll-and-jam, skew, fuse and distribute (interchange is `interchange.py`). Each function takes
a modeled nest (`Scop`, its `Dependences`), the loop it applies to and the file's text, and returns
a `Rewrite`: the edit that replaces the loop nest with the transformed C, or why it is refused, in
C terms, with a witness. Example::

    for (int i = 0; i < n; i++)
      for (int j = 0; j < m; j++)
        C[i][j] += A[i][j];

    tile(scop, deps, fn, loop_i, text, 32).edits[0][1]   # fn: the function's IR
    # for (int i_t = 0; i_t < n; i_t += 32)
    #   for (int j_t = 0; j_t < m; j_t += 32)
    #     for (int i = i_t; i < (i_t + 32 < n ? i_t + 32 : n); i++)
    #       for (int j = j_t; j < (j_t + 32 < m ? j_t + 32 : m); j++)
    #         C[i][j] += A[i][j];

Loops are rewritten where they are written ``for ([type] i = lo; i < hi; i++)`` (or ``<=``, ``++i``,
``i += 1``); the new text is made of the original's pieces (bounds and bodies as written).
Legality, per transformation:

- tile: every dependence between iterations of the band goes forward (or nowhere) in each loop
  of the band, for the same iteration of the loops around it (the band is *permutable*);
- unroll-and-jam: interchanging the two loops is legal (conservative);
- skew `j` by `f*i` (offered only where the nest is not permutable): with ``js = j + f*i``, every
  dependence goes forward in `i` and in `js`; the skewed loop runs over the bounding box of
  ``js`` with a guard, so the nest stays rectangular and can then be interchanged or tiled;
- fuse two adjacent loops with the same bounds: no dependence from an iteration of the first loop
  to an iteration of the second goes to an earlier iteration;
- distribute a loop's statements into one loop per group: the groups are the strongly connected
  components of the dependence graph among the statements (within one iteration of the loops
  around), in a topological order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import islpy as isl

from core_compiler.frontend import ir
from core_compiler.scop.dependences import HIDDEN_STATE, Dependence, Dependences
from core_compiler.scop.model import Scop, Statement
from core_compiler.scop.region import LoopInfo
from core_compiler.source import SourceRange
from core_compiler.transform.interchange import (
    _ROLE,
    _culprits,
    _plus,
    _written,
    inner_loop,
    interchange,
)

TILE_SIZES = (16, 32, 64)
UNROLL_FACTORS = (2, 4)
SKEW_FACTORS = (1, 2)


@dataclass(frozen=True)
class Rewrite:
    title: str  # what it does, for a C programmer: "tile loops `i`, `j` by 32x32"
    loop: LoopInfo  # the loop it is offered on
    legal: bool
    reason: str = ""  # why not ("" when legal)
    edits: tuple[tuple[SourceRange, str], ...] = ()  # (range, new text); empty when refused


@dataclass(frozen=True)
class Header:
    """A loop's header read from the source: ``for (type var = lo; var < hi; var++)``."""

    loop: LoopInfo
    type: str  # "int " where the header declares the counter, "" where it does not
    lo: str  # the initial value, as written
    end: str  # the exclusive upper bound, as written (``hi + 1`` for ``<=``)
    start: int  # byte offsets of the whole loop statement in the file (through its `;`)
    stop: int
    body: str  # the text after the header, through the statement's end


# ------------------------------------------------------------------------------------ tile


def tile(scop: Scop, deps: Dependences, fn: ir.Function, loop: LoopInfo, text: str, size: int) -> Rewrite | None:
    """Tile `loop` and the loops perfectly nested in it whose bounds do not read the band's
    counters, by `size` in each (None: fewer than two such loops)."""
    band = _band(scop, loop, text)
    if len(band) < 2:
        return None
    names = ", ".join(f"`{lp.var}`" for lp in band)
    refused = f"tile loops {names}"  # the same whatever the size
    headers = [_header(fn, lp, text) for lp in band]
    bad = next((h for h in headers if isinstance(h, str)), None)
    if bad is not None:
        return Rewrite(refused, loop, False, bad)
    why = _backward(scop, deps, band, [], text, f"tiling {names}")
    if why:
        return Rewrite(refused, loop, False, why)
    hs = [h for h in headers if isinstance(h, Header)]
    title = f"{refused} by {'x'.join([str(size)] * len(band))}"
    return Rewrite(title, loop, True, edits=(_replace(text, hs[0], _tiled(hs, size, fn, text)),))


def _band(scop: Scop, loop: LoopInfo, text: str) -> list[LoopInfo]:
    """`loop` and the loops perfectly nested in it (only child, nothing else in the body) whose
    bounds do not read the counters of the loops above them in the band."""
    band = [loop]
    while True:
        inner = inner_loop(scop, band[-1])
        if inner is None or _reads(inner, {lp.var for lp in band}) or not _only_child(text, band[-1], inner):
            return band
        band.append(inner)


def _tiled(hs: list[Header], size: int, fn: ir.Function, text: str) -> str:
    taken = _names(fn, text)
    tiles = [_fresh(f"{h.loop.var}_t", taken) for h in hs]
    lines = []
    for h, t in zip(hs, tiles, strict=True):
        lines.append(f"for ({h.type or 'int '}{t} = {h.lo}; {t} < {h.end}; {t} += {size})")
    for h, t in zip(hs, tiles, strict=True):
        bound = f"({t} + {size} < {h.end} ? {t} + {size} : {h.end})"
        lines.append(f"for ({h.type}{h.loop.var} = {t}; {h.loop.var} < {bound}; {h.loop.var}++)")
    return _nest(lines, hs[-1].body.strip(), _indent(text, hs[0].start))


# ------------------------------------------------------------------------------ unroll-and-jam


def unroll_and_jam(
    scop: Scop, deps: Dependences, fn: ir.Function, loop: LoopInfo, text: str, factor: int
) -> Rewrite | None:
    """Unroll `loop` by `factor` and jam the copies into the loop perfectly nested in it, with a
    remainder loop for the last ``trip count % factor`` iterations (None: no such inner loop)."""
    inner = inner_loop(scop, loop)
    if inner is None or not _only_child(text, loop, inner):
        return None
    refused = f"unroll `{loop.var}` and jam into `{inner.var}`"  # the same whatever the factor
    title = f"unroll `{loop.var}` by {factor} and jam into `{inner.var}`"
    swap = interchange(scop, deps, loop.id, text)
    if swap is None:
        return None
    if not swap.legal:
        why = f"{swap.reason} (unroll-and-jam reorders `{loop.var}` and `{inner.var}` as swapping them does)"
        return Rewrite(refused, loop, False, why)
    outer_h, inner_h = _header(fn, loop, text), _header(fn, inner, text)
    for h in (outer_h, inner_h):
        if isinstance(h, str):
            return Rewrite(refused, loop, False, h)
    assert isinstance(outer_h, Header) and isinstance(inner_h, Header)
    new = _one_statement(text, outer_h, _jammed(outer_h, inner_h, factor, text))
    return Rewrite(title, loop, True, edits=(_replace(text, outer_h, new),))


def _jammed(outer: Header, inner: Header, factor: int, text: str) -> str:
    i, indent = outer.loop.var, _indent(text, outer.start)
    body = inner.body.strip()
    split = f"{outer.lo} + ({outer.end} - {_paren(outer.lo)}) / {factor} * {factor}"
    copies = [body] + [_substitute(body, i, f"({i} + {k})") for k in range(1, factor)]
    jam = "{\n" + "\n".join(_indented(c, "  ") for c in copies) + "\n}"
    inner_for = _for(inner)
    main = _nest([f"for ({outer.type}{i} = {outer.lo}; {i} < {split}; {i} += {factor})", inner_for], jam, indent)
    rest = _nest([f"for ({outer.type}{i} = {split}; {i} < {outer.end}; {i}++)", inner_for], body, indent)
    return f"{main}\n{indent}{rest}"


# ----------------------------------------------------------------------------------------- skew


def skew(scop: Scop, deps: Dependences, fn: ir.Function, loop: LoopInfo, text: str) -> Rewrite | None:
    """Skew the loop perfectly nested in `loop` by a multiple of `loop`'s counter where the nest
    is not permutable and a factor of 1 or 2 makes it so (None: permutable, or no such inner
    loop)."""
    inner = inner_loop(scop, loop)
    if inner is None or _reads(inner, {loop.var}) or not _only_child(text, loop, inner):
        return None
    if not _backward(scop, deps, [loop, inner], [0, 0], text, ""):
        return None  # already permutable: nothing to gain
    title = f"skew `{inner.var}` by `{loop.var}`"
    factor = next((f for f in SKEW_FACTORS if not _backward(scop, deps, [loop, inner], [0, f], text, "")), None)
    if factor is None:
        why = _backward(scop, deps, [loop, inner], [0, SKEW_FACTORS[-1]], text,
                        f"skewing `{inner.var}` by {SKEW_FACTORS[-1]}*`{loop.var}`")  # fmt: skip
        return Rewrite(title, loop, False, why)
    outer_h, inner_h = _header(fn, loop, text), _header(fn, inner, text)
    for h in (outer_h, inner_h):
        if isinstance(h, str):
            return Rewrite(title, loop, False, h)
    assert isinstance(outer_h, Header) and isinstance(inner_h, Header)
    new = _skewed(outer_h, inner_h, factor, fn, text)
    return Rewrite(f"skew `{inner.var}` by {factor}*`{loop.var}`", loop, True, edits=(_replace(text, outer_h, new),))


def _skewed(outer: Header, inner: Header, f: int, fn: ir.Function, text: str) -> str:
    i, j = outer.loop.var, inner.loop.var
    js = _fresh(f"{j}_s", _names(fn, text))
    times = "" if f == 1 else f"{f} * "
    lo = f"{inner.lo} + {times}({outer.lo})"
    end = f"{inner.end} + {times}({outer.end} - 1)"
    kind = inner.type or "int "
    body = (f"{{\n  {kind}{j} = {js} - {times}{i};\n  if ({j} >= {inner.lo} && {j} < {inner.end})\n"
            f"{_indented(inner.body.strip(), '    ')}\n}}")  # fmt: skip
    lines = [_for(outer), f"for (int {js} = {lo}; {js} < {end}; {js}++)"]
    return _nest(lines, body, _indent(text, outer.start))


# ------------------------------------------------------------------------------------- fuse


def fuse(scop: Scop, deps: Dependences, fn: ir.Function, loop: LoopInfo, text: str) -> Rewrite | None:
    """Fuse `loop` with the loop that follows it (None: no loop follows it directly)."""
    second = _next_loop(scop, loop, text)
    if second is None:
        return None
    title = f"fuse loop `{loop.var}` with the next loop `{second.var}`"
    first_h, second_h = _header(fn, loop, text), _header(fn, second, text)
    for h in (first_h, second_h):
        if isinstance(h, str):
            return Rewrite(title, loop, False, h)
    assert isinstance(first_h, Header) and isinstance(second_h, Header)
    if (_squash(first_h.lo), _squash(first_h.end)) != (_squash(second_h.lo), _squash(second_h.end)):
        why = (f"the two loops run different iterations: `{loop.var}` from {first_h.lo} to below {first_h.end}, "
               f"`{second.var}` from {second_h.lo} to below {second_h.end}")  # fmt: skip
        return Rewrite(title, loop, False, why)
    if second.var != loop.var and re.search(rf"\b{re.escape(loop.var)}\b", second_h.body):
        return Rewrite(title, loop, False, f"the second loop's body uses `{loop.var}`, the first loop's counter")
    why = _fusion_violation(scop, deps, loop, second, text)
    if why:
        return Rewrite(title, loop, False, why)
    body = _substitute(second_h.body.strip(), second.var, loop.var) if second.var != loop.var else second_h.body.strip()
    indent = _indent(text, first_h.start)
    fused = f"{_for(first_h)} {{\n{_indented(first_h.body.strip(), '  ')}\n{_indented(body, '  ')}\n}}"
    edit = (_range(text, first_h.start, second_h.stop, loop.range.file), _reindent(fused, indent))
    return Rewrite(title, loop, True, edits=(edit,))


def _next_loop(scop: Scop, loop: LoopInfo, text: str) -> LoopInfo | None:
    """The loop written right after `loop` (nothing but blanks between them), in the same SCoP."""
    end = _statement_end(text, loop.range)
    for lp in scop.loops:
        start = _offset(text, lp.range.line, lp.range.col)
        if lp.parent == loop.parent and start >= end and text.encode()[end:start].strip() == b"":
            return lp
    return None


def _fusion_violation(scop: Scop, deps: Dependences, first: LoopInfo, second: LoopInfo, text: str) -> str:
    """Why fusing would run a dependence's sink before its source ("" if it never would): the
    fused schedule puts the second loop's statements in the first loop's place, after its body."""
    scop.ctx.reset_operations()
    d = first.depth
    seq = next(s for s in scop.statements if _in(s, first)).schedule
    place = _constant_dim(seq, 2 * d)
    new: dict[str, isl.Map] = {}
    for s in scop.statements:
        new[s.name] = _moved(s.schedule, d, place) if _in(s, second) else s.schedule
    for dep in deps.deps:
        bad = _reversed(scop, dep, new)
        if bad is None:
            continue
        if dep.array == HIDDEN_STATE:
            return f"`{scop.statement(dep.source).info.text}` may do I/O or touch global variables: fusing would reorder its calls"
        return _fusion_witness(scop, dep, bad, (first, second), text)
    return ""


def _constant_dim(m: isl.Map, k: int) -> int:
    """The value of output dimension `k` of the schedule `m` (a sequence position: a constant)."""
    v = m.range().dim_max_val(k)
    return int(v.to_python())


def _moved(sched: isl.Map, depth: int, place: int) -> isl.Map:
    """`sched` of a statement of the second loop moved into the first: its position at `depth`
    becomes the first loop's, its positions inside the loop come after the first loop's body."""
    n = sched.dim(isl.dim_type.out)
    dims = [f"t{k}" for k in range(n)]
    image = list(dims)
    image[2 * depth] = str(place)
    image[2 * depth + 2] = f"t{2 * depth + 2} + 100000"
    move = isl.Map.read_from_str(sched.get_ctx(), f"{{ [{', '.join(dims)}] -> [{', '.join(image)}] }}")
    return sched.apply_range(move)


def _reversed(scop: Scop, d: Dependence, new: dict[str, isl.Map]) -> isl.Map | None:
    """The instance pairs of `d` that the schedules `new` would run sink first (None: none)."""
    src, dst = new[d.source], new[d.sink]
    later_or_same = isl.Map.lex_ge(src.get_space().range())
    bad = d.relation.intersect(src.apply_range(later_or_same).apply_range(dst.reverse()))
    bad = bad.intersect_params(scop.context)
    return None if bad.is_empty() else bad


def _fusion_witness(scop: Scop, d: Dependence, bad: isl.Map, loops: tuple[LoopInfo, LoopInfo], text: str) -> str:
    first, second = loops
    a, b, bad = _culprits(scop, d, bad)
    x, y = _sample(bad)
    done, then, wrong = _ROLE[d.kind]
    back = x[first.depth] - y[second.depth]
    sa, sb = _written(a, text), _written(b, text)
    as_ = f" as `{sb}`" if sb != sa else ""
    return (f"`{sa}` is {done} by the first loop in iteration {_plus(first.var, back)} and {then}{as_} by the "
            f"second in iteration {second.var}: fused, the loop would run {wrong}")  # fmt: skip


# ------------------------------------------------------------------------------- distribute


def distribute(scop: Scop, deps: Dependences, fn: ir.Function, loop: LoopInfo, text: str) -> Rewrite | None:
    """One loop per group of `loop`'s statements that depend on each other in a cycle (None: the
    body is one statement)."""
    node = _for_node(fn, loop)
    if node is None or len(node.body) < 2:
        return None
    title = f"distribute loop `{loop.var}` over its statements"
    decl = next((s for s in node.body if isinstance(s, ir.Decl)), None)
    if decl is not None:
        return Rewrite(title, loop, False, f"the body declares `{decl.name}`: its statements share it")
    h = _header(fn, loop, text)
    if isinstance(h, str):
        return Rewrite(title, loop, False, h)
    groups, cycle = _groups(scop, deps, loop, node.body, text)
    if len(groups) < 2:
        return Rewrite(title, loop, False, cycle)
    header = source_of(text, loop.header_range)
    parts = []
    for group in groups:
        stmts = "\n".join(_indented(_child_text(text, node.body[k]), "  ") for k in group)
        parts.append(f"{header} {{\n{stmts}\n}}")
    indent = _indent(text, h.start)
    new = _one_statement(text, h, _reindent("\n".join(parts), indent))
    return Rewrite(f"{title} ({len(groups)} loops)", loop, True, edits=(_replace(text, h, new),))


def _groups(
    scop: Scop, deps: Dependences, loop: LoopInfo, body: tuple[ir.Stmt, ...], text: str
) -> tuple[list[list[int]], str]:
    """The statements of `body` (indices) in strongly connected groups of the dependences within an
    iteration of the loops around `loop`, in an order that runs every source first; and where
    there is one group, the cycle that makes it one, in C terms."""
    scop.ctx.reset_operations()
    owner = {s.name: k for s in scop.statements if _in(s, loop) for k in [_child_of(s, body)] if k is not None}
    edges: set[tuple[int, int]] = set()
    for d in deps.deps:
        a, b = owner.get(d.source), owner.get(d.sink)
        if a is not None and b is not None and a != b and _within_outer(scop, d, loop.depth):
            edges.add((a, b))
    n = len(body)
    reach = [[i == j or (i, j) in edges for j in range(n)] for i in range(n)]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                reach[i][j] = reach[i][j] or (reach[i][k] and reach[k][j])
    comps: list[list[int]] = []
    for i in range(n):
        if not any(i in c for c in comps):
            comps.append([j for j in range(n) if reach[i][j] and reach[j][i]])
    order = _topological(comps, reach)
    why = ""
    if len(order) < 2:
        back = next(((a, b) for a, b in sorted(edges) if a > b), None)
        if back is not None:
            later, earlier = _stmt_text(text, body[back[0]]), _stmt_text(text, body[back[1]])
            why = (f"`{earlier}` and `{later}` depend on each other across iterations of `{loop.var}` "
                   f"(`{later}` feeds `{earlier}` in a later iteration): they must stay in one loop")  # fmt: skip
        else:
            why = f"the statements of `{loop.var}` depend on each other in a cycle"
    return order, why


def _topological(comps: list[list[int]], reach: list[list[bool]]) -> list[list[int]]:
    """The groups with every group that reaches another before it, else in source order."""
    left, out = list(comps), []
    while left:
        free = [c for c in left if not any(reach[o[0]][c[0]] for o in left if o is not c)]
        first = min(free, key=lambda c: c[0])
        out.append(first)
        left.remove(first)
    return out


def _within_outer(scop: Scop, d: Dependence, depth: int) -> bool:
    """Whether `d` has instance pairs at the same iteration of the `depth` loops around."""
    if depth == 0:
        return True
    r = d.relation
    n_in, n_out = r.dim(isl.dim_type.in_), r.dim(isl.dim_type.out)
    xs, ys = [f"x{k}" for k in range(n_in)], [f"y{k}" for k in range(n_out)]
    same = " and ".join(f"{xs[k]} = {ys[k]}" for k in range(depth))
    m = _pairs(r, xs, ys, same)
    return not r.intersect(m).intersect_params(scop.context).is_empty()


def _child_of(s: Statement, body: tuple[ir.Stmt, ...]) -> int | None:
    r = s.info.node.range
    for k, child in enumerate(body):
        c = child.range
        if (c.line, c.col) <= (r.line, r.col) and (r.end_line, r.end_col) <= (c.end_line, c.end_col):
            return k
    return None


def _stmt_text(text: str, s: ir.Stmt) -> str:
    """The statement as written where it is one line, else its first line and `...`."""
    first, *rest = _child_text(text, s).strip().split("\n")
    return first.rstrip(";") if not rest else f"{first.strip()} ..."


def _child_text(text: str, s: ir.Stmt) -> str:
    start = _offset(text, s.range.line, s.range.col)
    return text.encode()[start : _statement_end(text, s.range)].decode(errors="replace")


# ------------------------------------------------------------------------------ dependences


def _backward(scop: Scop, deps: Dependences, band: list[LoopInfo], skew: list[int], text: str, doing: str) -> str:
    """Why some dependence between iterations of the band's statements goes back in one of its
    loops (the band's loop `k` replaced by ``loop_k + skew[k] * band[0]`` where `skew` is given),
    at the same iteration of the loops around it ("" where none does). `doing` names the
    transformation in the reason."""
    scop.ctx.reset_operations()
    first = band[0].depth
    factors = skew or [0] * len(band)
    inside = {s.name for s in scop.statements if _in(s, band[-1])}
    for d in deps.deps:
        if d.source not in inside or d.sink not in inside:
            continue
        r = d.relation
        xs = [f"x{k}" for k in range(r.dim(isl.dim_type.in_))]
        ys = [f"y{k}" for k in range(r.dim(isl.dim_type.out))]
        same = [f"{xs[k]} = {ys[k]}" for k in range(first)]
        o = first
        for k, lp in enumerate(band):
            m = lp.depth
            delta = f"({ys[m]} - {xs[m]}) + {factors[k]} * ({ys[o]} - {xs[o]})"
            cond = " and ".join([*same, f"{delta} < 0"])
            bad = r.intersect(_pairs(r, xs, ys, cond)).intersect_params(scop.context)
            if bad.is_empty():
                continue
            if d.array == HIDDEN_STATE:
                call = scop.statement(d.source).info.text
                return f"`{call}` may do I/O or touch global variables: {doing or 'this'} would reorder its calls"
            return _band_witness(scop, d, bad, band, lp, text, doing)
    return ""


def _pairs(r: isl.Map, xs: list[str], ys: list[str], cond: str) -> isl.Map:
    """The map of `r`'s space whose pairs satisfy `cond` (over `xs`, `ys`)."""
    src = r.get_tuple_name(isl.dim_type.in_)
    dst = r.get_tuple_name(isl.dim_type.out)
    where = f" : {cond}" if cond else ""
    m = isl.Map.read_from_str(r.get_ctx(), f"{{ {src}[{', '.join(xs)}] -> {dst}[{', '.join(ys)}]{where} }}")
    return m.align_params(r.get_space())


def _band_witness(
    scop: Scop, d: Dependence, bad: isl.Map, band: list[LoopInfo], culprit: LoopInfo, text: str, doing: str
) -> str:
    a, b, bad = _culprits(scop, d, bad)
    x, y = _sample(bad)
    done, then, wrong = _ROLE[d.kind]
    at = f"({', '.join(lp.var for lp in band)})"
    later = f"({', '.join(_plus(lp.var, y[lp.depth] - x[lp.depth]) for lp in band)})"
    sa, sb = _written(a, text), _written(b, text)
    as_ = f" as `{sb}`" if sb != sa else ""
    return (f"`{sa}` is {done} in iteration {at} and {then}{as_} in iteration {later}, "
            f"a step back in `{culprit.var}`: {doing} could run {wrong}")  # fmt: skip


def _sample(bad: isl.Map) -> tuple[list[int], list[int]]:
    point = bad.wrap().sample_point()
    n_in, n_out = bad.dim(isl.dim_type.in_), bad.dim(isl.dim_type.out)
    coords = [int(point.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(n_in + n_out)]
    return coords[:n_in], coords[n_in:]


def _in(s: Statement, loop: LoopInfo) -> bool:
    return any(lp.id == loop.id for lp in s.info.loops)


def _reads(loop: LoopInfo, names: set[str]) -> bool:
    """Whether `loop`'s bounds read one of `names`."""
    used = {v for dnf in (loop.start, loop.cond) for conj in dnf for c in conj for v in c.expr.variables()}
    return bool(used & names)


# ----------------------------------------------------------------------------------- source


def _header(fn: ir.Function, loop: LoopInfo, text: str) -> Header | str:
    """The header of `loop` in the source, or why it cannot be rewritten."""
    node = _for_node(fn, loop)
    written = f"write it `for ({loop.var} = lo; {loop.var} < hi; {loop.var}++)` to transform it"
    if not re.match(r"for\s*\(", source_of(text, loop.header_range)):  # a `while` read as a `for`
        return f"`{loop.var}` is not counted by a `for` header: {written}"
    if node is None or node.step != 1:
        return f"`{loop.var}` does not count up by 1: {written}"
    cond = node.cond
    if not (isinstance(cond, ir.Binary) and cond.op in ("<", "<=") and isinstance(cond.lhs, ir.Var)
            and cond.lhs.name == loop.var):  # fmt: skip
        return f"the condition of `{loop.var}` is not `{loop.var} < hi` or `{loop.var} <= hi`: {written}"
    hi = source_of(text, cond.rhs.range)
    end = hi if cond.op == "<" else _plus_one(hi)
    head = source_of(text, loop.header_range)
    kind = re.match(rf"for\s*\(\s*(.*?)\b{re.escape(loop.var)}\s*=", head)
    type_ = (kind.group(1).strip() + " ") if kind and kind.group(1).strip() else ""
    start = _offset(text, loop.range.line, loop.range.col)
    stop = _statement_end(text, loop.range)
    head_end = _offset(text, loop.header_range.end_line, loop.header_range.end_col)
    body = text.encode()[head_end:stop].decode(errors="replace")
    return Header(loop, type_, source_of(text, node.init.range), _paren(end), start, stop, body)


def _for_node(fn: ir.Function, loop: LoopInfo) -> ir.For | None:
    for s in _walk(fn.body):
        if isinstance(s, ir.For) and s.header_range == loop.header_range:
            return s
    return None


def _walk(body: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in body:
        yield s
        yield from _walk(ir.sub_statements(s))


def _only_child(text: str, outer: LoopInfo, inner: LoopInfo) -> bool:
    """Whether `outer`'s body is `inner` alone (maybe in braces)."""
    data = text.encode()
    head_end = _offset(text, outer.header_range.end_line, outer.header_range.end_col)
    before = data[head_end : _offset(text, inner.range.line, inner.range.col)].decode(errors="replace")
    after = data[_statement_end(text, inner.range) : _statement_end(text, outer.range)].decode(errors="replace")
    return before.strip() in ("", "{") and after.strip() in ("", "}") and (before.strip() == "{") == (after.strip() == "}")


def _for(h: Header) -> str:
    """The header as written, normalized to ``for (type i = lo; i < end; i++)``."""
    i = h.loop.var
    return f"for ({h.type}{i} = {h.lo}; {i} < {h.end}; {i}++)"


def _nest(headers: list[str], body: str, indent: str) -> str:
    """`headers` nested, each indented by two more spaces, then `body`; the first line unindented."""
    lines = [f"{'  ' * k}{h}" for k, h in enumerate(headers)]
    if body.startswith("{"):  # a block: its `{` on the last header's line, its `}` under it
        block = _indented(body, "  " * (len(headers) - 1)).split("\n")
        lines[-1] += " {"
        lines += block[1:]
    else:
        lines.append(_indented(body, "  " * len(headers)))
    return _reindent("\n".join(lines), indent)


def _indented(block: str, pad: str) -> str:
    """`block` with its own indentation (that of its least indented later line) replaced by `pad`."""
    lines = block.split("\n")
    rest = [ln for ln in lines[1:] if ln.strip()]
    common = min((len(ln) - len(ln.lstrip()) for ln in rest), default=0)
    first = lines[0].strip()
    shift = common if first.endswith("{") else max(common - 2, 0)  # a block's `}`; a statement's continuation
    out = [pad + first] + [pad + (ln[shift:] if ln[:shift].strip() == "" else ln.lstrip()) for ln in lines[1:]]
    return "\n".join(ln.rstrip() for ln in out)


def _reindent(block: str, indent: str) -> str:
    lines = block.split("\n")
    return "\n".join([lines[0]] + [indent + ln if ln.strip() else ln for ln in lines[1:]])


def _indent(text: str, offset: int) -> str:
    data = text.encode()
    line_start = data.rfind(b"\n", 0, offset) + 1
    prefix = data[line_start:offset].decode(errors="replace")
    return prefix if prefix.strip() == "" else ""


_TOKEN = r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/|(?<![\w.])(?<!->)\b{var}\b'


def _substitute(code: str, var: str, by: str) -> str:
    """`code` with each use of the variable `var` replaced by `by` (not in strings, comments or
    after ``.``/``->``)."""
    pattern = re.compile(_TOKEN.format(var=re.escape(var)), re.S)
    return pattern.sub(lambda m: by if m.group(0) == var else m.group(0), code)


def _names(fn: ir.Function, text: str) -> set[str]:
    """The identifiers of the function's text: generated names avoid them."""
    r = fn.range
    body = text.encode()[_offset(text, r.line, r.col) : _offset(text, r.end_line, r.end_col)].decode(errors="replace")
    return set(re.findall(r"[A-Za-z_]\w*", body))


def _fresh(name: str, taken: set[str]) -> str:
    k, out = 2, name
    while out in taken:
        out, k = f"{name}{k}", k + 1
    taken.add(out)
    return out


def _plus_one(t: str) -> str:
    """``t + 1`` as a C programmer writes it: ``n - 1`` gives ``n``, ``7`` gives ``8``."""
    t = t.strip()
    if t.isdigit():
        return str(int(t) + 1)
    less = re.fullmatch(r"([\w\s+*/%()-]*?\S)\s*-\s*1", t)  # + - * / % only: `- 1` is the last operation
    if less and not t.endswith(")"):
        return less.group(1)
    return f"{_paren(t)} + 1"


def _paren(t: str) -> str:
    t = t.strip()
    return t if re.fullmatch(r"[\w.]+", t) else f"({t})"


def _squash(t: str) -> str:
    return re.sub(r"\s+", "", t)


def source_of(text: str, r: SourceRange) -> str:
    data = text.encode()
    return data[_offset(text, r.line, r.col) : _offset(text, r.end_line, r.end_col)].decode(errors="replace")


def _offset(text: str, line: int, col: int) -> int:
    data = text.encode()
    pos = 0
    for _ in range(line - 1):
        pos = data.index(b"\n", pos) + 1
    return pos + col - 1


def _statement_end(text: str, r: SourceRange) -> int:
    """The offset after the statement whose range is `r` (clang's ranges stop before a last `;`)."""
    data = text.encode()
    end = _offset(text, r.end_line, r.end_col)
    rest = data[end:]
    stripped = rest.lstrip()
    return end + (len(rest) - len(stripped)) + 1 if stripped.startswith(b";") else end


def _position(text: str, offset: int) -> tuple[int, int]:
    data = text.encode()
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def _range(text: str, start: int, stop: int, file: str) -> SourceRange:
    (l1, c1), (l2, c2) = _position(text, start), _position(text, stop)
    return SourceRange(file, l1, c1, l2, c2)


def _replace(text: str, h: Header, new: str) -> tuple[SourceRange, str]:
    return _range(text, h.start, h.stop, h.loop.range.file), new


def _one_statement(text: str, h: Header, new: str) -> str:
    """`new` (several statements) in braces where the loop it replaces is the body of a ``for``,
    ``if`` or ``while`` without braces (the text before it ends with ``)`` or ``else``)."""
    before = text.encode()[: h.start].decode(errors="replace").rstrip()
    if not (before.endswith(")") or re.search(r"\belse$", before)):
        return new
    indent = _indent(text, h.start)
    first, *rest = new.split("\n")
    inside = [f"{indent}  {first}"] + [f"  {ln}" if ln.strip() else ln for ln in rest]
    return "\n".join(["{", *inside, f"{indent}}}"])
