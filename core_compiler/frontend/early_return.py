"""An early return of a function body read as the condition of the rest (`NotNullAssumption`)::

    void f(int n, double *a) {              void f(int n, double *a) {
        if (a == NULL || n <= 0)                if (!(n <= 0)) {
            return;                     ->          for (int i = 0; i < n; i++)
        for (int i = 0; i < n; i++)                     a[i] = 0;
            a[i] = 0;                           }
    }                                       }

That is the shape SCoP detection models: the loops after the guard become a nest with the guard's
condition on their iterations. A bare ``return;`` ending the body (or ``if (c) return;`` with
nothing after it) returns where the body ends anyway: it is left out (CUDA kernels end so). A NULL check of a pointer (``a == NULL``, ``NULL == a``, ``a == 0``,
``!a``) ``||``-ed into the guard is taken as false, with a note: hexplore models the loops for
when the arrays exist.
"""

from __future__ import annotations

from dataclasses import replace

from core_compiler.frontend import ir
from core_compiler.source import SourceRange


def guards_as_conditions(body: tuple[ir.Stmt, ...]) -> tuple[tuple[ir.Stmt, ...], tuple[ir.Note, ...]]:
    """A function body with each ``if (c) return;`` followed by more statements made into
    ``if (!(c)) { rest }``, and the notes of the NULL checks taken out of the guards."""
    body = _without_final_return(body)
    for k, s in enumerate(body):
        if isinstance(s, ir.If) and not s.other and k + 1 < len(body) and _is_bare_return(s.then):
            rest, notes = guards_as_conditions(body[k + 1 :])
            cond, assumed = _without_null_checks(s.cond)
            notes = (*notes, *assumed)
            if cond is None:
                return (*body[:k], *rest), notes
            end = rest[-1].range
            rng = SourceRange(s.range.file, s.range.line, s.range.col, end.end_line, end.end_col)
            return (*body[:k], ir.If(ir.Unary("!", cond, cond.range), rest, (), rng)), notes
    return body, ()


def _without_final_return(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
    """`body` without the bare ``return;`` (or ``if (c) return;``, `c` a call-free condition) that
    ends it: control leaves the body there either way."""
    last = body[-1] if body else None
    if last is not None and _is_bare_return((last,)):
        return _without_final_return(body[:-1])
    if isinstance(last, ir.If) and not last.other and _is_bare_return(last.then) and not _calls(last.cond):
        return _without_final_return(body[:-1])
    return body


def _calls(e: ir.Expr) -> bool:
    return any(isinstance(x, ir.Call) for x in ir.walk_expr(e))


def _without_null_checks(cond: ir.Expr) -> tuple[ir.Expr | None, tuple[ir.Note, ...]]:
    """`cond` without its ``||``-ed NULL checks (None when nothing else is left), and a note for
    each check left out."""
    if isinstance(cond, ir.Binary) and cond.op == "||":
        (lhs, left), (rhs, right) = _without_null_checks(cond.lhs), _without_null_checks(cond.rhs)
        kept = rhs if lhs is None else lhs if rhs is None else replace(cond, lhs=lhs, rhs=rhs)
        return kept, (*left, *right)
    name = _null_checked(cond)
    if name is None:
        return cond, ()
    message = f"assuming `{name}` is not NULL: hexplore models the loops for when the arrays exist"
    return None, (ir.Note("NotNullAssumption", message, cond.range),)


def _null_checked(e: ir.Expr) -> str | None:
    """The pointer `e` checks for NULL: ``p == NULL``, ``NULL == p``, ``p == 0``, ``!p``."""
    if isinstance(e, ir.Unary) and e.op == "!":
        return _pointer_name(e.operand)
    if isinstance(e, ir.Binary) and e.op == "==":
        for p, z in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if _pointer_name(p) is not None and _is_null(z):
                return _pointer_name(p)
    return None


def _pointer_name(e: ir.Expr) -> str | None:
    return e.name if isinstance(e, ir.Var) and isinstance(e.type, ir.Pointer | ir.Array) else None


def _is_null(e: ir.Expr) -> bool:
    while isinstance(e, ir.Cast):
        e = e.operand
    return isinstance(e, ir.IntLit) and e.value == 0


def _is_bare_return(stmts: tuple[ir.Stmt, ...]) -> bool:
    return len(stmts) == 1 and isinstance(stmts[0], ir.Jump) and stmts[0].kind == "return" and stmts[0].value is None
