"""Hover: on a modeled loop's header, its iteration domain, parallelism and carried dependences;
on an array access, its access relation and memory placement; on code hexplore does not model (a
loop's header, a rejected construct such as ``idx[i]`` in ``hist[idx[i]]``, a statement), why
not; elsewhere nothing (null)."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from explorer.lookup import (
    AccessFacts,
    LoopFacts,
    NotModeled,
    accesses_at,
    describe_carried,
    loop_at,
    not_modeled_at,
)
from explorer.offload import Placements
from explorer.workspace import DocumentAnalysis, FunctionResult
from lsp.positions import LineIndex

_STATUS = {
    "parallel": "**parallel**: no iteration depends on another",
    "reduction": "**reduction**: parallel as a reduction (it carries only the reduction's own dependences)",
    "sequential": "**not parallel**: it carries the dependences below",
}


def hover(
    analysis: DocumentAnalysis,
    index: LineIndex,
    pos: types.Position,
    markdown: bool = True,
    known: Callable[[FunctionResult], Placements | None] | None = None,
) -> types.Hover | None:
    """An access's memory placement comes from `known` (the offload decisions', made in the
    back-end worker) or a GPU mapping made already: a hover never waits for a mapping (seconds);
    where there is none yet, it says so."""
    line, col = index.core_position(pos)
    loop = loop_at(analysis, line, col)
    if loop is not None:
        text, rng = loop_markdown(loop), loop.loop.header_range
    else:
        accesses = accesses_at(analysis, line, col, map_to_gpu=False, known=known)
        rejected = None if accesses else not_modeled_at(analysis, line, col)
        if accesses:
            text, rng = access_markdown(accesses), accesses[0].range
        elif rejected is not None:
            text, rng = not_modeled_markdown(rejected), rejected.range
        else:
            return None
    kind = types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText
    return types.Hover(types.MarkupContent(kind, text), index.range(rng))


def loop_markdown(facts: LoopFacts) -> str:
    loop = facts.loop
    out = [
        f"### loop `{loop.var}`",
        f"depth {loop.depth} in `{facts.scop.scop.name}`; encloses {', '.join(facts.statements)}",
        "",
        _STATUS[facts.status],
        "",
        "iteration domain:",
        f"```\n{facts.domain}\n```",
    ]
    if facts.carried:
        out.append("carried dependences:")
        out += [f"- {describe_carried(c)} on `{c.array}`" for c in facts.carried]
    return "\n".join(out)


def access_markdown(accesses: list[AccessFacts]) -> str:
    first = accesses[0]
    kinds = " and ".join(f.kind for f in accesses)
    out = [f"### {kinds} of `{first.access.info.text}` in {first.statement.name}", ""]
    for f in accesses:
        out += [f"{f.kind} relation:", f"```\n{f.relation}\n```"]
    placement = first.placement or "not decided yet (no GPU mapping for this code)"
    if first.placement_pending:
        placement = "not computed yet: the offload decisions are being made (hover again in a moment)"
    out.append(f"memory placement: {placement}")
    return "\n".join(out)


def not_modeled_markdown(found: NotModeled) -> str:
    out = [f"### {found.what}: not modeled", "", "hexplore does not model this code, so it stays as written:"]
    out += [f"- {r.message} (`{r.name}`)" for r in found.reasons]
    return "\n".join(out)
