"""C for a whole input file: each SCoP's source text replaced by hexplore's tiled loop nest.

The generated code is spliced into the original function, so the function keeps its name, its
signature (VLA parameters included) and everything outside its SCoPs; the result compiles and links
wherever the original did. Arrays keep the source's subscripts (``A[i][j]``), which is what makes
VLA parameters work, and scalars are the original C variables. Per SCoP the replacement is::

    /* hexplore: kernel_gemm#scop0, tiled 32, OpenMP */
    {
      #pragma omp parallel for
      for (int c0 = 0; c0 < ni; c0 += 32) {
        ...
      }
    }

- Scalars declared at the top of the SCoP (``double eps = 0.1;``) are declared before the block,
  without their initializer (the assignment is a statement of the schedule): code after the SCoP
  may still use them.
- Scalars and local arrays declared inside a loop are expanded over the loops around their
  declaration (see `statements.py`); their storage is a buffer allocated for the block and freed
  at its end. With OpenMP they need no ``private`` clause: each iteration of the parallel loop
  writes its own elements.
- Local arrays declared outside the loops stay the user's arrays (``double t[8];`` at the top of
  the SCoP is declared before the block, ``static`` kept; one declared before the SCoP is used as
  it is), with their source subscripts: code after the SCoP reads what the nest wrote, and a
  local array shadowing a global stays the one that code sees.
- isl renames some parameters (``p.n`` is ``p_n``, ``min`` is ``min_``); the block declares those
  names as copies of the originals.
- Loop counters are ``c0, c1, ...``, or ``hx_c0, ...`` when the file already uses such a name.
- The macros the loop bounds use (``floord``, ``hx_min``, ``hx_max``) are defined once, before the
  first function that changed, each guarded by ``#ifndef``.
- The analysis sees the source after preprocessing, so a bound written ``NI`` is generated as the
  value ``NI`` had then (``-D`` flags included): build the output with the same macros.

The output is deterministic: the same text, analysis and options give the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import islpy as isl

from core_compiler.analysis import FileAnalysis, ScopAnalysis
from core_compiler.codegen.ast_print import (
    C_PREAMBLE,
    CPrinter,
    MarkHook,
    UserHook,
    tagged_statements,
)
from core_compiler.codegen.statements import (
    StatementPrinter,
    local_buffers,
    outer_declarations,
)
from core_compiler.frontend import ir
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Scop
from core_compiler.source import SourceRange
from core_compiler.source_map import SourceMap, statement_ranges, untag
from core_compiler.transform.cpu_schedule import CpuOptions, ParallelMark, cpu_program, loop_of_mark
from core_compiler.transform.names import PLAIN, Names, free_prefix
from core_compiler.transform.schedule import BUDGET_EXCEEDED, ScheduleOptions, compute_schedule

_T: Any = isl.ast_node_type
OMP_PRAGMA = "#pragma omp parallel for"
INDENT = "  "


@dataclass(frozen=True)
class COptions:
    cpu: CpuOptions = field(default_factory=CpuOptions)
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    openmp: bool = False  # print `#pragma omp parallel for` over loops marked parallel


@dataclass(frozen=True)
class CScopCode:
    """The replacement text of one SCoP."""

    scop: str  # "kernel_gemm#scop0"
    function: str
    range: SourceRange  # what it replaces
    text: str  # unindented; the splice indents it like the SCoP's first line
    parallel_loops: int  # loops printed under `#pragma omp parallel for`
    uses_malloc: bool  # expanded local scalars: the file needs <stdlib.h>
    source_map: SourceMap = field(default_factory=SourceMap)  # lines of `text` -> statements


@dataclass(frozen=True)
class KeptScop:
    """A SCoP whose tiled C isl could not build within its operation budget: its loops stay as
    written (fuzzer seed 935: the AST of a 3-statement, 6-loop nest)."""

    scop: str
    function: str
    range: SourceRange
    budget: int  # isl's operations per step
    detail: str  # isl's message


@dataclass(frozen=True)
class CFile:
    source: str
    scops: tuple[CScopCode, ...]
    source_map: SourceMap = field(default_factory=SourceMap)  # lines of `source` -> statements
    kept: tuple[KeptScop, ...] = ()  # left as written: isl's budget ran out


def generate_c(fa: FileAnalysis, text: str, options: COptions | None = None) -> CFile:
    """`text` (the source `fa` was analysed from) with every SCoP of `fa` replaced, except those
    isl cannot generate within its budget (`CFile.kept`)."""
    options = options or COptions()
    here = Path(fa.path).resolve()
    taken = frozenset(re.findall(r"[A-Za-z_]\w*", text))
    found = [(f, sa) for f in fa.functions for sa in f.scops if Path(sa.scop.range.file).resolve() == here]
    codes = [_tagged_or_kept(sa, options, taken, text) for _, sa in found]
    kept = tuple(c for c in codes if isinstance(c, KeptScop))
    chosen = [(f, sa) for (f, sa), c in zip(found, codes, strict=True) if isinstance(c, CScopCode)]
    tagged = [c for c in codes if isinstance(c, CScopCode)]
    if not chosen:
        return CFile(text, (), kept=kept)
    first_line = min(f.function.range.line for f, _ in chosen)
    preamble = preamble_text(any(p.uses_malloc for p in tagged))
    # Spliced with their tags, untagged once whole: the map's lines are the file's.
    source, smap = untag(splice(text, tagged, first_line, preamble), statement_ranges(sa.scop for _, sa in chosen))
    scops = tuple(_untagged(p, sa.scop) for p, (_, sa) in zip(tagged, chosen, strict=True))
    return CFile(source, scops, smap, kept)


def _tagged_or_kept(
    sa: ScopAnalysis, options: COptions, taken: frozenset[str], text: str | None
) -> CScopCode | KeptScop:
    """`_tagged_code`, or the SCoP kept as written when isl's operation budget runs out in the
    scheduler, the tiling or the AST (any other error of isl's is a bug and raises)."""
    scop = sa.scop
    try:
        return _tagged_code(sa, options, taken, text)
    except isl.Error as e:
        if BUDGET_EXCEEDED not in str(e):
            raise
        scop.ctx.reset_operations()
        return KeptScop(scop.name, scop.function, scop.range, scop.ctx.get_max_operations(), str(e))


def scop_code(
    sa: ScopAnalysis, options: COptions, taken: frozenset[str] = frozenset(), text: str | None = None
) -> CScopCode:
    """The replacement of one SCoP; loop counters avoid the identifiers in `taken`; `text` is the
    source, where the SCoP's own declarations are read (``static``)."""
    return _untagged(_tagged_code(sa, options, taken, text), sa.scop)


def _untagged(code: CScopCode, scop: Scop) -> CScopCode:
    text, smap = untag(code.text, statement_ranges([scop]))
    return replace(code, text=text, source_map=smap)


def _tagged_code(sa: ScopAnalysis, options: COptions, taken: frozenset[str], text: str | None) -> CScopCode:
    """`scop_code` with the statements' lines tagged (`core_compiler/source_map.py`)."""
    scop = sa.scop
    program = cpu_program(scop, compute_schedule(scop, sa.deps, options.schedule), options.cpu, sa.deps)
    ast = _ast(scop, program.schedule, taken)
    printer = StatementPrinter(scop, "c", scalars_by_pointer=False)
    user = tagged_statements(printer.user, scop)
    pragmas: list[int] = []
    mark = _omp_mark(user, pragmas) if options.openmp else None
    body = CPrinter(user, mark).print(ast, 1)
    allocations, frees = local_buffers(printer)
    before, inside = _own_arrays(scop, text)
    lines = [_banner(scop, options), *outer_declarations(scop), *before, "{"]
    lines += [INDENT + ln for ln in _aliases(scop)]
    lines += [INDENT + ln for ln in (*inside, *allocations)]
    lines += body
    lines += [INDENT + ln for ln in frees]
    lines.append("}")
    text = "\n".join(lines)
    return CScopCode(scop.name, scop.function, scop.range, text, len(pragmas), bool(allocations))


def _ast(scop: Scop, schedule: isl.Schedule, taken: frozenset[str]) -> isl.AstNode:
    """The AST of the CPU schedule, its counters named ``c0, c1, ...`` unless the file uses one
    of those names (an array ``c1``, say): then ``hx_c0, ...``."""
    counters = Names({**PLAIN.prefixes, "c": free_prefix("c", taken)})
    build, keep = counters.ast_build(scop.context.params()).set_after_each_mark(loop_of_mark)
    scop.ctx.reset_operations()  # a step of its own: `cpu_program` spent its budget on its AST
    ast = build.node_from_schedule(schedule)
    del keep
    return ast


def _banner(scop: Scop, options: COptions) -> str:
    tile = options.cpu.tile_size
    parts = [scop.name, f"tiled {tile}" if tile > 1 else "not tiled"]
    if options.openmp:
        parts.append("OpenMP")
    return f"/* hexplore: {', '.join(parts)} */"


def _omp_mark(user: UserHook, pragmas: list[int]) -> MarkHook:
    """The mark hook: a `parallel` mark over a `for` becomes an OpenMP loop."""

    def mark(name: str, node: isl.AstNode, depth: int) -> list[str] | None:
        child = node.mark_get_node()
        parallel = ParallelMark.parse(name)
        if parallel is None or parallel.private or child.get_type() != _T.for_:
            return None
        pragmas.append(depth)
        inner = CPrinter(user, mark)
        return [INDENT * depth + OMP_PRAGMA, *inner.print(child, depth)]

    return mark


# ------------------------------------------------------------------------------- declarations


def _aliases(scop: Scop) -> list[str]:
    """The names isl and the statement printer use for parameters whose C name differs."""
    names: dict[str, str] = {}
    for p in scop.params:
        if isl_name(p) != p:
            names.setdefault(isl_name(p), p)
    for p in (*scop.params, *(n for n, _ in scop.region.readonly_scalars)):
        if "." in p:
            names.setdefault(p.replace(".", "_"), p)
    return [f"__typeof__({c}) {alias} = {c};" for alias, c in sorted(names.items())]


def _own_arrays(scop: Scop, text: str | None) -> tuple[list[str], list[str]]:
    """The declarations of the local arrays the SCoP declares outside its loops, which stay the
    user's arrays (`own_local_arrays`; also those it only declares, for code after it): those of
    its top level go before the block, in the scope they had, those inside an `if` at the block's
    start."""
    before: list[str] = []
    inside: list[str] = []

    def walk(stmts: tuple[ir.Stmt, ...], top: bool) -> None:
        for s in stmts:
            if isinstance(s, ir.Decl) and isinstance(s.type, ir.Array):
                (before if top else inside).append(array_declaration(s, text))
            if not isinstance(s, ir.For | ir.OtherLoop):  # those inside loops are buffers
                walk(ir.sub_statements(s), False)

    walk(scop.region.stmts, True)
    return before, inside


def array_declaration(decl: ir.Decl, text: str | None) -> str:
    """``double t[8][n];`` as `decl` declares it, ``static`` when the source says so."""
    assert isinstance(decl.type, ir.Array)
    dims = "".join(f"[{d}]" for d in decl.type.dims)
    static = text is not None and re.search(r"\bstatic\b", _specifiers(text, decl)) is not None
    return f"{'static ' if static else ''}{decl.type.elem} {decl.name}{dims};"


def _specifiers(text: str, decl: ir.Decl) -> str:
    """The source of `decl` before its name (``static int`` of ``static int t[4]``)."""
    data = text.encode("utf-8")
    r = decl.range
    if r.line < 1 or r.line > data.count(b"\n") + 1:
        return ""
    begin = _line_starts(data)[r.line - 1] + r.col - 1
    line = data[begin:].split(b"\n", 1)[0].decode("utf-8", errors="replace")
    found = re.search(rf"\b{re.escape(decl.name)}\b", line)
    return line[: found.start()] if found else ""


# ------------------------------------------------------------------------------------ splicing


def preamble_text(uses_malloc: bool) -> str:
    """`C_PREAMBLE` with each macro guarded, so a file that defines one keeps its own."""
    lines = ["/* hexplore: macros used by the generated loop bounds */"]
    if uses_malloc:
        lines.append("#include <stdlib.h>")
    for line in C_PREAMBLE.splitlines():
        match = re.match(r"#define (\w+)", line)
        if match:
            lines += [f"#ifndef {match.group(1)}", line, "#endif"]
    return "\n".join(lines) + "\n\n"


class Spliced(Protocol):
    """Text that replaces a range of the source: a SCoP's code, or a call of its host function."""

    @property
    def range(self) -> SourceRange: ...

    @property
    def text(self) -> str: ...


def splice(text: str, pieces: Sequence[Spliced], preamble_line: int, preamble: str) -> str:
    """Replace each piece's range in `text` (clang columns count bytes) and add the preamble."""
    data = text.encode("utf-8")
    starts = _line_starts(data)
    edits = [(starts[preamble_line - 1], starts[preamble_line - 1], preamble.encode())]
    for p in pieces:
        r = p.range
        begin = starts[r.line - 1] + r.col - 1
        end = starts[r.end_line - 1] + r.end_col - 1
        if data[end : end + 1] == b";":  # clang's range of `for (...) x = y;` stops before `;`
            end += 1
        indent = _indent(data[starts[r.line - 1] : begin])
        edits.append((begin, end, p.text.replace("\n", "\n" + indent).encode()))
    out = data
    for begin, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:begin] + new + out[end:]
    return out.decode("utf-8")


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    starts += [m.end() for m in re.finditer(rb"\n", data)]
    return starts


def _indent(prefix: bytes) -> str:
    """The whitespace before the SCoP on its first line (all of it, when only whitespace)."""
    text = prefix.decode("utf-8", errors="replace")
    return text if not text.strip() else text[: len(text) - len(text.lstrip())]
