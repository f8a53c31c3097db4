"""A chained assignment read as the assignments it makes, right to left, as C does::

    a[i] = b[i] = 0.0;          ->      b[i] = 0.0;
                                        a[i] = b[i];

``a[i]`` gets the value ``b[i]`` holds after its assignment. A chain stops at a target that is
not a variable or an array element (its statement stays opaque) and at a global scalar (whose
write is a `GlobalScalar` statement).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import binary_operator
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.frontend.global_inputs import is_global_scalar

if TYPE_CHECKING:
    from core_compiler.frontend.lower import Lowerer

K = ci.CursorKind


def assignment_chain(lower: Lowerer, cur: ci.Cursor) -> Iterator[ir.Stmt]:
    """The expression statement `cur` as statements: ``a1 = a2 = k;`` as ``a2 = k; a1 = a2;``, any
    other expression statement as `lower` lowers it."""
    node = _unwrap(cur)
    if node.kind == K.BINARY_OPERATOR and binary_operator(node) == "=":
        lhs, rhs = node.get_children()
        inner = _unwrap(rhs)
        target = lower.expr(lhs)
        chained = inner.kind == K.BINARY_OPERATOR and binary_operator(inner) == "="
        if chained and isinstance(target, ir.Var | ir.Subscript) and not is_global_scalar(lhs):
            yield from assignment_chain(lower, inner)
            yield ir.Assign(target, "=", lower.expr(next(inner.get_children())), lower.range(node))
            return
    yield lower.expr_stmt(cur)
