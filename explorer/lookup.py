"""What is at a source position, and the facts about it a UI shows: loops and array accesses.

Positions are the core's: 1-based line, 1-based byte column. Facts are plain data with the isl
objects already printed, so a UI formats them without touching isl.

Example::

    facts = loop_at(analysis, 5, 3)        # the loop whose header covers line 5, column 3
    facts.status                           # "parallel" | "reduction" | "sequential"
    [describe_carried(c) for c in facts.carried]   # ["flow S1→S1 (0,1)"]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import islpy as isl

from core_compiler.analysis import ScopAnalysis
from core_compiler.frontend import ir
from core_compiler.remarks import Remark, RemarkKind
from core_compiler.scop.dependences import Carried, LoopParallelism
from core_compiler.scop.model import Access, Statement
from core_compiler.scop.region import LoopInfo
from core_compiler.source import SourceRange
from explorer.offload import Placements
from explorer.placement import mapped, placement
from explorer.workspace import DocumentAnalysis, FunctionResult


@dataclass(frozen=True, eq=False)
class LoopFacts:
    function: str
    scop: ScopAnalysis
    parallelism: LoopParallelism
    statements: tuple[str, ...]  # the statements the loop encloses

    @property
    def loop(self) -> LoopInfo:
        return self.parallelism.loop

    @property
    def carried(self) -> tuple[Carried, ...]:
        return self.parallelism.carried

    @property
    def status(self) -> str:
        if self.parallelism.parallel:
            return "parallel"
        return "reduction" if self.parallelism.reduction else "sequential"

    @property
    def domain(self) -> str:
        """The iterations of this loop and its enclosing loops, e.g. ``[n] -> { [i, j] : ... }``."""
        keep = self.loop.depth + 1
        union: isl.Set | None = None
        for s in self.scop.scop.statements:
            if s.name not in self.statements:
                continue
            d = s.domain
            d = d.project_out(isl.dim_type.set, keep, d.dim(isl.dim_type.set) - keep).reset_tuple_id()
            union = d if union is None else union.union(d)
        return str(union.coalesce()) if union is not None else ""


@dataclass(frozen=True, eq=False)
class AccessFacts:
    function: str
    statement: Statement
    access: Access
    placement: str | None = None  # where the GPU mapping puts the array (None: not mapped)
    scop: ScopAnalysis | None = None
    placement_pending: bool = False  # not computed: the caller asked not to wait for the mapping

    @property
    def kind(self) -> str:
        return "write" if self.access.is_write else "read"

    @property
    def relation(self) -> str:
        return str(self.access.relation)

    @property
    def range(self) -> SourceRange:
        return self.access.info.range


def describe_carried(c: Carried) -> str:
    """``flow S1→S1 (0,1)``: kind, source and sink statements, distance vector."""
    return f"{c.kind} {c.source}→{c.sink} ({','.join(map(str, c.distance))})"


def loop_facts(fr: FunctionResult) -> list[LoopFacts]:
    """Every modeled loop of a function, in source order."""
    out = []
    for sa in fr.scops:
        for lp in sa.deps.loops:
            inside = tuple(
                s.name for s in sa.scop.statements if any(x.id == lp.loop.id for x in s.info.loops)
            )
            out.append(LoopFacts(fr.name, sa, lp, inside))
    return out


def loop_at(analysis: DocumentAnalysis, line: int, col: int) -> LoopFacts | None:
    """The modeled loop whose header (``for (...)``) covers the position."""
    for fr in _functions_at(analysis, line, col):
        for facts in loop_facts(fr):
            if covers(facts.loop.header_range, line, col):
                return facts
    return None


def accesses_at(
    analysis: DocumentAnalysis,
    line: int,
    col: int,
    map_to_gpu: bool = True,
    known: Callable[[FunctionResult], Placements | None] | None = None,
) -> list[AccessFacts]:
    """The array accesses under the position (the innermost: ``A[idx[i]]`` on ``idx`` gives
    ``idx[i]``); a compound assignment's target gives its read and its write. A placement comes
    from `known` (the workspace's `known_placements`: the offload decisions') where given, else
    from a GPU mapping in this process. Without `map_to_gpu`, such a mapping (tenths of a second
    to seconds) is not made here: a placement neither known nor mapped is `placement_pending`."""
    found: list[tuple[AccessFacts, Placements | None, int]] = []
    for fr in _functions_at(analysis, line, col):
        decided = known(fr) if known is not None else None
        for k, sa in enumerate(fr.scops):
            for s in sa.scop.statements:
                for a in (*s.reads, *s.writes):
                    if covers(a.info.range, line, col):
                        found.append((AccessFacts(fr.name, s, a, scop=sa), decided, k))
    if not found:
        return []
    inner = min((f for f, _, _ in found), key=lambda f: _size(f.range)).range
    return [_placed(f, decided, k, map_to_gpu) for f, decided, k in found if f.range == inner]


def _placed(f: AccessFacts, decided: Placements | None, k: int, map_to_gpu: bool) -> AccessFacts:
    assert f.scop is not None
    if decided is not None:
        return replace(f, placement=decided.get((k, f.statement.name, f.access.array)))
    if not map_to_gpu and not mapped(f.scop):
        return replace(f, placement_pending=True)
    return replace(f, placement=placement(f.scop, f.statement.name, f.access.array))


@dataclass(frozen=True)
class NotModeled:
    """Code hexplore does not model, and why: the detection's remarks (missed) about it."""

    what: str  # "loop `i`", "`idx[i]`", "`hist[idx[i]] += 1`"
    range: SourceRange
    reasons: tuple[Remark, ...]


