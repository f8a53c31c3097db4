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


def dependences_text(fa: FunctionAnalysis) -> str:
    """Per loop: parallel, reduction, or the dependences it carries."""
    if not fa.scops:
        return f"`{fa.function.name}` has no SCoP: no dependences were computed"
    out: list[str] = []
    for index, sa in enumerate(fa.scops):
        out.append(f"SCoP {index} (line {sa.scop.region.range.line})")
        for lp in sa.deps.loops:
            out.append("  " + loop_line(lp))
    return "\n".join(out)


def loop_line(lp: Any) -> str:
    loop = lp.loop
    head = f"{'  ' * loop.depth}loop {loop.var} (line {loop.header_range.line})"
    if not lp.carried:
        return f"{head}: parallel"
    if lp.reduction:
        return f"{head}: reduction (parallel as a reduction)"
    carried = ", ".join(f"{c.kind} {c.source}->{c.sink} on {c.array} dist {c.distance}" for c in lp.carried)
    return f"{head}: carried: {carried}"
