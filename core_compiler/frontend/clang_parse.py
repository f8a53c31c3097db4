"""Parsing with libclang: flags, builtin headers, CUDA, unsaved buffers, diagnostics.

The libclang wheel ships without clang's builtin headers (``stddef.h``, ``stdarg.h``, …), so
``#include <stdio.h>`` would fail. We add the system C compiler's builtin include directory when
there is one, and hexplore's small fallbacks after it. CUDA files are parsed host-side with a
bundled header that declares ``__global__``, ``threadIdx``, ``__syncthreads`` and friends.
"""

from __future__ import annotations

import ctypes
import functools

import clang.cindex as ci

from core_compiler.frontend.flags import ParseOptions, clang_args
from core_compiler.frontend.includes import screen
from core_compiler.remarks import Remark, missed
from core_compiler.source import SourceRange


@functools.cache
def _index() -> ci.Index:
    return ci.Index.create()


def parse(path: str, text: str, options: ParseOptions) -> tuple[ci.TranslationUnit, tuple[Remark, ...]]:
    """Parse `path` with the contents `text`, and the ``IncludeRefused`` remarks of the includes
    that are not files (`includes.py`: libclang never sees them). In the process that may crash:
    the front end's worker (`worker.py`)."""
    screened = screen(path, text, clang_args(path, options))
    unsaved = [(path, screened.text), *screened.unsaved]
    return _index().parse(path, args=list(screened.args), unsaved_files=unsaved), screened.remarks


_FUNCTION_KINDS = frozenset((ci.CursorKind.FUNCTION_DECL.value, ci.CursorKind.FUNCTION_TEMPLATE.value))
_LINKAGE_SPEC = ci.CursorKind.LINKAGE_SPEC.value


def definitions(tu: ci.TranslationUnit, path: str) -> list[ci.Cursor]:
    """The function definitions of the main file, in order, those in ``extern "C" { }`` too
    (hexplore's own CUDA host functions are ``extern "C"``).

    The translation unit's top level is mostly the headers' declarations (~1200 with <math.h>,
    <stdio.h> and <stdlib.h>), visited on every parse: the visitor reads the kind from the cursor
    itself and asks libclang nothing about the others (cindex's `get_children` makes three calls
    into libclang per cursor)."""
    out: list[ci.Cursor] = []

    def visit(cur: ci.Cursor, parent: ci.Cursor, data: object) -> int:
        kind = cur._kind_id
        if kind == _LINKAGE_SPEC:
            ci.conf.lib.clang_visitChildren(cur, callback, None)
        elif kind in _FUNCTION_KINDS and cur.is_definition():
            file = cur.location.file
            if file and file.name == path:
                cur._tu = tu  # the unit outlives the cursor (cindex's own rule)
                out.append(cur)
        return 1  # CXChildVisit_Continue

    callback = ci.callbacks["cursor_visit"](visit)
    ci.conf.lib.clang_visitChildren(tu.cursor, callback, None)
    return out


def source_range(extent: ci.SourceRange, fallback_file: str) -> SourceRange:
    start, end = extent.start, extent.end
    name = start.file.name if start.file else fallback_file
    return SourceRange(name, start.line, start.column, end.line, end.column)


def diagnostics_as_remarks(tu: ci.TranslationUnit, path: str) -> list[Remark]:
    """Errors (and fatal errors) become ``SyntaxError`` remarks with exact ranges."""
    out: list[Remark] = []
    for diag in tu.diagnostics:
        if diag.severity < ci.Diagnostic.Error:
            continue
        loc = diag.location
        file = loc.file.name if loc.file else path
        rng = SourceRange(file, loc.line, loc.column, loc.line, loc.column + 1)
        for r in diag.ranges:
            same_file = r.start.file and r.start.file.name == file
            if same_file and r.start.line == loc.line and r.end.line >= r.start.line > 0:
                rng = source_range(r, path)
                break
        out.append(missed("frontend", "SyntaxError", diag.spelling, rng))
    return out


# --- libclang C API entry points that the Python bindings of the wheel do not wrap -----------


@functools.cache
def _lib() -> ctypes.CDLL:
    lib = ci.conf.lib
    lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    for fn in ("clang_getBinaryOperatorKindSpelling", "clang_getUnaryOperatorKindSpelling"):
        getattr(lib, fn).argtypes = [ctypes.c_int]
        getattr(lib, fn).restype = ci._CXString
        getattr(lib, fn).errcheck = ci._CXString.from_result
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    return lib


@functools.cache
def _binary_spelling(kind: int) -> str:
    return str(_lib().clang_getBinaryOperatorKindSpelling(kind))


@functools.cache
def _unary_spelling(kind: int) -> str:
    return str(_lib().clang_getUnaryOperatorKindSpelling(kind))


def unwrap(cur: ci.Cursor) -> ci.Cursor:
    """`cur` without parentheses and implicit conversions. An unexposed expression that spans more
    than its one child (``va_arg(ap, int)`` around ``ap``) is not a conversion: it stays."""
    while cur.kind in (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR):
        children = list(cur.get_children())
        if len(children) != 1 or (cur.kind == ci.CursorKind.UNEXPOSED_EXPR and not _same_extent(cur, children[0])):
            break
        cur = children[0]
    return cur


def _same_extent(a: ci.Cursor, b: ci.Cursor) -> bool:
    return (a.extent.start.offset, a.extent.end.offset) == (b.extent.start.offset, b.extent.end.offset)


def binary_operator(cursor: ci.Cursor) -> str:
    """``+``, ``<=``, ``+=``, … for a BINARY_OPERATOR or COMPOUND_ASSIGNMENT_OPERATOR cursor."""
    return _binary_spelling(_lib().clang_getCursorBinaryOperatorKind(cursor))


def unary_operator(cursor: ci.Cursor) -> str:
    """``-``, ``!``, ``*``, ``&``, ``++`` (pre: ``++``, post: ``++`` with kind name) …"""
    kind = _lib().clang_getCursorUnaryOperatorKind(cursor)
    spelled = _unary_spelling(kind)
    # CXUnaryOperator_PostInc = 1, PostDec = 2, PreInc = 3, PreDec = 4
    return {1: "post++", 2: "post--", 3: "++", 4: "--"}.get(kind, spelled)


_EVAL_INT, _EVAL_FLOAT = 1, 2


def evaluate(cursor: ci.Cursor) -> int | float | None:
    """The compile-time value of a constant expression (macros, enums, sizeof), else None."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(cursor)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == _EVAL_INT:
            return int(lib.clang_EvalResult_getAsLongLong(res))
        if kind == _EVAL_FLOAT:
            return float(lib.clang_EvalResult_getAsDouble(res))
        return None
    finally:
        lib.clang_EvalResult_dispose(res)
