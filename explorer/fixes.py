"""Source rewrites the editor offers as code actions: quick fixes for remarks that name a fix, and
loop transformations checked against the dependences. Plain data in core positions (1-based
lines, byte columns); `lsp/code_actions.py` turns them into LSP edits.

Example::

    fix = restrict_fix(fr, remark, text)    # for a NoAliasAssumption remark
    fix.title                                # "add `restrict` to `a`, `b`"
    [(e.range.col, e.text) for e in fix.edits]   # [(17, "restrict "), (30, "restrict ")]

    swap = interchange_at(analysis, 5, 3)   # on the header of a loop with a perfectly nested one
    swap.legal, swap.reason, swap.edits      # the two headers' texts traded, or why not

    [r.title for r in schedule_rewrites_at(analysis, 5, 3)]
    # ["tile loops `i`, `j` by 16x16", ..., "unroll `i` by 2 and jam into `j`", ...]
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import islpy as isl

from core_compiler.transform import rewrites
from explorer.api import (
    ParseOptions,
    Remark,
    SourceRange,
    analyze_file,
    function_c,
    header_edits,
    interchange,
    source_text,
)
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


def schedule_rewrites_at(analysis: DocumentAnalysis, line: int, col: int) -> list[LoopRewrite]:
    """The loop transformations of `core_compiler.transform.rewrites` on the modeled loop whose
    header covers the position: tile by each of `TILE_SIZES`, unroll-and-jam by each of
    `UNROLL_FACTORS`, skew, fuse with the next loop, distribute; each legal with its edit, or
    refused with the reason (a refusal said once, not once per size). Reads isl objects."""
    facts = loop_at(analysis, line, col)
    fr = None if facts is None else analysis.function(facts.function)
    if facts is None or fr is None:
        return []
    scop, deps, fn, loop = facts.scop.scop, facts.scop.deps, fr.analysis.function, facts.loop
    text = analysis.document.text
    makers = [*(lambda t=t: rewrites.tile(scop, deps, fn, loop, text, t) for t in rewrites.TILE_SIZES),
              *(lambda f=f: rewrites.unroll_and_jam(scop, deps, fn, loop, text, f) for f in rewrites.UNROLL_FACTORS),
              *(lambda g=g: g(scop, deps, fn, loop, text) for g in (rewrites.skew, rewrites.fuse, rewrites.distribute))]  # fmt: skip
    out: list[LoopRewrite] = []
    for make in makers:
        try:
            found = make()
        except isl.Error:  # isl's budget ran out: not offered
            continue
        if found is not None and all(r.title != found.title for r in out):
            edits = tuple(Edit(r, t) for r, t in found.edits)
            out.append(LoopRewrite(found.title, loop.header_range, found.legal, found.reason, edits))
    return out


def rewrite_preview(analysis: DocumentAnalysis, line: int, col: int, title: str, options: ParseOptions) -> str | None:
    """The legal rewrite titled `title` on the loop at the position, as unified diffs: of the
    source, and of the function's C as ``hexplore compile --target c`` makes it (scheduled and
    tiled by hexplore) before and after; None where no such rewrite is offered there. Analyses
    the rewritten text (`options`: the document's include directories and macros)."""
    offered = [interchange_at(analysis, line, col), *schedule_rewrites_at(analysis, line, col)]
    found = next((r for r in offered if r is not None and r.legal and r.title == title), None)
    facts = loop_at(analysis, line, col)
    fr = None if facts is None else analysis.function(facts.function)
    if found is None or fr is None:
        return None
    doc = analysis.document
    new = apply_edits(doc.text, found.edits)
    (after,) = analyze_file(doc.path, new, options, only=fr.name).functions
    name = doc.path.rsplit("/", 1)[-1]
    source = _diff(doc.text, new, name, f"{name} ({title})")
    code = _diff(function_c(doc.path, doc.text, fr.analysis)[0], function_c(doc.path, new, after)[0],
                 f"{name}: C of {fr.name}", f"{name}: C of {fr.name} ({title})")  # fmt: skip
    return f"{source}\n{code or '(the generated C is the same)'}\n"


def _diff(a: str, b: str, a_name: str, b_name: str) -> str:
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), a_name, b_name, lineterm="")
    return "\n".join(lines)


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
