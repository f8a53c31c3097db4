"""File-scope variables and `const` tables read as inputs of the function that uses them::

    const double w[3] = {0.25, 0.5, 0.25};
    int n; double a[100];
    void smooth(double *b) {
        for (int i = 1; i < n - 1; i++)
            b[i] = w[0] * a[i - 1] + w[1] * a[i] + w[2] * a[i + 1];
    }

is lowered with ``Function.globals`` ``w`` (`constant`, values ``(0.25, 0.5, 0.25)``), ``a`` and
``n``, in the order the lowering first meets them, and ``Function.inputs`` ``b, w, a, n``.

A global that holds numbers (a scalar, an array, a pointer to numbers) is an input of every call,
modeled like a parameter; a `const` one (file-scope, or a `const` array declared in the function)
carries its initial values, where they are constants. Writing a global scalar is a `GlobalScalar`
opaque statement: hexplore models the globals a function only reads, and global arrays.
"""

from __future__ import annotations

from dataclasses import replace

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import evaluate
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.frontend.clang_types import is_const, is_initializer

K = ci.CursorKind
T = ci.TypeKind


def global_input(decl: ci.Cursor, param: ir.Param) -> ir.Param | None:
    """The input the variable `decl` (lowered like a parameter: `param`) is, when it holds numbers:
    marked `constant`, with its values where it is a `const` table."""
    if not _numeric(param.type):
        return None
    constant = is_const(decl.type)
    init = next((c for c in decl.get_children() if is_initializer(decl, c)), None)
    values = _table(init, decl.type) if constant and init is not None else None
    return replace(param, constant=constant, values=values)


def is_global(ref: ci.Cursor) -> bool:
    """Whether the reference `ref` names a file-scope variable."""
    decl = ref.referenced
    return decl is not None and decl.kind == K.VAR_DECL and decl.semantic_parent.kind == K.TRANSLATION_UNIT


def is_global_scalar(cur: ci.Cursor) -> bool:
    cur = _unwrap(cur)
    return cur.kind == K.DECL_REF_EXPR and is_global(cur) and cur.type.kind not in (T.CONSTANTARRAY, T.INCOMPLETEARRAY, T.POINTER)


def global_write(target: ir.Expr) -> ir.OpaqueStmt:
    """The statement that assigns the global scalar `target`, which stays opaque."""
    message = (
        f"this writes the global variable `{target}`; hexplore models globals the function only "
        "reads, and global arrays (keep the value in a local variable, or return it)"
    )
    return ir.OpaqueStmt("GlobalScalar", message, target.range)


def _table(init: ci.Cursor, typ: ci.Type) -> tuple[int | float, ...] | None:
    """The values of array type `typ` that the initializer `init` gives, flat, in C's order (what a
    brace list leaves out is 0); None where an element is not a constant (designators, strings,
    braces left out)."""
    if typ.kind != T.CONSTANTARRAY:
        value = evaluate(init)
        return None if value is None else (value,)
    count, elem = typ.element_count, typ.element_type
    init = _unwrap(init)
    if init.kind != K.INIT_LIST_EXPR:
        return None
    out: list[int | float] = []
    items = list(init.get_children())
    if len(items) > count:
        return None
    for item in items:
        part = _table(item, elem)
        if part is None:
            return None
        out += part
    return (*out, *(0,) * ((count - len(items)) * _flat_count(elem)))


def _numeric(typ: ir.CType) -> bool:
    """A number, or an array of (pointer to) numbers: what a global may be to be an input."""
    while isinstance(typ, ir.Array | ir.Pointer):
        typ = typ.elem if isinstance(typ, ir.Array) else typ.pointee
    return isinstance(typ, ir.Scalar)


def _flat_count(typ: ci.Type) -> int:
    n = 1
    while typ.kind == T.CONSTANTARRAY:
        n, typ = n * typ.element_count, typ.element_type
    return n
