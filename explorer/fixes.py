"""Source rewrites the editor offers as code actions: quick fixes for remarks that name a fix, and
loop transformations checked against the dependences. Plain data in core positions (1-based
lines, byte columns); `lsp/code_actions.py` turns them into LSP edits.

Example::

    fix = restrict_fix(fr, remark, text)    # for a NoAliasAssumption remark
    fix.title                                # "add `restrict` to `a`, `b`"
    [(e.range.col, e.text) for e in fix.edits]   # [(17, "restrict "), (30, "restrict ")]

    swap = interchange_at(analysis, 5, 3)   # on the header of a loop with a perfectly nested one
    swap.legal, swap.reason, swap.edits      # the two headers' texts traded, or why not
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from explorer.api import Remark, SourceRange, header_edits, interchange, source_text
from explorer.lookup import loop_at
from explorer.workspace import DocumentAnalysis, FunctionResult

RESTRICT_REMARK = "NoAliasAssumption"


@dataclass(frozen=True)
class Edit:
    range: SourceRange  # replaced by `text` (an insertion where it is empty)
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    remark: Remark  # the remark it fixes


@dataclass(frozen=True)
class LoopRewrite:
    title: str
    range: SourceRange  # the outer loop's header
    legal: bool
    reason: str  # why it is refused ("" when legal)
    edits: tuple[Edit, ...]  # empty when refused


def restrict_fix(fr: FunctionResult, remark: Remark, text: str) -> Fix | None:
    """For a `NoAliasAssumption` remark: ``restrict`` inserted into the declarations of the
    pointer and array parameters it names that lack it (``double *a`` -> ``double *restrict a``,
    ``double A[n][n]`` -> ``double A[restrict n][n]``). None where none can take it."""
    if remark.name != RESTRICT_REMARK:
        return None
    fn = fr.analysis.function
    names = [n for n in str(remark.args.get("arrays", "")).split(",") if n]
    edits, fixed = [], []
    for name in names:
        param = next((p for p in fn.params if p.name == name), None)
        if param is None or param.restrict or param.range.line != param.range.end_line:
            continue
        decl = source_text(text, param.range)
        found = _restrict_insertion(decl, name)
        if found is None:
            continue
        offset, insert = found
        col = param.range.col + len(decl[:offset].encode())
        r = param.range
        edits.append(Edit(SourceRange(r.file, r.line, col, r.line, col), insert))
        fixed.append(f"`{name}`")
    if not edits:
        return None
    return Fix(f"add `restrict` to {', '.join(fixed)}", tuple(edits), remark)


def _restrict_insertion(decl: str, name: str) -> tuple[int, str] | None:
    """Where ``restrict`` goes in the declaration `decl` of parameter `name`, and the text."""
    m = re.search(rf"\b{re.escape(name)}\b", decl)
    if m is None:
        return None
    if decl[: m.start()].rstrip().endswith("*"):  # double *a, double (*P)[n]
        return m.start(), "restrict "
    after = decl[m.end() :]
    rest = after.lstrip()
    if rest.startswith("["):  # double A[n][n], double A[]
        at = m.end() + len(after) - len(rest) + 1
        return at, "restrict" if rest[1:].lstrip().startswith("]") else "restrict "
    return None


def interchange_at(analysis: DocumentAnalysis, line: int, col: int) -> LoopRewrite | None:
    """Swapping the modeled loop whose header covers the position with the loop perfectly nested
    in it: legal where no dependence would be reversed (`core_compiler.transform.interchange`);
    None where there is no such pair. Reads the analysis' isl objects."""
    facts = loop_at(analysis, line, col)
    if facts is None:
        return None
    text = analysis.document.text
    found = interchange(facts.scop.scop, facts.scop.deps, facts.loop.id, text)
    if found is None:
        return None
    outer, inner = found.outer, found.inner
    title = f"interchange loops `{outer.var}` and `{inner.var}`"
    edits = tuple(Edit(r, t) for r, t in header_edits(outer, inner, text)) if found.legal else ()
    return LoopRewrite(title, outer.header_range, found.legal, found.reason, edits)


def apply_edits(text: str, edits: tuple[Edit, ...]) -> str:
    """`text` with `edits` (which do not overlap) made: what an editor does with them."""
    data = text.encode()
    starts = [0]
    for line in data.split(b"\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col - 1

    for e in sorted(edits, key=lambda e: (e.range.line, e.range.col), reverse=True):
        r = e.range
        data = data[: offset(r.line, r.col)] + e.text.encode() + data[offset(r.end_line, r.end_col) :]
    return data.decode()
