"""Calls of small pure helpers inlined, so that a loop nest calling one can still be modeled::

    static inline int idx(int i, int j, int n) { return i * n + j; }
    ...
    A[idx(i, j, n)] = 0;                ->      A[i * n + j] = 0;

A helper is inlined when its definition is in the translation unit, its body is exactly
``{ return <expr>; }`` or ``if (c) return a;`` statements (each maybe with ``else``) and a last
``return b;`` — read as ``c ? a : b``, which evaluates only the branch C's ``if`` runs —, it takes and
returns arithmetic values and computes only with its parameters; otherwise the call stays a call, which SCoP detection refuses. Arguments are converted
as C converts them (an explicit cast where the argument's type is not the parameter's, and where
the returned expression's is not the function's), and every node of the inlined expression gets
the call's range: remarks point at the call site.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.frontend.clang_types import ctype, is_arithmetic
from core_compiler.frontend.opaque_calls import no_inline
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind

# How deep helpers calling helpers are inlined; a recursive helper stops here and stays a call.
_INLINE_DEPTH = 4
# Inlining copies an argument once per use of its parameter: nested calls (`max3(max3(...), ...)`)
# grow geometrically, so a call whose inlined expression would be larger than this stays a call.
_INLINE_NODES = 1000


class Inliner:
    """Inlines the calls of one function's lowering; `lower` lowers a helper's returned expression
    (and the calls in it, through this inliner again, up to `_INLINE_DEPTH` deep)."""

    def __init__(self, lower: Callable[[ci.Cursor], ir.Expr]) -> None:
        self._lower = lower
        self._depth = 0

    def __call__(
        self, cur: ci.Cursor, arg_curs: list[ci.Cursor], args: tuple[ir.Expr, ...], rng: SourceRange
    ) -> ir.Expr | None:
        """The call `cur` at `rng` (arguments `arg_curs`, lowered `args`) as the helper's returned
        expression with the arguments in place of the parameters; None when it stays a call."""
        found = _inlinable(cur)
        if found is None or self._depth >= _INLINE_DEPTH or not all(map(_is_pure, args)):
            return None
        defn, params, cases = found
        if len(params) != len(args):
            return None
        self._depth += 1
        try:
            body = self._chain(cases, defn.result_type, rng)
        finally:
            self._depth -= 1
        names = {p.spelling for p in params}
        if not _is_pure(body) or not _reads_only(body, names):
            return None
        subst = {
            p.spelling: _converted(arg, _unwrap(a).type, p.type, arg.range)
            for p, a, arg in zip(params, arg_curs, args, strict=True)
        }
        out = _at_call(body, subst, rng)
        return out if sum(1 for _ in ir.walk_expr(out)) <= _INLINE_NODES else None

    def _chain(self, cases: list[_Case], result: ci.Type, rng: SourceRange) -> ir.Expr:
        """The returned values of `cases` as one expression of the function's type `result`:
        ``if (c) return a; return b;`` is ``c ? a : b``."""
        cond, value = cases[0]
        out = _converted(self._lower(value), _unwrap(value).type, result, rng)
        if cond is None:
            return out
        return ir.Ternary(self._lower(cond), out, self._chain(cases[1:], result, rng), rng)


_Case = tuple["ci.Cursor | None", "ci.Cursor"]  # `if (cond) return value;`; no condition: the last `return`


def returned_expression(defn: ci.Cursor) -> ci.Cursor | None:
    """The expression of a function definition whose body is exactly ``{ return <expr>; }``."""
    cases = returned_cases(defn)
    return cases[0][1] if cases is not None and len(cases) == 1 else None


def returned_cases(defn: ci.Cursor) -> list[_Case] | None:
    """The conditions and returned expressions of a definition whose body is ``if (c) return a;``
    statements (each maybe with ``else return b;``) and a last ``return e;``, in order: ``[(c,
    a), …, (None, e)]``; None for any other body."""
    body = [c for c in defn.get_children() if c.kind == K.COMPOUND_STMT]
    return _cases(list(body[0].get_children())) if len(body) == 1 else None


def _cases(stmts: list[ci.Cursor]) -> list[_Case] | None:
    if not stmts:
        return None
    first = _single(stmts[0])
    if first.kind == K.RETURN_STMT:
        value = list(first.get_children())
        return [(None, value[0])] if len(value) == 1 and len(stmts) == 1 else None
    if first.kind != K.IF_STMT:
        return None
    parts = list(first.get_children())  # condition, then, else
    then = _cases([parts[1]]) if len(parts) >= 2 else None
    if then is None or len(then) != 1 or parts[0].kind == K.DECL_STMT:
        return None
    rest = _cases([parts[2], *stmts[1:]]) if len(parts) == 3 else _cases(stmts[1:])
    return None if rest is None else [(parts[0], then[0][1]), *rest]


def _single(cur: ci.Cursor) -> ci.Cursor:
    """`{ s }` as `s`."""
    while cur.kind == K.COMPOUND_STMT:
        inner = list(cur.get_children())
        if len(inner) != 1:
            return cur
        cur = inner[0]
    return cur


def _inlinable(call: ci.Cursor) -> tuple[ci.Cursor, list[ci.Cursor], list[_Case]] | None:
    """The callee's definition, parameters and returned expressions with their conditions, when
    the definition is in the translation unit, is ``if … return`` and ``return`` statements and
    takes and returns arithmetic values only."""
    ref = call.referenced
    defn = ref.get_definition() if ref is not None and ref.kind == K.FUNCTION_DECL else None
    if defn is None or defn.type.kind != T.FUNCTIONPROTO or defn.type.is_function_variadic() or no_inline(defn):
        return None
    cases = returned_cases(defn)
    params = [c for c in defn.get_children() if c.kind == K.PARM_DECL]
    scalar = all(is_arithmetic(p.type) for p in params) and is_arithmetic(defn.result_type)
    return (defn, params, cases) if cases is not None and scalar else None


def _converted(e: ir.Expr, have: ci.Type, want: ci.Type, rng: SourceRange) -> ir.Expr:
    """`e` (of C type `have`) converted to `want` as C converts an argument to its parameter's
    type and a returned value to the function's: an explicit cast where the types differ."""
    target = ctype(want, [])
    return e if ctype(have, []) == target else ir.Cast(target, e, rng)


def _is_pure(e: ir.Expr) -> bool:
    """No side effect and nothing the IR cannot see: inlining may drop or repeat an argument."""
    return not any(
        isinstance(x, ir.OpaqueExpr) or (isinstance(x, ir.Call) and not ir.is_pure_math(x))
        for x in ir.walk_expr(e)
    )


def _reads_only(e: ir.Expr, params: set[str]) -> bool:
    """Whether `e` reads nothing but `params`: a helper reading globals or memory is not inlined."""
    return not any(
        isinstance(x, ir.Subscript) or (isinstance(x, ir.Var) and x.name not in params)
        for x in ir.walk_expr(e)
    )


def _at_call(e: ir.Expr, args: dict[str, ir.Expr], rng: SourceRange) -> ir.Expr:
    """A helper's returned expression `e` at a call: parameters replaced by `args`, every other node
    given the call's range `rng`."""
    if isinstance(e, ir.Var) and e.name in args:
        return args[e.name]
    e = ir.with_sub_expressions(e, tuple(_at_call(x, args, rng) for x in ir.sub_expressions(e)))
    return replace(e, range=rng, base_range=rng) if isinstance(e, ir.Subscript) else replace(e, range=rng)
