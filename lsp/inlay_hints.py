"""Inlay hints after modeled loop headers: ``parallel``, ``reduction`` or
``carries flow S1→S1 (0,1)`` (the first carried dependence, "+N more" when there are others);
and, once the back end has decided (`explorer/offload.py`), where each nest runs, with the cost
model's estimates, on its outer loop: ``GPU kernel0, kernel1: ~12 µs vs 3.4 ms on the CPU``,
``CPU: too little work``, ``GPU or CPU, decided at run time``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from explorer.lookup import LoopFacts, describe_carried, loop_facts
from explorer.workspace import DocumentAnalysis
from lsp.positions import LineIndex

if TYPE_CHECKING:
    from explorer.api import Remark


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


def decision_hints(
    decisions: Sequence[Remark], path: str, index: LineIndex, within: types.Range | None = None
) -> list[types.InlayHint]:
    """One hint per nest whose offload decision is known: where it runs and why, in a word or a
    number; the tooltip has the decision remarks in full."""
    nests: dict[tuple[int, int, int, int], list[Remark]] = {}
    for r in decisions:
        if r.range.file == path:
            nests.setdefault((r.range.line, r.range.col, r.range.end_line, r.range.end_col), []).append(r)
    out = []
    for (_, _, end_line, end_col), remarks in nests.items():
        text = decision_label(remarks)
        pos = index.position(end_line, end_col)
        if text is None or (within is not None and not _inside(pos, within)):
            continue
        tip = "\n".join(r.message for r in remarks)
        out.append(types.InlayHint(pos, text, padding_left=True, tooltip=tip))
    return out


def decision_label(remarks: Sequence[Remark]) -> str | None:
    """``GPU kernel0: ~12 µs vs 3.4 ms on the CPU``; None where no remark decides."""
    by_name = {r.name: r for r in remarks}
    kernels = [str(r.args["kernel"]) for r in remarks if r.name in ("Offloaded", "SequentialKernel")]
    if "KeptOnCpuByDirective" in by_name:
        return "CPU: #pragma hexplore cpu"
    if "KeptOnCpuForCaller" in by_name:
        return "CPU: the code around it needs its results"
    if "TooLittleWork" in by_name:
        return "CPU: too little work"
    if "KeptOnCpu" in by_name:
        return "CPU: " + (_versus(by_name["KeptOnCpu"]) or "too little work")
    if "RuntimeOffloadCheck" in by_name:
        return "GPU or CPU, decided at run time"
    if not kernels:
        return None
    gpu = f"GPU {', '.join(kernels)}"
    if "OffloadedByDirective" in by_name:
        return f"{gpu}: #pragma hexplore gpu"
    estimate = _versus(by_name["OffloadProfitable"]) if "OffloadProfitable" in by_name else None
    return f"{gpu}: {estimate}" if estimate else gpu


def _versus(r: Remark) -> str | None:
    from explorer.api import seconds_text  # loaded with the decisions it reads

    gpu, cpu = r.args.get("gpu_seconds"), r.args.get("cpu_seconds")
    if not isinstance(gpu, float) or not isinstance(cpu, float):
        return None
    return f"~{seconds_text(gpu)} on the GPU vs {seconds_text(cpu)} on the CPU"
