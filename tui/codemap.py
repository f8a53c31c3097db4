"""Which lines of generated code come from which source statement.

The printers say it: every target's code comes with a `SourceMap` (generated line -> SCoP
statement and its source range, `core_compiler/source_map.py`), CUDA, OpenCL and C from tags the
printers put on a statement's line, LLVM IR and PTX from the debug location the LLVM lowering gives
a statement's instructions (their ``!dbg``, PTX's ``.loc``). Here the map becomes what the code
tabs need: statement key -> lines, and the statements under the source cursor.

What this covers: the lines that execute a SCoP statement (in every kernel, phase and tile; in
PTX the instructions under the statement's ``.loc``, which the optimizer may have moved or merged).
What it does not: loops, copies between global and promoted memory, launches (they come from the
schedule, not from one statement).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from explorer.api import FunctionAnalysis, SourceMap


@dataclass(frozen=True)
class StatementSpan:
    """One SCoP statement and the source lines it spans."""

    name: str  # "S1", or "1:S0" for the second SCoP of the function
    line: int
    end_line: int


def statement_spans(fa: FunctionAnalysis) -> tuple[StatementSpan, ...]:
    spans = []
    for sa in fa.scops:
        prefix = f"{sa.scop.index}:" if sa.scop.index else ""
        spans += [StatementSpan(prefix + st.name, st.range.line, st.range.end_line) for st in sa.scop.statements]
    return tuple(spans)


def generated_lines(smap: SourceMap, fa: FunctionAnalysis) -> dict[str, tuple[int, ...]]:
    """Statement key (as in `statement_spans`) -> the 1-based lines of the mapped code that
    execute it; statements of SCoPs outside `fa` are left out."""
    prefixes = {sa.scop.name: f"{sa.scop.index}:" if sa.scop.index else "" for sa in fa.scops}
    found: dict[str, list[int]] = {}
    for e in smap.entries:
        if e.scop in prefixes:
            found.setdefault(prefixes[e.scop] + e.statement, []).append(e.line)
    return {name: tuple(sorted(set(lines))) for name, lines in found.items()}


def statements_at(spans: Iterable[StatementSpan], line: int) -> tuple[str, ...]:
    return tuple(s.name for s in spans if s.line <= line <= s.end_line)


def lines_for(statements: Iterable[str], mapping: Mapping[str, tuple[int, ...]]) -> set[int]:
    return {n for s in statements for n in mapping.get(s, ())}


# Background colours of statements, in source order (dark, so monokai's text stays readable).
PALETTE = ("#3b2f5c", "#1f4a4f", "#5a4220", "#25502a", "#5a2438", "#2f4470", "#4f4f1f", "#503060")


def statement_colours(spans: Iterable[StatementSpan]) -> dict[str, str]:
    """Statement key -> its background colour, the same in the source and every code tab."""
    return {s.name: PALETTE[i % len(PALETTE)] for i, s in enumerate(spans)}


def line_colours(spans: Iterable[StatementSpan]) -> dict[int, str]:
    """Source line -> the colour of the statement on it (the innermost where statements nest)."""
    spans = list(spans)
    colours = statement_colours(spans)
    out: dict[int, str] = {}
    for s in sorted(spans, key=lambda s: s.end_line - s.line, reverse=True):
        for line in range(s.line, s.end_line + 1):
            out[line] = colours[s.name]
    return out


def statements_on(mapping: Mapping[str, tuple[int, ...]], line: int) -> tuple[str, ...]:
    """The statements that generated code line `line` executes (the reverse of `lines_for`)."""
    return tuple(s for s, lines in mapping.items() if line in lines)
