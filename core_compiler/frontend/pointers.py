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
from core_compiler.frontend.clang_parse import unwrap as _unwrap
from core_compiler.source import SourceRange

K = ci.CursorKind
T = ci.TypeKind
_WRAPPERS = {K.UNEXPOSED_EXPR, K.PAREN_EXPR}
_ASSIGNING_UNARY = {"++", "--", "post++", "post--", "&"}


@dataclass(frozen=True)
class Alias:
    """``p`` set to the address of ``base[indices]``: ``p[e]`` is ``base[indices[:-1]][indices[-1] + e]``.
    `base` is an array, so `indices` is never empty (a pointer to a scalar is no alias)."""

    base: str
    indices: tuple[ir.Expr, ...]

    def element(self, index: ir.Expr, rng: SourceRange, base_range: SourceRange) -> ir.Subscript:
        last = self.indices[-1]
        at = index if _is_zero(last) else ir.Binary("+", last, index, rng)
        return ir.Subscript(self.base, (*self.indices[:-1], at), rng, base_range)


def aliasable(body: ci.Cursor, rank: Callable[[ci.Cursor], int]) -> frozenset[int]:
    """The local pointers of a function `body` (by declaration cursor hash) that can be read as
    elements of an array: pointers to scalars set once, by their declaration ``T *p = <address>;``
    or by one statement ``p = <address>;``, never changed otherwise, used only as ``p[e]``, ``*p``
    or in the address of another such pointer, only after that setting and in its block, and set
    from values that do not change there. `rank` counts the subscripts a variable takes."""
    scan = _Scan()
    scan.walk(body, None, 0, body.extent.end.offset, None)
    settings: dict[int, list[_Setting]] = defaultdict(list)
    for st in scan.settings:
        settings[st.key].append(st)
    ok = {key for key, (st, *more) in settings.items() if not more and scan.fits(st, rank)}
    while True:
        bad = {p for p in ok if any(into not in ok for into in scan.escaped.get(p, ()))}
        if not bad:
            return frozenset(ok)
        ok -= bad


@dataclass(frozen=True)
class _Setting:
    """``T *p = value;`` or ``p = value;``: in effect from source offset `start` to `end` (its block's end)."""

    key: int  # the declaration's cursor hash
    value: ci.Cursor
    start: int
    end: int


@dataclass
class _Scan:
    """Where each variable of a function is changed (assigned, incremented or has its address taken,
    as source offsets) and where it is used other than as ``p[e]`` or ``*p`` (the pointer whose
    setting the use is in, None elsewhere), by declaration cursor hash; where pointers are used as
    ``p[e]``; and the settings of local pointers to scalars."""

    changed: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    escaped: dict[int, list[int | None]] = field(default_factory=lambda: defaultdict(list))
    elements: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    settings: list[_Setting] = field(default_factory=list)

    def walk(self, cur: ci.Cursor, parent: ci.Cursor | None, position: int, end: int, into: int | None) -> None:
        if cur.kind == K.DECL_REF_EXPR and cur.referenced is not None:
            self.reference(cur, _role(parent, position), into)
        if cur.kind == K.COMPOUND_STMT:
            end = cur.extent.end.offset
        value, target = self.setting(cur, parent, end)
        through = cur.kind in _WRAPPERS
        for k, child in enumerate(cur.get_children()):
            if target is not None and child == target:
                continue  # the `p` of `p = value;`: a setting, not a change
            inner = self.settings[-1].key if value is not None and child == value else into
            self.walk(child, parent if through else cur, position if through else k, end, inner)

    def reference(self, ref: ci.Cursor, role: str, into: int | None) -> None:
        key = ref.referenced.hash
        if role == "changed":
            self.changed[key].append(ref.extent.start.offset)
        if role == "element":
            self.elements[key].append(ref.extent.start.offset)
        else:
            self.escaped[key].append(into)

    def setting(self, cur: ci.Cursor, parent: ci.Cursor | None, end: int) -> tuple[ci.Cursor | None, ci.Cursor | None]:
        """The value and the assigned reference when `cur` sets a local pointer to scalars."""
        if cur.kind == K.VAR_DECL and (init := initializer(cur)) is not None:
            self.settings.append(_Setting(cur.hash, init, cur.extent.end.offset, end))
            return init, None
        statement = parent is not None and parent.kind == K.COMPOUND_STMT
        if not statement or cur.kind != K.BINARY_OPERATOR or binary_operator(cur) != "=":
            return None, None
        lhs, rhs = cur.get_children()
        target = _unwrap(lhs)
        var = target.referenced if target.kind == K.DECL_REF_EXPR else None
        if var is None or var.kind != K.VAR_DECL or not _points_to_scalars(var) or initializer(var) is not None:
            return None, None
        self.settings.append(_Setting(var.hash, rhs, cur.extent.end.offset, end))
        return rhs, lhs

    def fits(self, st: _Setting, rank: Callable[[ci.Cursor], int]) -> bool:
        """Whether the pointer `st` sets is an alias: an address, from values that do not change
        while it is in effect, and no element of it is used where it is not."""
        return (
            not self.changed.get(st.key)
            and address(st.value, {}, _placeholder, rank) is not None
            and all(self.quiet(ref.referenced.hash, st.start, st.end) for ref in _refs(st.value))
            and all(st.start <= o < st.end for o in self.elements.get(st.key, ()))
        )

    def quiet(self, key: int, start: int, end: int) -> bool:
        """Whether the variable is not changed between the source offsets `start` and `end`."""
        return not any(start <= o < end for o in self.changed.get(key, ()))


def pointer_assignment(cur: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor] | None:
    """The declaration and the value of ``p = value;`` for a variable `p`."""
    if cur.kind != K.BINARY_OPERATOR or binary_operator(cur) != "=":
        return None
    lhs, rhs = cur.get_children()
    target = _unwrap(lhs)
    var = target.referenced if target.kind == K.DECL_REF_EXPR else None
    return (var, rhs) if var is not None else None


def _points_to_scalars(var: ci.Cursor) -> bool:
    typ = var.type.get_canonical()
    return typ.kind == T.POINTER and typ.get_pointee().get_canonical().kind not in _NOT_SCALAR


def initializer(var: ci.Cursor) -> ci.Cursor | None:
    """The initializer of a local pointer to scalars, if it has one."""
    if not _points_to_scalars(var):
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
    if full == 0:
        return None  # `&x` of a scalar `x`: no array to index (`int *p = &g; *p = i;`)
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


def _zero() -> ir.IntLit:
    return ir.IntLit(0, SourceRange("<builtin>", 0, 0, 0, 0))


def _is_zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.IntLit) and e.value == 0
