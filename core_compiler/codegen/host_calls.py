"""CUDA for a function that is more than one loop nest: the input file with each offloaded SCoP
replaced by a call of its own host function, as PPCG does.

A `void` function whose body is its one SCoP (every PolyBench kernel) is *taken whole*: its host
function is the function itself (``extern "C" void kernel_gemm(...)`` in ``<name>_host.cu``).
Any other function keeps its source; each SCoP offloaded gets a host function named for it
(``two_scop1``, taking the SCoP's sizes, read-only scalars and arrays as flat pointers) and
``<stem>_host.c`` is the input with the SCoP's text replaced by a call::

    void two(int n, double A[n][n], double B[n][n], double C[n][n])
    {
      two_scop0(n, (double *)A, (double *)B, (double *)C);  /* hexplore: two#scop0 on the GPU (two_two_host.cu) */
      report(C);
      two_scop1(n, (double *)A, (double *)B, (double *)C);  /* hexplore: two#scop1 on the GPU (two_two_1_host.cu) */
    }

with the host functions' headers included before the first function that changed, and the
definition of a function taken whole replaced by its header's ``#include``; SCoPs that stay on the
CPU stay as written. Compile ``<stem>_host.c`` with the C compiler in place of the input, the
``.cu`` files with nvcc, and link. The kernels of such a SCoP get symbols of their own
(`generate_cuda`'s `host_name`), so that the SCoPs of one file link together.

A host function hands back the arrays it writes, nothing else: a SCoP that sets a scalar, a loop
counter or a local array that code outside it reads (or that is declared in another file, or whose
sizes are not plain variables) stays on the CPU, with a `KeptOnCpuForCaller` remark on the code
that names it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from core_compiler.analysis import FunctionAnalysis, ScopAnalysis
from core_compiler.codegen.c import array_declaration, splice
from core_compiler.codegen.cuda import declared_name
from core_compiler.frontend import ir
from core_compiler.remarks import Remark, missed, passed
from core_compiler.source import SourceRange

HOST_FILE = "_host.c"  # `<stem>_host.c`: the input with offloaded SCoPs replaced by calls
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class HostCall:
    """What replaces `range` in ``<stem>_host.c``: a SCoP's call, or a whole function's
    ``#include``; `header` is the host function's header, included before the first change."""

    range: SourceRange
    text: str
    header: str
    function: ir.Function


def takes_whole(f: FunctionAnalysis) -> bool:
    """Whether `f`'s one SCoP is all it does: a `void` function whose body, besides the SCoP, is
    declarations without initializer and a final ``return;``."""
    if len(f.scops) != 1 or str(f.function.return_type) != "void":
        return False
    inside = set(map(id, f.scops[0].scop.region.stmts))
    body = f.function.body
    return all(id(s) in inside or _bare_declaration(s) or (s is body[-1] and _plain_return(s)) for s in body)


def _bare_declaration(s: ir.Stmt) -> bool:
    return isinstance(s, ir.Decl) and s.init is None


def _plain_return(s: ir.Stmt) -> bool:
    return isinstance(s, ir.Jump) and s.kind == "return" and s.value is None


def host_function_name(sa: ScopAnalysis, taken: frozenset[str]) -> str:
    """``two_scop1``; ``hx_two_scop1`` (and so on) where the file already uses the name."""
    name = f"{sa.scop.function}_scop{sa.scop.index}"
    while name in taken:
        name = f"hx_{name}"
    return name


# ------------------------------------------------------------------------------ what cannot be


def split_problem(f: FunctionAnalysis, sa: ScopAnalysis, path: str, text: str) -> Remark | None:
    """Why a call of the SCoP's host function cannot stand in for its text (the source `path`'s,
    `text`); None when it can."""
    scop = sa.scop
    if Path(scop.range.file).resolve() != Path(path).resolve():
        return _kept(sa, "it is in another file than the one compiled, whose text is rewritten", scop.range)
    odd = [n for n in (*scop.params, *(n for n, _ in scop.region.readonly_scalars)) if not _IDENTIFIER.fullmatch(n)]
    if odd:
        return _kept(sa, f"its host function would take `{odd[0]}`, which is no variable", scop.range)
    for name, rng in _read_outside(f, sa, text):
        why = f"`{name}` is set by the nest and named here, and a host function hands back only the arrays it writes"
        return _kept(sa, why, rng)
    return None


def _kept(sa: ScopAnalysis, why: str, rng: SourceRange) -> Remark:
    message = (
        f"the loop nest at line {sa.scop.range.line} stays on the CPU: `{sa.scop.function}` is more than "
        f"this nest, so the nest would be a host function of its own called from the C, but {why}"
    )
    return missed("codegen-cuda", "KeptOnCpuForCaller", message, rng, sa.scop.function, scop=sa.scop.name)


def _read_outside(f: FunctionAnalysis, sa: ScopAnalysis, text: str) -> Iterator[tuple[str, SourceRange]]:
    """The values the SCoP keeps on the device (scalars, local arrays, loop counters declared
    outside their loops) that code outside it names, with where. Counters are the SCoP's own
    until code that is no SCoP names them (a modeled nest sets a counter before reading it)."""
    scop = sa.scop
    device = {a.name for a in scop.arrays if a.kind != "array"}
    counters = {s.var for s in _statements(scop.region.stmts) if isinstance(s, ir.For) and not s.declares_var}
    own = set(map(id, scop.region.stmts))
    every = {id(s) for other in f.scops for s in other.scop.region.stmts}
    for name, rng in _names(f.function.body, own, text):
        if name in device:
            yield name, rng
    for name, rng in _names(f.function.body, every, text):
        if name in counters:
            yield name, rng


