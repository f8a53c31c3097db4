"""Calls of small `void` helpers that update arrays, inlined as their statements, so that a loop
nest calling one can still be modeled::

    static void bump(double *a, int i) { a[i] += 1.0; }
    ...
    for (i = 0; i < n; i++)                 for (i = 0; i < n; i++)
        bump(x, i);                  ->          x[i] += 1.0;

A call statement is inlined when the helper's definition is in the translation unit, returns
`void` (no ``return`` in its body) and takes numbers and pointers to (or arrays of) numbers;
its body reads and writes nothing but its parameters and its own locals, assigns no parameter
and is made of statements the loop IR models (no call that stays a call). A pointer parameter
is bound to the caller's array: the argument must be an array or pointer named by the caller
(``x``) or a row of one (``A[i]`` for a ``double *`` parameter). A number parameter is replaced
by its argument, converted as C converts it, where the argument reads no array element; else it
is bound to a new local set from the argument before the body runs (C evaluates arguments once,
before the call). The helper's locals and loop counters get names of their own. Every node
gets the call's range (remarks point at the call), and each inlined call is said by an
``InlinedCall`` note. Any other call stays a call, which SCoP detection refuses (``ImpureCall``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, replace

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import unwrap
from core_compiler.frontend.clang_types import ctype, has_volatile_elements, is_arithmetic
from core_compiler.frontend.opaque_calls import no_inline
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind

_DEPTH = 4  # helpers calling helpers; a recursive helper stops here and stays a call
_STATEMENTS = 200  # a helper whose inlined body is larger than this stays a call
_ARRAY_KINDS = (T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY)


@dataclass(frozen=True)
class Inlined:
    """A call statement as the helper's statements, and the note that says so."""

    stmts: tuple[ir.Stmt, ...]
    note: ir.Note


class VoidInliner:
    """Inlines the `void` helper calls of one translation unit's lowering; `block` lowers a
    helper's body (and the calls in it, through this inliner again, up to `_DEPTH` deep) and
    `taken` tells the names the file already uses."""

    def __init__(self, block: Callable[[ci.Cursor], tuple[ir.Stmt, ...]], text: str) -> None:
        self._block = block
        self._taken = set(re.findall(r"[A-Za-z_]\w*", text))
        self._depth = 0

    def __call__(self, call: ci.Cursor, args: tuple[ir.Expr, ...], rng: SourceRange) -> Inlined | None:
        """The call statement `call` (lowered arguments `args`) at `rng` as the helper's body, or
        None when it stays a call."""
        found = _helper(call)
        if found is None or self._depth >= _DEPTH or len(found[1]) != len(args):
            return None
        defn, params, body_cur = found
        self._depth += 1
        try:
            body = self._block(body_cur)
        finally:
            self._depth -= 1
        rows = {p.spelling for p in params if p.type.get_canonical().kind in _ARRAY_KINDS}
        if not _inlinable(body, {p.spelling for p in params}, rows):
            return None
        bound = self._bind(defn.spelling, params, list(call.get_arguments()), args, rng)
        if bound is None:
            return None
        before, subst = bound
        names = {n: self._fresh(f"{defn.spelling}_{n}") for n in _declared(body)}
        stmts = ir.map_stmts(body, lambda e: _substituted(e, subst, names), names)
        out = _at_call(before + stmts, rng)
        if _count(out) > _STATEMENTS:
            return None
        return Inlined(out, _note(defn.spelling, params, args, rng))

    def _bind(
        self, helper: str, params: list[ci.Cursor], arg_curs: list[ci.Cursor], args: tuple[ir.Expr, ...],
        rng: SourceRange,
    ) -> tuple[tuple[ir.Stmt, ...], dict[str, _Bound]] | None:  # fmt: skip
        """The declarations that bind number arguments that read memory, and what each parameter
        becomes; None when an argument cannot be bound."""
        before: list[ir.Stmt] = []
        subst: dict[str, _Bound] = {}
        for p, a, arg in zip(params, arg_curs, args, strict=True):
            if p.type.get_canonical().kind in _ARRAY_KINDS:
                row = _array_argument(p.type, a, arg)
                if row is None:
                    return None
                subst[p.spelling] = row
                continue
            value = _converted(arg, unwrap(a).type, p.type, rng)
            if not _is_pure(value):
                return None
            if any(isinstance(x, ir.Subscript) for x in ir.walk_expr(value)):
                name = self._fresh(f"{helper}_{p.spelling}")
                typ = ctype(p.type, [])
                before.append(ir.Decl(name, typ, value, rng))
                value = ir.Var(name, rng, typ)
            subst[p.spelling] = value
        return tuple(before), subst

    def _fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self._taken:
            name, k = f"{base}{k}", k + 1
        self._taken.add(name)
        return name