# the passes whose missed remarks say why code is not modeled (`region.py`'s checks)
DETECTION_PASSES = ("scop-detect",)


def not_modeled_at(analysis: DocumentAnalysis, line: int, col: int) -> NotModeled | None:
    """Why the code at the position is not in a modeled loop nest: on the header of a loop that is
    not modeled, every reason given inside it; on a rejected construct (``idx[i]`` in
    ``hist[idx[i]]``), its reason; elsewhere in a statement of such a loop, the reasons given in
    that statement. None where the detection said nothing (or the code is modeled)."""
    for fr in _functions_at(analysis, line, col):
        reasons = [r for r in fr.remarks if r.kind is RemarkKind.MISSED and r.pass_name in DETECTION_PASSES]
        if not reasons:
            continue
        here = [r for r in reasons if covers(r.range, line, col)]
        stmt = _innermost(fr.analysis.function.body, line, col)
        if isinstance(stmt, ir.For | ir.OtherLoop) and covers(stmt.header_range, line, col):
            inside = tuple(r for r in reasons if stmt.range.contains(r.range))
            what = f"loop `{stmt.var}`" if isinstance(stmt, ir.For) else f"this `{stmt.kind}` loop"
            return NotModeled(what, stmt.header_range, inside) if inside else None
        if here:
            inner = min(here, key=lambda r: _size(r.range))
            return NotModeled(_quoted(analysis, inner.range), inner.range, tuple(r for r in here if r.range == inner.range))
        if stmt is not None and not isinstance(stmt, ir.For | ir.OtherLoop | ir.If):
            inside = tuple(r for r in reasons if stmt.range.contains(r.range))
            if inside:
                return NotModeled(_quoted(analysis, stmt.range), stmt.range, inside)
    return None


def _innermost(body: tuple[ir.Stmt, ...], line: int, col: int) -> ir.Stmt | None:
    for stmt in body:
        if covers(stmt.range, line, col):
            inner = _innermost(ir.sub_statements(stmt), line, col)
            return inner if inner is not None else stmt
    return None


def _quoted(analysis: DocumentAnalysis, r: SourceRange) -> str:
    """```hist[idx[i]] += 1``` (backquoted source text), or "this code" where it spans lines."""
    lines = analysis.document.text.encode().split(b"\n")
    if r.line != r.end_line or r.line > len(lines) or r.file != analysis.document.path:
        return "this code"
    return "`" + lines[r.line - 1][r.col - 1 : r.end_col - 1].decode(errors="replace").rstrip(";") + "`"


def covers(r: SourceRange, line: int, col: int) -> bool:
    """Whether the character at (line, col) lies in `r` (whose end is exclusive)."""
    return (r.line, r.col) <= (line, col) < (r.end_line, r.end_col)


def _functions_at(analysis: DocumentAnalysis, line: int, col: int) -> list[FunctionResult]:
    return [
        f
        for f in analysis.functions
        if f.analysis.function.range.file == analysis.document.path
        and covers(f.analysis.function.range, line, col)
    ]


def _size(r: SourceRange) -> tuple[int, int]:
    return (r.end_line - r.line, r.end_col - r.col)
