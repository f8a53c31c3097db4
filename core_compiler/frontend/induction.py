"""Induction variables: a scalar set in a loop body to an affine-looking expression of integers
and used after it in the same iteration is read, at those uses, as the expression::

    for (i = 0; i < n - 1; i++) {           for (i = 0; i < n - 1; i++) {
        j = i + 1;                   ->          j = i + 1;
        a[i] = a[j];                             a[i] = a[i + 1];
    }                                        }

The assignment stays (the scalar may be read after the loop); only the uses change, so that the
subscripts are affine. A definition ``j = e;`` (or ``int j = e;``) in a block inside a ``for``
loop is substituted into the statements that follow it in the block when

- `j` is a local integer scalar (a parameter or a declaration of the function, not a global);
  neither it nor a variable of `e` has its address taken (appears in an expression the IR does
  not model);
- `e` is made of integer literals and integer variables with ``+ - * / %`` and casts to integer
  types (no array element, call or ``?:``: nothing that reads memory), and does not read `j` itself; where a variable's
  type is not `j`'s, `e` is converted to `j`'s type as the assignment converts it
  (``long k = i * m + j;`` reads ``a[k]`` as ``a[(long)(i * m + j)]``);
- neither `j` nor a variable of `e` is assigned (or declared, or counted by a loop) between the
  definition and the use: the substitution stops at the first statement that assigns one of
  them, at a statement the IR does not model, and the function has no ``goto`` label.

Each substituted definition is said by an ``InductionVariable`` note (an Analysis remark). SCoP
detection then judges the substituted subscripts and bounds like any others.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

from core_compiler.frontend import ir
from core_compiler.source import SourceRange


def substituted(
    body: tuple[ir.Stmt, ...], params: tuple[ir.Param, ...]
) -> tuple[tuple[ir.Stmt, ...], list[ir.Note]]:
    """`body` with the uses of induction variables substituted, and a note per definition."""
    if any(isinstance(s, ir.Jump) and s.kind in ("label", "goto") for s in _all_statements(body)):
        return body, []
    locals_, plain = integer_scalars(body, params)
    notes: list[ir.Note] = []
    return _Substitution(locals_, plain, notes).block(body, False), notes


def integer_scalars(
    body: tuple[ir.Stmt, ...], params: tuple[ir.Param, ...]
) -> tuple[dict[str, ir.CType | None], Callable[[str], bool]]:
    """The integer parameters and locals of a function (declared with one type) that appear in
    no expression the IR does not model, by type; and that test for any name."""
    scalars: dict[str, ir.CType | None] = {p.name: p.type for p in params if _integer(p.type)}
    for s in _all_statements(body):
        if isinstance(s, ir.Decl):
            if _integer(s.type) and scalars.get(s.name, s.type) == s.type:
                scalars[s.name] = s.type
            else:
                scalars[s.name] = None  # declared twice with other types, or not an integer
    opaque = " ".join(_opaque_texts(body))

    def plain(name: str) -> bool:  # in no expression the IR does not model (`&j`, `j++` in one)
        return not re.search(rf"\b{re.escape(name)}\b", opaque)

    return {n: t for n, t in scalars.items() if t is not None and plain(n)}, plain


class _Substitution:
    def __init__(
        self, scalars: dict[str, ir.CType | None], plain: Callable[[str], bool], notes: list[ir.Note]
    ) -> None:
        self.scalars = scalars
        self.plain = plain
        self.notes = notes

    def block(self, stmts: tuple[ir.Stmt, ...], in_loop: bool) -> tuple[ir.Stmt, ...]:
        out = list(stmts)
        reads: list[set[str] | None] = [None] * len(out)  # the names each statement reads, once needed
        if in_loop:
            for k, s in enumerate(out):
                found = self.definition(s)
                if found is None:
                    continue
                name, value = found
                stops = {name} | _names(value)
                used = False
                for t in range(k + 1, len(out)):
                    if _stops(out[t], stops):
                        break
                    known = reads[t]
                    read = known if known is not None else {x.name for x in ir.all_exprs((out[t],)) if isinstance(x, ir.Var)}
                    if name not in read:  # generated code: hundreds of statements, each reading a few names
                        reads[t] = read
                        continue
                    new = _in_statement(out[t], name, value)
                    used = used or new != out[t]
                    out[t] = new
                    reads[t] = (read - {name}) | _names(value)
                if used:
                    message = (
                        f"`{name}` is set to `{_text(value)}` here and not changed before its uses "
                        f"that follow in the same iteration: hexplore reads `{name}` there as "
                        f"`{_text(value)}`"
                    )
                    self.notes.append(ir.Note("InductionVariable", message, s.range))
        return tuple(self.inner(s, in_loop) for s in out)

    def inner(self, s: ir.Stmt, in_loop: bool) -> ir.Stmt:
        if isinstance(s, ir.For):
            return replace(s, body=self.block(s.body, True))
        if isinstance(s, ir.If):
            return replace(s, then=self.block(s.then, in_loop), other=self.block(s.other, in_loop))
        if isinstance(s, ir.OtherLoop | ir.OpaqueStmt):
            return replace(s, body=self.block(s.body, in_loop))
        return s

    def definition(self, s: ir.Stmt) -> tuple[str, ir.Expr] | None:
        """``j = e;`` or ``int j = e;`` that defines an induction variable, as (j, e)."""
        found = integer_definition(s, self.scalars)
        if found is None:
            return None
        name, value = found
        typ = self.scalars.get(name)  # not None: integer_definition checked it
        if typ is None or not all(map(self.plain, _names(value))):  # `int *p = &m; j = m + i; *p = 0; a[j]`
            return None
        if any(isinstance(x, ir.Var) and x.type != typ for x in ir.walk_expr(value)):
            value = ir.Cast(typ, value, value.range)  # `long k = i * m + j;`: converted as C does
        return name, value


def _integer(t: ir.CType | None) -> bool:
    return isinstance(t, ir.Scalar) and t.is_integer


def integer_definition(s: ir.Stmt, scalars: Mapping[str, ir.CType | None]) -> tuple[str, ir.Expr] | None:
    """``j = e;`` or ``int j = e;`` of a known scalar `j` by an integer `e` that does not read `j`,
    as (j, e)."""
    if isinstance(s, ir.Assign) and s.op == "=" and isinstance(s.target, ir.Var):
        name, value = s.target.name, s.value
    elif isinstance(s, ir.Decl) and s.init is not None:
        name, value = s.name, s.init
    else:
        return None
    if scalars.get(name) is None or name in _names(value) or not _integer_expression(value):
        return None
    return name, value


def _integer_expression(e: ir.Expr) -> bool:
    """Integer literals and integer variables with ``+ - * / %``, unary ``-``/``+`` and casts to
    integer types."""
    if isinstance(e, ir.IntLit):
        return True
    if isinstance(e, ir.Var):
        return _integer(e.type)
    if isinstance(e, ir.Binary) and e.op in ("+", "-", "*", "/", "%"):
        return _integer_expression(e.lhs) and _integer_expression(e.rhs)
    if isinstance(e, ir.Unary) and e.op in ("-", "+"):
        return _integer_expression(e.operand)
    if isinstance(e, ir.Cast):
        return _integer(e.type) and _integer_expression(e.operand)
    return False


def _names(e: ir.Expr) -> set[str]:
    return {x.name for x in ir.walk_expr(e) if isinstance(x, ir.Var)}


def _all_statements(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in stmts:
        yield s
        yield from _all_statements(ir.sub_statements(s))


def _expressions(s: ir.Stmt) -> Iterator[ir.Expr]:
    """The expressions of `s` itself (not of the statements nested in it)."""
    if isinstance(s, ir.Assign):
        yield s.target
        yield s.value
    elif isinstance(s, ir.Decl):
        if s.init is not None:
            yield s.init
        if isinstance(s.type, ir.Array):
            yield from (d for d in s.type.dims if d is not None)
    elif isinstance(s, ir.For):
        yield s.init
        yield s.cond
    elif isinstance(s, ir.If):
        yield s.cond
    elif isinstance(s, ir.ExprStmt):
        yield s.expr
    elif isinstance(s, ir.Jump) and s.value is not None:
        yield s.value


def _opaque_texts(stmts: tuple[ir.Stmt, ...]) -> Iterator[str]:
    for s in _all_statements(stmts):
        for e in _expressions(s):
            yield from (x.text for x in ir.walk_expr(e) if isinstance(x, ir.OpaqueExpr))


def _stops(s: ir.Stmt, names: set[str]) -> bool:
    """Whether `s` (or a statement in it) may change one of `names`, or is not modeled."""
    for t in _all_statements((s,)):
        if isinstance(t, ir.OpaqueStmt):
            return True
        if isinstance(t, ir.Assign) and isinstance(t.target, ir.Var) and t.target.name in names:
            return True
        if isinstance(t, ir.Decl) and t.name in names:
            return True
        if isinstance(t, ir.For) and t.var in names:
            return True
    return False


def _in_statement(s: ir.Stmt, name: str, value: ir.Expr) -> ir.Stmt:
    """`s` with every read of `name` replaced by `value` (`s` does not assign `name`)."""

    def e(x: ir.Expr) -> ir.Expr:
        return _in_expression(x, name, value)

    def b(stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        return tuple(_in_statement(t, name, value) for t in stmts)

    if isinstance(s, ir.Assign):
        target = s.target if isinstance(s.target, ir.Var) else e(s.target)
        assert isinstance(target, ir.Var | ir.Subscript)
        return replace(s, target=target, value=e(s.value))
    if isinstance(s, ir.Decl):
        return replace(s, init=e(s.init)) if s.init is not None else s
    if isinstance(s, ir.For):
        return replace(s, init=e(s.init), cond=e(s.cond), body=b(s.body))
    if isinstance(s, ir.If):
        return replace(s, cond=e(s.cond), then=b(s.then), other=b(s.other))
    if isinstance(s, ir.OtherLoop):
        return replace(s, body=b(s.body))
    if isinstance(s, ir.ExprStmt):
        return replace(s, expr=e(s.expr))
    if isinstance(s, ir.Jump) and s.value is not None:
        return replace(s, value=e(s.value))
    return s


def _in_expression(x: ir.Expr, name: str, value: ir.Expr) -> ir.Expr:
    if isinstance(x, ir.Var) and x.name == name:
        return _at(value, x.range)
    subs = ir.sub_expressions(x)
    if not subs:
        return x
    new = tuple(_in_expression(s, name, value) for s in subs)
    return x if new == subs else ir.with_sub_expressions(x, new)


def _at(e: ir.Expr, rng: SourceRange) -> ir.Expr:
    """`e` with every node at `rng`, the use's range: remarks point at the use."""
    e = ir.with_sub_expressions(e, tuple(_at(s, rng) for s in ir.sub_expressions(e)))
    return replace(e, base_range=rng, range=rng) if isinstance(e, ir.Subscript) else replace(e, range=rng)


def _text(e: ir.Expr) -> str:
    s = str(e)
    return s[1:-1] if s.startswith("(") and s.endswith(")") else s
