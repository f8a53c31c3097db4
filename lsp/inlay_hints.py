"""Inlay hints after modeled loop headers: ``parallel``, ``reduction`` or
``carries flow S1→S1 (0,1)`` (the first carried dependence, "+N more" when there are others)."""

from __future__ import annotations

from lsprotocol import types

from explorer.lookup import LoopFacts, describe_carried, loop_facts
from explorer.workspace import DocumentAnalysis
from lsp.positions import LineIndex


def inlay_hints(
    analysis: DocumentAnalysis, index: LineIndex, within: types.Range | None = None
) -> list[types.InlayHint]:
    out = []
    for fr in analysis.functions:
        for facts in loop_facts(fr):
            r = facts.loop.header_range
            if r.file != analysis.document.path:
                continue
            pos = index.position(r.end_line, r.end_col)
            if within is not None and not _inside(pos, within):
                continue
            out.append(
                types.InlayHint(pos, label(facts), padding_left=True, tooltip=tooltip(facts))
            )
    return out


def label(facts: LoopFacts) -> str:
    if facts.status != "sequential":
        return facts.status
    more = f" +{len(facts.carried) - 1} more" if len(facts.carried) > 1 else ""
    return f"carries {describe_carried(facts.carried[0])}{more}"


def tooltip(facts: LoopFacts) -> str:
    if not facts.carried:
        return f"loop {facts.loop.var}: no iteration depends on another"
    lines = [f"loop {facts.loop.var} carries:"]
    lines += [f"  {describe_carried(c)} on {c.array}" for c in facts.carried]
    return "\n".join(lines)


def _inside(pos: types.Position, r: types.Range) -> bool:
    return (r.start.line, r.start.character) <= (pos.line, pos.character) <= (
        r.end.line,
        r.end.character,
    )
