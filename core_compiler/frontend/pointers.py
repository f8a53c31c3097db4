"""Local pointers into an array, read as subscripts of that array.

C written by hand walks rows through a local pointer::

    for (int i = 0; i < n; i++) {
        double *row = A + i * m;        /* or &A[i][0], or A[i] of a 2-D array */
        for (int j = 0; j < m; j++)
            row[j] += v[j];             /* is A[i * m + j] */
    }

When such a pointer is set once, from a named array (or another such pointer) plus an integer
offset, and the values it was computed from do not change while it is in scope, every ``row[e]``
and ``*row`` is the array's element at the offset plus ``e``: the front end lowers it as that
subscript and drops the declaration, so the nest is modeled like ``A[i * m + j]`` would be.
A pointer that is bumped (``row += m``), assigned again, passed on, or computed from something
that changes stays a local pointer, which SCoP detection reports as possible aliasing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.frontend.clang_parse import binary_operator, unary_operator
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind
_WRAPPERS = {K.UNEXPOSED_EXPR, K.PAREN_EXPR}
_ASSIGNING_UNARY = {"++", "--", "post++", "post--", "&"}


@dataclass(frozen=True)
class Alias:
    """``p`` set to the address of ``base[indices]``: ``p[e]`` is ``base[indices[:-1]][indices[-1] + e]``."""

    base: str
    indices: tuple[ir.Expr, ...]

    def element(self, index: ir.Expr, rng: SourceRange, base_range: SourceRange) -> ir.Subscript:
        last = self.indices[-1]
        at = index if isinstance(last, ir.IntLit) and last.value == 0 else ir.Binary("+", last, index, rng)
        return ir.Subscript(self.base, (*self.indices[:-1], at), rng, base_range)


def aliasable(body: ci.Cursor, rank: Callable[[ci.Cursor], int]) -> frozenset[int]:
    """The local pointers of a function `body` (by declaration cursor hash) that can be read as
    elements of an array: declared ``T *p = <address>`` with a scalar ``T``, never changed, used only
    as ``p[e]``, ``*p`` or in the address of another such pointer, and declared from values that do
    not change while ``p`` is in scope. `rank` counts the subscripts a variable takes."""
    scan = _Scan()
    scan.walk(body, None, 0, body.extent.end.offset, None)
    ok = {
        var.hash
        for var, init, end in scan.decls
        if address(init, {}, _placeholder, rank) is not None
        and all(scan.quiet(ref.referenced.hash, var.extent.end.offset, end) for ref in _refs(init))
    }
    while True:
        bad = {p for p in ok if any(into not in ok for into in scan.escaped.get(p, ()))}
        if not bad:
            return frozenset(ok)
        ok -= bad


@dataclass
class _Scan:
    """Where each variable of a function is changed (assigned, incremented or has its address taken,
    as source offsets) and where it is used other than as ``p[e]`` or ``*p`` (the pointer whose
    initializer the use is in, None elsewhere), by declaration cursor hash; and the declarations of
    initialized local pointers to scalars, with the offset where their block ends."""

    changed: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    escaped: dict[int, list[int | None]] = field(default_factory=lambda: defaultdict(list))
    decls: list[tuple[ci.Cursor, ci.Cursor, int]] = field(default_factory=list)

    def walk(self, cur: ci.Cursor, parent: ci.Cursor | None, position: int, end: int, into: int | None) -> None:
        if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None:
            role = _role(parent, position)
            if role == "changed":
                self.changed[cur.referenced.hash].append(cur.extent.start.offset)
            if role != "element":
                self.escaped[cur.referenced.hash].append(into)
        if cur.kind == K.COMPOUND_STMT:
            end = cur.extent.end.offset
        init = initializer(cur) if cur.kind == K.VAR_DECL else None
        if init is not None:
            self.decls.append((cur, init, end))
        through = cur.kind in _WRAPPERS
        for k, child in enumerate(cur.get_children()):
            inner = cur.hash if init is not None and child == init else into
            self.walk(child, parent if through else cur, position if through else k, end, inner)

    def quiet(self, key: int, start: int, end: int) -> bool:
        """Whether the variable is not changed between the source offsets `start` and `end`."""
        return not any(start <= o < end for o in self.changed.get(key, ()))


def initializer(var: ci.Cursor) -> ci.Cursor | None:
    """The initializer of a local pointer to scalars, if it has one."""
    typ = var.type.get_canonical()
    if typ.kind != T.POINTER or typ.get_pointee().get_canonical().kind in _NOT_SCALAR:
        return None
    children = [c for c in var.get_children() if c.kind.is_expression()]
    return children[-1] if children else None


_NOT_SCALAR = {T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY, T.RECORD, T.FUNCTIONPROTO, T.VOID}


def _placeholder(cur: ci.Cursor) -> ir.Expr:
    return _zero()


def _role(parent: ci.Cursor | None, position: int) -> str:
    """How a variable reference is used by its parent (wrappers skipped): ``changed`` when it is
    assigned or its address taken, ``element`` when it is the base of ``p[e]`` or ``*p``."""
    if parent is None:
        return "read"
    kind = parent.kind
    if kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and position == 0:
        op = binary_operator(parent)
        return "changed" if op == "=" or kind == K.COMPOUND_ASSIGNMENT_OPERATOR else "read"
    if kind == K.UNARY_OPERATOR:
        op = unary_operator(parent)
        return "changed" if op in _ASSIGNING_UNARY else "element" if op == "*" else "read"
    if kind == K.ARRAY_SUBSCRIPT_EXPR and position == 0:
        return "element"
    return "read"


def address(
    cur: ci.Cursor, aliases: dict[int, Alias], lower: Callable[[ci.Cursor], ir.Expr], rank: Callable[[ci.Cursor], int]
) -> Alias | None:
    """`cur` as an address inside a named array: ``A``, ``A + k``, ``k + A``, ``A - k``, ``&A[i][k]``,
    ``A[i]`` (a row of a 2-D array), or such an expression on another alias."""
    cur = _unwrap(cur)
    if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None:
        known = aliases.get(cur.referenced.hash)
        if known is not None:
            return known
        return Alias(cur.spelling, (_zero(),)) if rank(cur) == 1 else None
    if cur.kind == K.BINARY_OPERATOR and binary_operator(cur) in ("+", "-"):
        lhs, rhs = (_unwrap(c) for c in cur.get_children())
        op = binary_operator(cur)
        ptr, offset = (lhs, rhs) if _is_pointer(lhs) else (rhs, lhs) if op == "+" else (None, None)
        if ptr is None or offset is None or _is_pointer(offset):
            return None
        base = address(ptr, aliases, lower, rank)
        if base is None:
            return None
        k = lower(offset)
        last = base.indices[-1]
        step = ir.Binary(op, last, k, k.range) if op == "-" or not _is_zero(last) else k
        return Alias(base.base, (*base.indices[:-1], step))
    if cur.kind == K.UNARY_OPERATOR and unary_operator(cur) == "&":
        target = _unwrap(next(cur.get_children()))
        return _subscripted(target, aliases, lower, rank, element=True)
    if cur.kind == K.ARRAY_SUBSCRIPT_EXPR:
        return _subscripted(cur, aliases, lower, rank, element=False)
    return None


def _subscripted(
    cur: ci.Cursor,
    aliases: dict[int, Alias],
    lower: Callable[[ci.Cursor], ir.Expr],
    rank: Callable[[ci.Cursor], int],
    element: bool,
) -> Alias | None:
    """``A[i][k]`` under ``&`` (`element`), or ``A[i]`` naming one row of a 2-D array."""
    indices: list[ci.Cursor] = []
    node = cur
    while node.kind == K.ARRAY_SUBSCRIPT_EXPR:
        base, index = node.get_children()
        indices.append(index)
        node = _unwrap(base)
    indices.reverse()
    if node.kind != K.DECL_REF_EXPR or node.referenced is None:
        return None
    lowered = tuple(lower(i) for i in indices)
    known = aliases.get(node.referenced.hash)
    if known is not None:  # `&row[k]`
        if not element or len(lowered) != 1:
            return None
        return Alias(known.base, known.element(lowered[0], lowered[0].range, lowered[0].range).indices)
    full = rank(node)
    if element and len(lowered) == full:
        return Alias(node.spelling, lowered)
    if not element and len(lowered) == full - 1:
        return Alias(node.spelling, (*lowered, _zero()))
    return None


def _refs(cur: ci.Cursor) -> Iterator[ci.Cursor]:
    """The variable references in an expression."""
    if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None and cur.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
        yield cur
    for child in cur.get_children():
        yield from _refs(child)


def _is_pointer(cur: ci.Cursor) -> bool:
    return cur.type.get_canonical().kind in (T.POINTER, T.CONSTANTARRAY, T.VARIABLEARRAY, T.INCOMPLETEARRAY)


def _unwrap(cur: ci.Cursor) -> ci.Cursor:
    while cur.kind in _WRAPPERS:
        children = list(cur.get_children())
        if len(children) != 1:
            break
        cur = children[0]
    return cur


def _zero() -> ir.IntLit:
    return ir.IntLit(0, SourceRange("<builtin>", 0, 0, 0, 0))


def _is_zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.IntLit) and e.value == 0
