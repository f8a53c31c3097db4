"""Calls hexplore does not look into: what their prototype says, for the model and the back ends.

A function that is neither known math nor inlined (its body is not in the file, it is marked
``__attribute__((noinline))``, or it does more than `inline.py` and `void_helpers.py` read) stays a
call. SCoP detection models such a call statement as an opaque statement (`scop/region.py`): it may
read and write every array passed to it, and reads the numbers passed to it::

    void log_event(double *a, int i);          // its body is elsewhere
    for (i = 0; i < n; i++) log_event(a, i);   // may read and write all of `a`, reads `i`

`signature` records the prototype: the C types (to call it from LLVM IR), which pointer parameters
point to `const` (``const double *t``: only read), and ``__attribute__((pure))``/``((const))``
(no effect but its value: it touches no global variable either).
"""

from __future__ import annotations

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_types import is_arithmetic

K, T = ci.CursorKind, ci.TypeKind
_POINTERS = (T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY)


def no_inline(defn: ci.Cursor) -> bool:
    """Whether the function `defn` is marked ``__attribute__((noinline))``: it stays a call."""
    return any(
        c.kind == K.UNEXPOSED_ATTR and any(t.spelling in ("noinline", "__noinline__") for t in c.get_tokens())
        for c in defn.get_children()
    )


def signature(call: ci.Cursor) -> ir.CallSignature | None:
    """The prototype of the function `call` calls, when it takes numbers and pointers to numbers
    and returns a number or nothing; None otherwise (a struct, a function pointer, no prototype, a
    CUDA `__device__` function: host code cannot call it, nor the CPU translation of a kernel)."""
    ref = call.referenced
    if ref is None or ref.kind != K.FUNCTION_DECL or ref.type.kind != T.FUNCTIONPROTO:
        return None
    if any(c.kind in (K.CUDADEVICE_ATTR, K.CUDAGLOBAL_ATTR) for c in ref.get_children()):
        return None
    result = ref.result_type.get_canonical()
    params = list(ref.type.argument_types())
    spelled = [_spelling(t) for t in params]
    if any(s is None for s in spelled) or (result.kind != T.VOID and not is_arithmetic(result)):
        return None
    pure = any(c.kind in (K.PURE_ATTR, K.CONST_ATTR) for c in ref.get_children())
    return ir.CallSignature(
        "void" if result.kind == T.VOID else _scalar(result),
        tuple(s for s in spelled if s is not None),
        tuple(_is_pointer(t) and _innermost(t).is_const_qualified() for t in params),
        pure,
        ref.type.is_function_variadic(),
    )


def _spelling(typ: ci.Type) -> str | None:
    """``double``, ``int``; a pointer (to rows) of numbers as ``double *``, ``void *``; None for the rest."""
    canon = typ.get_canonical()
    if _is_pointer(canon):
        inner = _innermost(canon)
        if inner.kind == T.VOID:
            return "void *"  # `memset`-like: it may touch all of the array passed, as any pointer
        return f"{_scalar(inner)} *" if is_arithmetic(inner) else None
    return _scalar(canon) if is_arithmetic(canon) else None


def _is_pointer(typ: ci.Type) -> bool:
    """A pointer, or an array parameter (``double p[][4]``, which C passes as a pointer)."""
    return typ.get_canonical().kind in _POINTERS


def _innermost(typ: ci.Type) -> ci.Type:
    """The element type under the pointers and arrays of `typ`."""
    typ = typ.get_canonical()
    while typ.kind in _POINTERS:
        typ = (typ.get_pointee() if typ.kind == T.POINTER else typ.element_type).get_canonical()
    return typ


def _scalar(typ: ci.Type) -> str:
    name = typ.get_canonical().spelling
    for q in ("const ", "volatile ", "restrict ", "__restrict "):
        name = name.replace(q, "")
    return name.strip()


def unknown(call: ci.Cursor) -> str:
    """Why `call` has no `signature`, for a C programmer (``takes a `FILE *` (parameter 1)``), or
    "" where it has one."""
    ref = call.referenced
    if ref is None or ref.kind != K.FUNCTION_DECL:
        return "is called through a pointer"
    if ref.type.kind != T.FUNCTIONPROTO:
        return f"is declared without a prototype (`{call.spelling}()`)"
    if any(c.kind in (K.CUDADEVICE_ATTR, K.CUDAGLOBAL_ATTR) for c in ref.get_children()):
        return "is a CUDA device function"
    result = ref.result_type.get_canonical()
    if result.kind != T.VOID and not is_arithmetic(result):
        return f"returns a `{ref.result_type.spelling}`"
    for k, t in enumerate(ref.type.argument_types(), start=1):
        if _spelling(t) is None:
            return f"takes a `{t.spelling}` (parameter {k})"
    return ""
