"""The editor's offload actions: a ``#pragma hexplore`` line (`core_compiler/frontend/directives.py`)
written above a modeled loop nest, or removed. Plain data, as `explorer/fixes.py`'s rewrites:
`lsp/code_actions.py` turns them into LSP edits, which editors preview before applying.

On the outermost loop of a modeled nest (its header), where it changes the decision:

- "Offload to the GPU (block 32x8)": ``#pragma hexplore gpu block(32, 8)`` above the loop, with
  its indentation; refused (with the reason) where the GPU mapping could not follow it: the loops
  call a function of the program, or none of them runs its iterations in parallel (unless the
  decisions show a parallel kernel: isl's scheduler may find one by skewing). Not offered
  where the nest already goes to the GPU (a ``gpu`` directive, or the profitability model's
  ``OffloadProfitable`` in `decided`).
- "Keep on the CPU": ``#pragma hexplore cpu``; not offered where the nest already stays there (a
  ``cpu`` directive, too little work or a host call, ``KeptOnCpu`` in `decided`).

A directive of the other kind above the nest is replaced. On a ``#pragma hexplore`` line, valid
or not: "Remove hexplore directive" deletes the line. Example::

    [a.title for a in offload_actions_at(analysis, 5, 3)]   # on `for (int i = 0; ...`
    # ["Offload to the GPU (block 32x8)", "Keep on the CPU"]
    remove_directive_at(analysis, 4).edits                   # the line, newline included
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from explorer.api import Remark, SourceRange
from explorer.fixes import Edit, LoopRewrite, apply_edits
from explorer.lookup import loop_at
from explorer.workspace import DocumentAnalysis

if TYPE_CHECKING:  # the compiler loads with the first action, not with the editor
    from core_compiler.frontend import ParseOptions
    from core_compiler.frontend.ir import Directive

BLOCK = (32, 8)  # threads per block the offload action writes, x first
GPU_TITLE = f"Offload to the GPU (block {'x'.join(map(str, BLOCK))})"
CPU_TITLE = "Keep on the CPU"
REMOVE_TITLE = "Remove hexplore directive"
GPU_PRAGMA = f"#pragma hexplore gpu block({', '.join(map(str, BLOCK))})"
CPU_PRAGMA = "#pragma hexplore cpu"
_PRAGMA = re.compile(r"^\s*#\s*pragma\s+hexplore\b")
ON_GPU = ("OffloadProfitable", "OffloadedByDirective")  # decisions that already offload
ON_CPU = ("KeptOnCpu", "TooLittleWork", "HostCall", "KeptOnCpuByDirective", "KeptOnCpuForCaller")


def offload_actions_at(
    analysis: DocumentAnalysis, line: int, col: int, decided: Sequence[Remark] = ()
) -> list[LoopRewrite]:
    """The offload actions on the outermost loop of a modeled nest whose header covers the
    position; `decided`: the function's offload decisions where known (on the nests' headers)."""
    from core_compiler.transform import directives
    from core_compiler.transform.profitability import host_call, static_check

    facts = loop_at(analysis, line, col)
    fr = None if facts is None else analysis.function(facts.function)
    if facts is None or fr is None or facts.loop.depth != 0:
        return []
    sa, header = facts.scop, facts.loop.header_range
    current = directives.nest_directive(fr.analysis.function, sa.scop.loops)
    said = {r.name for r in decided if r.range.line == sa.scop.loops[0].header_range.line}
    model_cpu = bool(said & set(ON_CPU)) or static_check(sa.scop) is not None or host_call(sa.scop) is not None
    on_cpu = current.kind == "cpu" if current else model_cpu
    on_gpu = current.kind == "gpu" if current else bool(said & set(ON_GPU))
    text = analysis.document.text
    out = []
    if not on_gpu:
        why = directives.refusal_reason(sa.scop, _directive("gpu", GPU_PRAGMA, header, BLOCK))
        if why is None and not directives.has_parallel_loop(sa.deps) and "Offloaded" not in said:
            why = directives.NO_PARALLEL_LOOP  # isl may find one by skewing: the decisions say
        edits = () if why else _edits(text, header, current, GPU_PRAGMA)
        out.append(LoopRewrite(GPU_TITLE, header, why is None, f"cannot offload: {why}" if why else "", edits))
    if not on_cpu:
        out.append(LoopRewrite(CPU_TITLE, header, True, "", _edits(text, header, current, CPU_PRAGMA)))
    return out


def directive_preview(
    analysis: DocumentAnalysis, line: int, col: int, title: str, options: ParseOptions, decided: Sequence[Remark] = ()
) -> str | None:
    """The action titled `title` at the position (an offload action on a header, the removal on a
    pragma line) as unified diffs: of the source, and of the function's CUDA as ``hexplore
    compile`` makes it, before and after; None where no such action is offered there. Analyses
    and maps the function twice (`options`: the document's include directories and macros)."""
    removal = remove_directive_at(analysis, line)
    offered = [*offload_actions_at(analysis, line, col, decided), *([removal] if removal else [])]
    found = next((a for a in offered if a.legal and a.title == title), None)
    fr = next((f for f in analysis.functions if f.analysis.function.range.line <= line <= f.analysis.function.range.end_line), None)
    if found is None or fr is None:
        return None
    doc = analysis.document
    new = apply_edits(doc.text, found.edits)
    name = doc.path.rsplit("/", 1)[-1]
    source = _diff(doc.text, new, name, f"{name} ({title})")
    before, after = (_cuda(doc.path, text, options, fr.name) for text in (doc.text, new))
    code = _diff(before, after, f"{name}: CUDA of {fr.name}", f"{name}: CUDA of {fr.name} ({title})")
    return f"{source}\n{code or '(the generated CUDA is the same)'}\n"


def _cuda(path: str, text: str, options: ParseOptions, function: str) -> str:
    """`hexplore compile --target cuda`'s kernel and host files for `function` of `text`."""
    from core_compiler.analysis import analyze_file
    from core_compiler.compile import compile_file

    files = compile_file(analyze_file(path, text, options, only=function), "cuda", text=text).files
    out = "".join(f"// {n}\n{body}" for n, body in sorted(files.items()) if n.endswith((".cu", ".hu")))
    return out or "// no GPU code: the function's loop nests stay on the CPU\n"


def _diff(a: str, b: str, a_name: str, b_name: str) -> str:
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), a_name, b_name, lineterm=""))