_Bound = ir.Expr | tuple[str, tuple[ir.Expr, ...]]  # a number's value, or an array and a row's indices


def _helper(call: ci.Cursor) -> tuple[ci.Cursor, list[ci.Cursor], ci.Cursor] | None:
    """The callee's definition, parameters and body, when it is a `void` function defined in the
    translation unit that takes numbers and pointers to numbers."""
    ref = call.referenced
    defn = ref.get_definition() if ref is not None and ref.kind == K.FUNCTION_DECL else None
    if defn is None or defn.type.kind != T.FUNCTIONPROTO or defn.type.is_function_variadic() or no_inline(defn):
        return None
    if defn.result_type.get_canonical().kind != T.VOID:
        return None
    if any(c.kind == K.CUDAGLOBAL_ATTR for c in defn.get_children()):
        return None  # a `__global__` kernel is launched over a grid, not called
    params = [c for c in defn.get_children() if c.kind == K.PARM_DECL]
    body = [c for c in defn.get_children() if c.kind == K.COMPOUND_STMT]
    if len(body) != 1 or not all(_number_or_row(p.type) and not has_volatile_elements(p.type) for p in params):
        return None
    if any(c.kind == K.VAR_DECL and c.storage_class != ci.StorageClass.NONE for c in body[0].walk_preorder()):
        return None  # a `static` local keeps its value from call to call: no copy of the body does
    return defn, params, body[0]


def _number_or_row(typ: ci.Type) -> bool:
    """A number, or a pointer to (a one-dimensional array of) numbers."""
    canon = typ.get_canonical()
    if canon.kind in _ARRAY_KINDS:
        elem = canon.get_pointee() if canon.kind == T.POINTER else canon.element_type
        return is_arithmetic(elem)
    return is_arithmetic(typ)


def _array_argument(param: ci.Type, arg_cur: ci.Cursor, arg: ir.Expr) -> _Bound | None:
    """The caller's array (and the indices of a row) a pointer parameter is bound to: ``x`` of
    the same element type, or ``A[i]`` a row of it; None for anything else (``x + 1``, ``&x``)."""
    canon = param.get_canonical()
    want = canon.get_pointee() if canon.kind == T.POINTER else canon.element_type
    have = unwrap(arg_cur).type.get_canonical()
    if have.kind not in _ARRAY_KINDS:
        return None
    elem = have.get_pointee() if have.kind == T.POINTER else have.element_type
    if not is_arithmetic(elem) or ctype(elem, []) != ctype(want, []):
        return None  # another element type, or a row of rows (a two-dimensional parameter)
    if isinstance(arg, ir.Var):
        return (arg.name, ())
    if isinstance(arg, ir.Subscript) and not any(
        isinstance(x, ir.Subscript | ir.Call | ir.OpaqueExpr) for i in arg.indices for x in ir.walk_expr(i)
    ):
        return (arg.base, arg.indices)  # `A[i]`; not `A[idx[i]]`: the body may change `idx` before a use
    return None


