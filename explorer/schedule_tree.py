"""The schedule tree of a function's SCoPs, as plain data for the UIs.

Until the scheduler lands this is the *original* schedule, read off the 2d+1 schedules: a domain
node per SCoP, a band per loop, a sequence of filters where statements or loops follow each other
in the source, and a leaf per statement. Example (matmul)::

    function matmul
      domain matmul#scop0          { S0[i, j] : ...; S1[i, j, k] : ... }
        band i (parallel)          [n] -> [{ S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }]
          band j (parallel)
            sequence
              filter S0            { S0[i, j] }
                leaf S0: C[i][j] = 0.0
              filter S1
                band k (reduction)
                  leaf S1: C[i][j] += A[i][k] * B[k][j]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core_compiler.analysis import ScopAnalysis
from core_compiler.frontend import ir
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Statement
from core_compiler.scop.region import LoopInfo
from core_compiler.source import SourceRange
from explorer.lookup import describe_carried
from explorer.workspace import FunctionResult


@dataclass(frozen=True)
class ScheduleNode:
    kind: str  # "function" | "domain" | "sequence" | "filter" | "band" | "leaf"
    detail: str  # a short label: a name, a loop, a statement
    arcana: str = ""  # the isl text (domain, filter set, partial schedule)
    range: SourceRange | None = None
    children: tuple[ScheduleNode, ...] = ()
    loop: str | None = None  # bands: the loop variable
    status: str | None = None  # bands: "parallel" | "reduction" | "sequential"
    carried: tuple[str, ...] = ()  # bands: the dependences the loop carries


def schedule_tree(fr: FunctionResult) -> ScheduleNode:
    fn = fr.analysis.function
    scops = tuple(_scop(sa) for sa in fr.scops)
    return ScheduleNode("function", fn.name, range=fn.range, children=scops)


def _scop(sa: ScopAnalysis) -> ScheduleNode:
    scop = sa.scop
    body = _level(sa, scop.statements, 0)
    return ScheduleNode(
        "domain", scop.name, str(scop.domains().coalesce()), scop.range, (body,) if body else ()
    )


def _level(sa: ScopAnalysis, stmts: Sequence[Statement], depth: int) -> ScheduleNode | None:
    groups: dict[int, list[Statement]] = {}
    for s in stmts:
        groups.setdefault(s.info.position[depth], []).append(s)
    nodes = [_group(sa, g, depth) for _, g in sorted(groups.items())]
    if len(nodes) == 1:
        return nodes[0]
    if not nodes:
        return None
    filters = tuple(
        ScheduleNode("filter", ", ".join(s.name for s in g), _filter(g), children=(n,))
        for n, (_, g) in zip(nodes, sorted(groups.items()), strict=True)
    )
    return ScheduleNode("sequence", "", children=filters)


def _group(sa: ScopAnalysis, group: list[Statement], depth: int) -> ScheduleNode:
    first = group[0]
    if len(first.info.loops) <= depth:  # a statement at this level (positions are unique)
        node = first.info.node
        value = str(node.value)
        if isinstance(node.value, ir.Binary | ir.Unary | ir.Cast | ir.Ternary):
            value = value[1:-1]  # these print wrapped in one pair of parentheses
        return ScheduleNode("leaf", f"{first.name}: {node.target} {node.op} {value}", range=first.range)
    loop = first.info.loops[depth]
    lp = sa.deps.loop(loop.id)
    status = "parallel" if lp.parallel else "reduction" if lp.reduction else "sequential"
    inner = _level(sa, group, depth + 1)
    return ScheduleNode(
        "band",
        f"{loop.var} ({status})",
        _band(sa, group, loop),
        loop.header_range,
        (inner,) if inner else (),
        loop.var,
        status,
        tuple(describe_carried(c) for c in lp.carried),
    )


def _band(sa: ScopAnalysis, group: list[Statement], loop: LoopInfo) -> str:
    var = ("-" if loop.step < 0 else "") + isl_name(loop.var)
    parts = "; ".join(f"{s.name}[{', '.join(map(isl_name, s.iterators))}] -> [({var})]" for s in group)
    params = f"[{', '.join(map(isl_name, sa.scop.params))}] -> " if sa.scop.params else ""
    return f"{params}[{{ {parts} }}]"


def _filter(group: list[Statement]) -> str:
    return "{ " + "; ".join(f"{s.name}[{', '.join(map(isl_name, s.iterators))}]" for s in group) + " }"