def remove_directive_at(analysis: DocumentAnalysis, line: int) -> LoopRewrite | None:
    """Deleting the ``#pragma hexplore`` line `line` (1-based), where it is one."""
    lines = analysis.document.text.split("\n")
    if not 1 <= line <= len(lines) or not _PRAGMA.match(lines[line - 1]):
        return None
    path = analysis.document.path
    whole = SourceRange(path, line, 1, line + 1, 1) if line < len(lines) else _line(path, lines, line)
    return LoopRewrite(REMOVE_TITLE, _line(path, lines, line), True, "", (Edit(whole, ""),))


def _line(path: str, lines: list[str], line: int) -> SourceRange:
    return SourceRange(path, line, 1, line, len(lines[line - 1].encode()) + 1)


def _edits(text: str, header: SourceRange, current: Directive | None, pragma: str) -> tuple[Edit, ...]:
    """`pragma` in place of the nest's directive `current`, else on a line of its own above the
    loop, indented as its header's line."""
    if current is not None:
        return (Edit(current.range, pragma),)
    line = text.split("\n")[header.line - 1]
    indent = line[: len(line) - len(line.lstrip())]
    at = SourceRange(header.file, header.line, 1, header.line, 1)
    return (Edit(at, f"{indent}{pragma}\n"),)


def _directive(kind: str, text: str, header: SourceRange, block: tuple[int, ...]) -> Directive:
    """The directive the action would write, for the legality check."""
    from core_compiler.frontend.ir import Directive

    return Directive(kind, text, header, header, block)