def _statements(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in stmts:
        yield s
        yield from _statements(ir.sub_statements(s))


def _names(stmts: tuple[ir.Stmt, ...], skip: set[int], text: str) -> Iterator[tuple[str, SourceRange]]:
    """The variables `stmts` name (a declaration only with an initializer), outside the
    statements in `skip`; in code the IR does not represent (``use(&s)``, a ``switch``), every
    identifier of its source text."""

    def visit(x: object) -> Iterator[tuple[str, SourceRange]]:
        if id(x) in skip:
            return
        if isinstance(x, ir.OpaqueExpr):
            yield from ((name, x.range) for name in _IDENTIFIER.findall(x.text))
        elif isinstance(x, ir.OpaqueStmt):
            yield from ((name, x.range) for name in _IDENTIFIER.findall(_source(text, x.range)))
        elif isinstance(x, ir.Var):
            yield x.name, x.range
        elif isinstance(x, ir.Subscript):
            yield x.base, x.base_range
        elif isinstance(x, ir.For):
            yield x.var, x.header_range
        elif isinstance(x, ir.Decl) and x.init is not None:
            yield x.name, x.range
        if isinstance(x, tuple):
            for y in x:
                yield from visit(y)
        elif dataclasses.is_dataclass(x) and not isinstance(x, SourceRange | type):
            for fld in dataclasses.fields(x):
                yield from visit(getattr(x, fld.name))

    yield from visit(stmts)


def _source(text: str, rng: SourceRange) -> str:
    """The text of `rng` (clang's columns count bytes)."""
    lines = text.encode("utf-8").split(b"\n")
    if not 1 <= rng.line <= rng.end_line <= len(lines):
        return ""
    part = lines[rng.line - 1 : rng.end_line]
    part[-1] = part[-1][: rng.end_col - 1]
    part[0] = part[0][rng.col - 1 :]
    return b"\n".join(part).decode("utf-8", errors="replace")


# ------------------------------------------------------------------------------------- the text


def scop_call(f: FunctionAnalysis, sa: ScopAnalysis, host_name: str, params: tuple[str, ...], name: str, text: str) -> HostCall:
    """The call that replaces the SCoP, after the declarations at its top (code after it may
    name them); `params` are the host function's parameter declarations."""
    scop = sa.scop
    arrays = {a.name: re.sub(r"\bconst\b\s*", "", a.elem_type) for a in scop.arrays if a.kind == "array"}
    args = [f"({arrays[n]} *){n}" if n in arrays else n for n in map(declared_name, params)]
    call = f"{host_name}({', '.join(args)});  /* hexplore: {scop.name} on the GPU ({name}_host.cu) */"
    return HostCall(scop.range, "\n".join([*_declarations(sa, text), call]), f"{name}_host.h", f.function)


def _declarations(sa: ScopAnalysis, text: str) -> list[str]:
    """The SCoP's top-level declarations (``int i, j, k;`` before PolyBench's ``#pragma scop``),
    without initializer: what the nest sets there stays on the device (`split_problem`)."""
    out = []
    for s in sa.scop.region.stmts:
        if isinstance(s, ir.Decl):
            out.append(array_declaration(s, text) if isinstance(s.type, ir.Array) else f"{s.type} {s.name};")
    return out


def scop_header(host_name: str, params: Sequence[str], name: str, scop: str) -> str:
    """``<name>_host.h``: the prototype of a SCoP's host function, for C and C++."""
    return "\n".join([
        f"/* The host function of {name}_host.cu ({scop}), called from the rewritten source. */",
        "#pragma once",
        "#ifdef __cplusplus",
        'extern "C"',
        "#endif",
        f"void {host_name}({', '.join(params) or 'void'});",
    ]) + "\n"  # fmt: skip


def whole_function(f: FunctionAnalysis, name: str) -> HostCall:
    """A function taken whole: its definition is ``<name>_host.cu``'s, its prototype the header's."""
    fn = f.function
    text = f'#include "{name}_host.h"  /* hexplore: `{fn.name}` runs on the GPU ({name}_host.cu) */'
    return HostCall(fn.range, text, "", fn)


def host_calls_file(text: str, calls: Sequence[HostCall]) -> str:
    """`text` with each call spliced in and the SCoPs' headers included before the first function
    that changed."""
    first = min(c.function.range.line for c in calls)
    headers = [f'#include "{c.header}"' for c in calls if c.header]  # a whole function's is in its place
    preamble = "\n".join(["/* hexplore: the host functions of the loop nests that run on the GPU */", *headers]) + "\n\n"
    return splice(text, list(calls), first, preamble)


def called(sa: ScopAnalysis, host_name: str, name: str, stem: str) -> Remark:
    """The remark on a SCoP replaced by a call of its host function."""
    message = (
        f"`{sa.scop.function}` is more than this loop nest: the nest is the host function `{host_name}` "
        f"({name}_host.cu), called here in {stem}{HOST_FILE}, the source with each offloaded nest replaced"
    )
    return passed("codegen-cuda", "HostFunctionCall", message, sa.scop.range, sa.scop.function, host_function=host_name)
