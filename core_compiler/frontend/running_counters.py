"""Running counters: a scalar set just before a ``for`` loop and stepped by a constant once per
iteration is read, in the loop, as its value in closed form::

    int j = 0;                              int j = 0;
    for (i = 0; i < n; i++) {               for (i = 0; i < n; i++) {
        a[j] = i;                    ->          a[0 + 2 * (i - 0)] = i;
        j = j + 2;                               j = 0 + 2 * (i - 0 + 1);
    }                                        }

so that the subscripts are affine. The step stays an assignment, of the value it computes, so
`j` holds after the loop what it held before (the loop may run no iteration: then `j` keeps its
first value). Applies where

- ``j = e;`` (or ``int j = e;``) is the statement right before the loop, `j` a local integer
  scalar in no expression the IR does not model, and `e` an integer expression (as
  `induction.py` takes them) that reads neither `j` nor the loop's counter;
- the loop's body steps `j` exactly once, by a statement of the body itself (not under an ``if``
  or in an inner loop): ``j += c``, ``j -= c``, ``j++``, ``j--``, ``j = j + c`` or
  ``j = j - c`` with `c` an integer literal, and changes neither `j` elsewhere nor a variable of
  `e`; it has no ``break``, ``continue``, ``return`` or ``goto`` (that would skip the step).

The value at the top of iteration ``k = (i - start) / step`` is ``e + c * k``; after the step,
``e + c * (k + 1)``. Each counter is said by an ``InductionVariable`` note.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from core_compiler.frontend import ir
from core_compiler.frontend.induction import (
    _expressions,
    _in_statement,
    _names,
    _stops,
    integer_definition,
    integer_scalars,
)
from core_compiler.source import SourceRange


def counters(body: tuple[ir.Stmt, ...], params: tuple[ir.Param, ...]) -> tuple[tuple[ir.Stmt, ...], list[ir.Note]]:
    """The function `body` (of `params`) with its running counters in closed form, and a note
    for each."""
    if any(isinstance(s, ir.Jump) and s.kind in ("label", "goto") for s in _walk(body)):
        return body, []
    scalars, _ = integer_scalars(body, params)
    notes: list[ir.Note] = []
    everywhere = (*body, *(ir.Assign(ir.Var(p.name, _NOWHERE), "=", ir.Var(p.name, _NOWHERE), _NOWHERE) for p in params))
    return _Counters(dict(scalars), notes, everywhere).block(body), notes


_NOWHERE = SourceRange("<parameter>", 0, 0, 0, 0)


@dataclass
class _Counters:
    scalars: dict[str, ir.CType | None]
    notes: list[ir.Note]
    function: tuple[ir.Stmt, ...]  # the whole body (and the parameters): who else reads a counter

    def block(self, stmts: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out = [self.inner(s) for s in stmts]
        for k in range(1, len(out)):
            loop = out[k]
            found = integer_definition(out[k - 1], self.scalars)
            if found is None or not isinstance(loop, ir.For):
                continue
            name, start = found
            dead = _mentions(self.function, name) == _mentions((stmts[k - 1], stmts[k]), name)
            rewritten = _counted(loop, name, start, self.scalars[name], dead)
            if rewritten is not None:
                out[k], note = rewritten
                self.notes.append(note)
        return tuple(out)

    def inner(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.For):
            return replace(s, body=self.block(s.body))
        if isinstance(s, ir.If):
            return replace(s, then=self.block(s.then), other=self.block(s.other))
        if isinstance(s, ir.OtherLoop | ir.OpaqueStmt):
            return replace(s, body=self.block(s.body))
        return s


def _mentions(stmts: tuple[ir.Stmt, ...], name: str) -> int:
    """How many statements (nested ones too) read, set, declare or count with `name`."""
    return sum(
        1 for s in _walk(stmts)
        if (isinstance(s, ir.Decl) and s.name == name) or (isinstance(s, ir.For) and s.var == name)
        or any(isinstance(x, ir.Var) and x.name == name for e in _expressions(s) for x in ir.walk_expr(e))
    )  # fmt: skip


def _counted(
    loop: ir.For, name: str, start: ir.Expr, typ: ir.CType | None, dead: bool
) -> tuple[ir.For, ir.Note] | None:
    """`loop` with `name`, set to `start` before it, in closed form; None where it is no counter.
    Where nothing else in the function uses `name` (`dead`), the step is dropped: the loop's
    iterations then share nothing through it."""
    header = _names(loop.init) | _names(loop.cond)  # `i < n && j < m` reads the counter each time
    if loop.var == name or loop.var in _names(start) or name in header or any(isinstance(s, ir.Jump) for s in _walk(loop.body)):
        return None
    steps = [k for k, s in enumerate(loop.body) if _stops(s, {name})]
    fixed = _names(start) | _names(loop.init)  # read at each iteration now: they must not change
    if len(steps) != 1 or any(_stops(s, fixed) for s in loop.body):
        return None
    (at,) = steps
    by = _step(loop.body[at], name)
    if by is None:
        return None
    rng = loop.body[at].range
    before, after = _values(loop, start, by, typ, rng)
    body = tuple(
        _in_statement(s, name, before) if k < at else _in_statement(s, name, after) if k > at
        else ir.Assign(ir.Var(name, rng, typ), "=", after, rng)
        for k, s in enumerate(loop.body)
        if k != at or not dead
    )  # fmt: skip
    message = (
        f"`{name}` is set to `{start}` before loop `{loop.var}` and stepped by {by} once per "
        f"iteration: hexplore reads it in the loop as `{before}` before the step and `{after}` after"
        + (f"; nothing after the loop reads `{name}`, so the step itself is left out" if dead else "")
    )
    return replace(loop, body=body), ir.Note("InductionVariable", message, rng)


def _step(s: ir.Stmt, name: str) -> int | None:
    """`c` of ``name += c`` (``-= c``, ``= name + c``, ``= name - c``; `c` a literal), else None."""
    if not isinstance(s, ir.Assign) or not isinstance(s.target, ir.Var) or s.target.name != name:
        return None
    v = s.value
    if s.op in ("+=", "-=") and isinstance(v, ir.IntLit):
        return v.value if s.op == "+=" else -v.value
    if s.op != "=" or not isinstance(v, ir.Binary) or v.op not in ("+", "-") or not isinstance(v.rhs, ir.IntLit):
        return None
    return (v.rhs.value if v.op == "+" else -v.rhs.value) if isinstance(v.lhs, ir.Var) and v.lhs.name == name else None


def _values(loop: ir.For, start: ir.Expr, by: int, typ: ir.CType | None, rng: SourceRange) -> tuple[ir.Expr, ir.Expr]:
    """The counter's value in iteration ``k`` before its step and after: ``start + by * k``,
    ``start + by * (k + 1)``, with ``k = (i - init) / step`` (exact: `i` is ``init + step * k``)."""
    i = ir.Var(loop.var, rng)
    k: ir.Expr = ir.Binary("-", i, loop.init, rng) if loop.step > 0 else ir.Binary("-", loop.init, i, rng)
    if abs(loop.step) != 1:
        k = ir.Binary("/", k, ir.IntLit(abs(loop.step), rng), rng)
    one = ir.IntLit(1, rng)

    def value(iterations: ir.Expr) -> ir.Expr:
        out: ir.Expr = ir.Binary("+", start, ir.Binary("*", ir.IntLit(by, rng), iterations, rng), rng)
        return ir.Cast(typ, out, rng) if isinstance(typ, ir.Scalar) and typ.name != "int" else out

    return value(k), value(ir.Binary("+", k, one, rng))


def _walk(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in stmts:
        yield s
        yield from _walk(ir.sub_statements(s))

