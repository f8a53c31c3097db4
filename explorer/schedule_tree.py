"""The schedule tree of a function's SCoPs, as plain data for the UIs: the tree hexplore's
scheduler made (the `schedule[k]` pass, `core_compiler.transform.schedule.tree_json`), the one the GPU
mapping cuts into kernels. The editor's ``hexplore/scheduleTree`` and the TUI's Schedule tab both
show this tree.

A domain node per SCoP, then isl's nodes: each member of a band is one ``band`` node (outermost
first), named after the source loop it follows, with that loop's header as its range and the
dependences the loop carries; a member no source loop is (a skewed ``t + i``) is named by its
expression. Example (matmul)::

    function matmul
      domain matmul#scop0          [n] -> { S0[i, j] : ...; S1[i, j, k] : ... }
        band i (parallel)          [n] -> { S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }
          band j (parallel)
            band k (reduction)     [n] -> { S0[i, j] -> [(0)]; S1[i, j, k] -> [(k)] }
              sequence
                filter S0          [n] -> { S0[i, j] }
                  leaf S0: C[i][j] = 0.0
                filter S1
                  leaf S1: C[i][j] += A[i][k] * B[k][j]

The three bands are one isl band, ``permutable`` (they can be tiled together).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core_compiler.analysis import FunctionAnalysis, ScopAnalysis
from core_compiler.frontend import ir
from core_compiler.scop.region import LoopInfo
from core_compiler.source import SourceRange
from core_compiler.transform.schedule import tree_json
from explorer.lookup import describe_carried

if TYPE_CHECKING:  # the back end loads when first used (issue 29)
    from core_compiler.pipeline import ScopUnit


@dataclass(frozen=True)
class ScheduleNode:
    kind: str  # "function" | "domain" | "band" | "sequence" | "set" | "filter" | "mark" | "leaf" | …
    detail: str  # a short label: a name, a loop, a statement
    arcana: str = ""  # the isl text (domain, filter set, band member)
    range: SourceRange | None = None
    children: tuple[ScheduleNode, ...] = ()
    loop: str | None = None  # bands: the loop variable (None: the member is no source loop)
    status: str | None = None  # bands: "parallel" | "reduction" | "sequential"
    carried: tuple[str, ...] = ()  # bands: the dependences the loop carries in the source
    permutable: bool = False  # bands: a member of a permutable isl band of several members


def schedule_tree(fa: FunctionAnalysis, units: Sequence[ScopUnit]) -> ScheduleNode:
    """The tree of `units` (the back-end pipeline's, `explorer.api.backend(fa).units`); a SCoP
    whose schedule failed is a domain node that says so."""
    scheduled = {u.analysis.scop.index: u for u in units}
    fn = fa.function
    scops = tuple(_scop(sa, scheduled.get(sa.scop.index)) for sa in fa.scops)
    return ScheduleNode("function", fn.name, range=fn.range, children=scops)


def _scop(sa: ScopAnalysis, unit: ScopUnit | None) -> ScheduleNode:
    scop = sa.scop
    if unit is None or unit.schedule is None:
        return ScheduleNode("domain", f"{scop.name}: not scheduled (see its pass)", range=scop.range)
    root: dict[str, Any] = tree_json(unit.schedule.get_root(), scop)
    children = tuple(n for c in root["children"] for n in _nodes(sa, c))
    return ScheduleNode("domain", scop.name, str(root.get("domain", "")), scop.range, children)


def _nodes(sa: ScopAnalysis, t: dict[str, Any]) -> list[ScheduleNode]:
    kind = t["kind"]
    children = tuple(n for c in t["children"] for n in _nodes(sa, c))
    if kind == "band":
        return [_band(sa, t, children)] if t["members"] else list(children)
    if kind == "leaf":
        return [_leaf(sa, t["statements"])]
    if kind == "filter":
        return [ScheduleNode("filter", ", ".join(t["statements"]), t["filter"], children=children)]
    return [ScheduleNode(kind, str(t.get("mark", "")), children=children)]  # sequence, set, mark, …


def _band(sa: ScopAnalysis, t: dict[str, Any], children: tuple[ScheduleNode, ...]) -> ScheduleNode:
    """The band's members, outermost first, each the parent of the next."""
    permutable = bool(t["permutable"]) and len(t["members"]) > 1
    node = children
    for k in reversed(range(len(t["members"]))):
        node = (_member(sa, t, k, node, permutable),)
    return node[0]


def _member(sa: ScopAnalysis, t: dict[str, Any], k: int, children: tuple[ScheduleNode, ...],
            permutable: bool) -> ScheduleNode:  # fmt: skip
    loops = [_loop_info(sa, lid) for lid in t["loops"][k]]
    facts = [sa.deps.loop(lid) for lid in t["loops"][k]]
    if t["coincident"][k]:
        status = "parallel"
    elif facts and all(f.reduction for f in facts):
        status = "reduction"
    else:
        status = "sequential"
    names = list(dict.fromkeys(lp.var for lp in loops))
    var = "/".join(names) if names else None
    carried = tuple(describe_carried(c) for f in facts for c in f.carried)
    rng = loops[0].header_range if len(loops) == 1 else None
    label = var or t["exprs"][k] or f"member {k}"
    return ScheduleNode("band", f"{label} ({status})", t["members"][k], rng, children, var, status, carried, permutable)


def _loop_info(sa: ScopAnalysis, loop_id: str) -> LoopInfo:
    return next(lp for s in sa.scop.statements for lp in s.info.loops if str(lp.id) == loop_id)


def _leaf(sa: ScopAnalysis, names: Sequence[str]) -> ScheduleNode:
    if len(names) != 1:
        return ScheduleNode("leaf", ", ".join(names))
    s = sa.scop.statement(names[0])
    node = s.info.node
    if not isinstance(node, ir.Assign):  # an opaque call
        return ScheduleNode("leaf", f"{s.name}: {s.info.text}", range=s.range)
    value = str(node.value)
    if isinstance(node.value, ir.Binary | ir.Unary | ir.Cast | ir.Ternary):
        value = value[1:-1]  # these print wrapped in one pair of parentheses
    return ScheduleNode("leaf", f"{s.name}: {node.target} {node.op} {value}", range=s.range)
