"""What the terminal UI shows, as plain data: no textual here, so it is testable on its own.

The session (a file and its analysis), pass diffs and filters, run sizes and the dependences text.
The back-end views are in `backend_views.py`, runs in `runs.py`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from explorer.api import (
    FileAnalysis,
    FunctionAnalysis,
    ParseOptions,
    PassRecord,
    analyze_file,
)
from explorer.running import default_params


@dataclass(frozen=True)
class Session:
    """One opened file: its text, its analysis, and how it was parsed."""

    path: str
    text: str
    analysis: FileAnalysis
    options: ParseOptions

    @property
    def functions(self) -> tuple[FunctionAnalysis, ...]:
        return self.analysis.functions

    def function(self, name: str) -> FunctionAnalysis | None:
        return next((f for f in self.functions if f.function.name == name), None)


def open_session(path: str, text: str, options: ParseOptions | None = None, only: str | None = None) -> Session:
    opts = options or ParseOptions((), ())
    return Session(path, text, analyze_file(path, text, opts, only=only), opts)


def pass_diff(prev: str, cur: str, prev_name: str, cur_name: str) -> str:
    """Unified diff of two pass artifacts; pass artifacts differ in kind, so this is mostly additions."""
    lines = difflib.unified_diff(prev.splitlines(), cur.splitlines(), prev_name, cur_name, lineterm="")
    return "\n".join(lines) or "(no change)"


def visible_passes(trace: Sequence[PassRecord], hide_unchanged: bool) -> list[int]:
    """Indices of the passes to list; with `hide_unchanged`, a pass whose artifact is the same
    text as the previous pass's is left out (the first pass is always shown)."""
    return [
        i for i, p in enumerate(trace) if not (hide_unchanged and i > 0 and p.text == trace[i - 1].text)
    ]


def size_params(fa: FunctionAnalysis) -> dict[str, int]:
    """The integer inputs with a default size: `matmul(int n, ...)` gives `{"n": 64}`, as
    `hexplore run` and the editor (`explorer.running.default_params`: smaller where fixed-size
    arrays need it)."""
    return default_params(fa)


KIND_WORDS = {"flow": "read after write", "anti": "write after read", "output": "write after write"}


def dependences_text(fa: FunctionAnalysis) -> str:
    """Per loop nest and loop: parallel, a reduction, or the dependences it carries, in C terms::

        loop nest 1 (lines 23-30)
          for t (line 23): sequential, carries 4 dependences:
              A: written by S1 (line 29), read by S0 (line 26) in the next iteration of t (read after write)
            for i (line 24): parallel
    """
    if not fa.scops:
        return f"`{fa.function.name}` has no loop nest hexplore models: no dependences were computed"
    out: list[str] = []
    for index, sa in enumerate(fa.scops):
        region = sa.scop.region.range
        out.append(f"loop nest {index + 1} (lines {region.line}-{region.end_line})")
        lines = {st.name: st.range.line for st in sa.scop.statements}
        loops = {st.name: st.iterators for st in sa.scop.statements}
        for lp in sa.deps.loops:
            out.extend("  " + line for line in loop_lines(lp, lines, loops))
    return "\n".join(out)


def loop_lines(lp: Any, lines: dict[str, int], loops: dict[str, tuple[str, ...]]) -> list[str]:
    loop = lp.loop
    indent = "  " * loop.depth
    head = f"{indent}for {loop.var} (line {loop.header_range.line})"
    if not lp.carried:
        return [f"{head}: parallel"]
    if lp.reduction:
        return [f"{head}: carries only a reduction (it may run in parallel, with atomic updates)"]
    n = len(lp.carried)
    out = [f"{head}: sequential, carries {n} dependence{'s' if n > 1 else ''}:"]
    for c in lp.carried:
        verb = {"flow": ("written", "read"), "anti": ("read", "written"), "output": ("written", "written again")}[c.kind]
        src = f"{c.source} (line {lines.get(c.source, '?')})"
        dst = f"{c.sink} (line {lines.get(c.sink, '?')})"
        when = _distance(c.distance, loops.get(c.source, ()), loops.get(c.sink, ()))
        out.append(f"{indent}    {c.array}: {verb[0]} by {src}, {verb[1]} by {dst} {when} ({KIND_WORDS[c.kind]})")
    return out


def _distance(distance: tuple[int, ...], a: tuple[str, ...], b: tuple[str, ...]) -> str:
    """`(0, 1)` over loops `i, j` -> "1 iteration of j later"; the first non-zero entry is the
    loop that carries it."""
    common = [x for x, y in zip(a, b, strict=False) if x == y]
    steps = [(common[k] if k < len(common) else f"loop {k + 1}", d) for k, d in enumerate(distance) if d]
    if not steps:
        return "in the same iteration"
    var, d = steps[0]
    first = f"the next iteration of {var}" if d == 1 else f"{d} iterations of {var} later"
    rest = ", ".join(f"{v} {'+' if x > 0 else '-'} {abs(x)}" for v, x in steps[1:])
    return f"in {first}" + (f" (and at {rest})" if rest else "")
