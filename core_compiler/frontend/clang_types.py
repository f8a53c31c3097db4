"""libclang types as the loop IR's (`ir.CType`), and the questions lowering asks of a type or a
declaration: is it arithmetic, an integer, `const`; is a child of a declaration its initializer."""

from __future__ import annotations

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.source import SourceRange

T = ci.TypeKind

_FLOAT_KINDS = {T.FLOAT, T.DOUBLE, T.LONGDOUBLE, T.HALF}
NO_RANGE = SourceRange("<builtin>", 0, 0, 0, 0)


def ctype(typ: ci.Type, sizes: list[ir.Expr]) -> ir.CType:
    """The IR type of `typ`; `sizes` are the size expressions written for its variable-length
    dimensions, outermost first (consumed: one per array dimension, constant ones skipped)."""
    kind = typ.kind
    if kind in (T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
        dims: list[ir.Expr | None] = []
        while typ.kind in (T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
            if typ.kind == T.INCOMPLETEARRAY:
                dims.append(None)
            elif typ.kind == T.CONSTANTARRAY:
                if sizes:
                    sizes.pop(0)
                dims.append(ir.IntLit(typ.element_count, NO_RANGE))
            else:
                dims.append(sizes.pop(0) if sizes else None)
            typ = typ.element_type
        return ir.Array(ctype(typ, sizes), tuple(dims))
    if kind == T.POINTER:
        return ir.Pointer(ctype(typ.get_pointee(), sizes))
    if kind in (T.ELABORATED, T.TYPEDEF, T.UNEXPOSED, T.AUTO):
        canon = typ.get_canonical()
        if canon.kind != kind:
            return ctype(canon, sizes)
    if is_arithmetic(typ):
        return ir.Scalar(_scalar_name(typ))
    return ir.OtherType(typ.spelling)


def is_arithmetic(typ: ci.Type) -> bool:
    canon = typ.get_canonical().kind
    return T.BOOL.value <= canon.value <= T.LONGDOUBLE.value or canon in _FLOAT_KINDS


def is_integer(typ: ci.Type) -> bool:
    canon = typ.get_canonical().kind
    return T.BOOL.value <= canon.value <= T.INT128.value


def is_const(typ: ci.Type) -> bool:
    """A `const` variable, or an array of `const` elements."""
    while typ.kind == T.CONSTANTARRAY:
        typ = typ.element_type
    return bool(typ.is_const_qualified())


def is_restrict(typ: ci.Type) -> bool:
    return typ.is_restrict_qualified() or "restrict" in typ.spelling


def has_volatile_elements(typ: ci.Type) -> bool:
    """``volatile double *a``, ``_Atomic int a[n]``: elements whose every access must happen as written."""
    while typ.kind in (T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY):
        typ = typ.get_pointee() if typ.kind == T.POINTER else typ.element_type
    return typ.is_volatile_qualified() or "_Atomic" in typ.spelling


def is_initializer(decl: ci.Cursor, child: ci.Cursor) -> bool:
    """Whether `child` of a VAR_DECL/PARM_DECL is its initializer rather than an array size."""
    if not child.kind.is_expression():
        return False
    eq = None
    for tok in decl.get_tokens():
        if tok.spelling == "=":
            eq = tok.extent.start.offset
            break
    return eq is not None and child.extent.start.offset > eq


def _scalar_name(typ: ci.Type) -> str:
    name = typ.get_canonical().spelling
    for q in ("const ", "volatile ", "restrict ", "__restrict "):
        name = name.replace(q, "")
    return name.strip()