def _inlinable(body: tuple[ir.Stmt, ...], params: set[str], rows: set[str]) -> bool:
    """A body of modeled statements that uses only `params` and its own number locals, assigns
    no parameter, uses the pointer parameters `rows` only with subscripts, and does not return
    (a `return` would end the helper, not the caller's loop)."""
    locals_ = set(_declared(body))
    if locals_ & params:
        return False
    for s in _walk(body):
        if isinstance(s, ir.OpaqueStmt | ir.OtherLoop | ir.ExprStmt):
            return False
        if isinstance(s, ir.Jump) and s.kind not in ("break", "continue"):
            return False
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var) and s.target.name in params:
            return False
        if isinstance(s, ir.For) and not s.declares_var and s.var not in locals_:
            return False
        if isinstance(s, ir.Decl) and not isinstance(s.type, ir.Scalar):
            return False  # a local array or pointer: its sizes would need the parameters too
    exprs = ir.all_exprs(body)
    if not all(_is_pure(e) for e in exprs) or any(isinstance(e, ir.Var) and e.name in rows for e in exprs):
        return False
    used = {e.name for e in exprs if isinstance(e, ir.Var)} | {e.base for e in exprs if isinstance(e, ir.Subscript)}
    return used <= params | locals_


def _declared(body: tuple[ir.Stmt, ...]) -> list[str]:
    """The names the body declares: its locals and loop counters."""
    out: list[str] = []
    for s in _walk(body):
        name = s.name if isinstance(s, ir.Decl) else s.var if isinstance(s, ir.For) else None
        if name is not None and name not in out:
            out.append(name)
    return out


def _walk(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in stmts:
        yield s
        yield from _walk(ir.sub_statements(s))


def _is_pure(e: ir.Expr) -> bool:
    return not any(
        isinstance(x, ir.OpaqueExpr) or (isinstance(x, ir.Call) and not ir.is_pure_math(x)) for x in ir.walk_expr(e)
    )


def _converted(e: ir.Expr, have: ci.Type, want: ci.Type, rng: SourceRange) -> ir.Expr:
    """`e` converted to the parameter's type as C converts an argument: a cast where they differ."""
    target = ctype(want, [])
    return e if ctype(have, []) == target else ir.Cast(target, e, rng)


def _substituted(e: ir.Expr, subst: dict[str, _Bound], names: dict[str, str]) -> ir.Expr:
    """`e` of the helper's body at the call: parameters replaced, locals renamed."""

    def one(x: ir.Expr) -> ir.Expr:
        if isinstance(x, ir.Var):
            bound = subst.get(x.name)
            if isinstance(bound, tuple):
                raise AssertionError("a pointer parameter used as a value")  # `_inlinable` excludes it
            if bound is not None:
                return bound
            return replace(x, name=names.get(x.name, x.name))
        if isinstance(x, ir.Subscript):
            row = subst.get(x.base)
            if isinstance(row, tuple):
                return replace(x, base=row[0], indices=row[1] + x.indices)
            return replace(x, base=names.get(x.base, x.base))
        return x

    return ir.map_expr(e, one)


def _at_call(stmts: tuple[ir.Stmt, ...], rng: SourceRange) -> tuple[ir.Stmt, ...]:
    """`stmts` with every range, of statements and of expressions, the call's."""
    return tuple(_node_at(s, rng) for s in stmts)


def _node_at(node, rng: SourceRange):  # type: ignore[no-untyped-def]
    changes: dict[str, object] = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, SourceRange):
            changes[f.name] = rng
        elif isinstance(value, tuple) and value and not isinstance(value[0], str | int):
            changes[f.name] = tuple(_node_at(v, rng) if _is_node(v) else v for v in value)
        elif _is_node(value):
            changes[f.name] = _node_at(value, rng)
    return replace(node, **changes)


def _is_node(value: object) -> bool:
    return isinstance(value, ir.Stmt | ir.Expr)


def _count(stmts: tuple[ir.Stmt, ...]) -> int:
    return sum(1 for _ in _walk(stmts))


def _note(helper: str, params: list[ci.Cursor], args: tuple[ir.Expr, ...], rng: SourceRange) -> ir.Note:
    bound = ", ".join(f"`{p.spelling}` = `{a}`" for p, a in zip(params, args, strict=True))
    message = (
        f"the call to `{helper}` is read as the helper's body with its parameters bound to the "
        f"arguments ({bound}): its loops and assignments are modeled like the caller's"
    )
    return ir.Note("InlinedCall", message, rng)
