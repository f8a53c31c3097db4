"""Assignments under a condition known only at run time, as unconditional assignments.

``if (a[i] > 0.5) c++;`` cannot restrict the iterations of a statement (its condition reads an
array), but its effect is that of ``c += a[i] > 0.5 ? 1 : 0``, and ``if (a[i] > m) m = a[i];``
that of ``m = a[i] > m ? a[i] : m``. `if_converted` rewrites a data-dependent ``if`` whose
branches only assign into such statements, which the polyhedral model takes as they are: every
iteration writes the target (its old value when the condition is false), the condition's reads
are reads of the statement. C evaluates one side of ``?:`` only, so nothing runs that the
original did not (no division by a zero the condition excluded).

A scalar declared in a branch (``double t = sqrt(a[i]);``) is declared before the assignments
and set like the others. The conditions are evaluated once per assignment, so a branch may not
assign what its condition reads before its last assignment (``if (a[i] > m) { m = a[i]; k = i; }``
is left alone: the second test would see the new ``m``).
"""

from __future__ import annotations

from dataclasses import replace

from core_compiler.frontend import ir

# compound assignments that do nothing with this operand: `c += cond ? e : 0` keeps the reduction
_IDENTITY = {"+=": 0, "-=": 0, "|=": 0, "^=": 0, "*=": 1}


def if_converted(s: ir.If) -> tuple[ir.Decl | ir.Assign, ...] | None:
    """`s` as declarations and unconditional assignments, or None when a branch holds more than
    assignments, scalar declarations and ``if``s of those, or the condition reads what an
    earlier assignment writes."""
    then = _branch(s.then)
    other = _branch(s.other)
    if then is None or other is None:
        return None
    reads = _names(s.cond)
    out: list[ir.Decl | ir.Assign] = []
    for a, negate in [(a, False) for a in then] + [(a, True) for a in other]:
        if isinstance(a, ir.Decl):
            out.append(a)
            continue
        if reads & {_target(b) for b in out if isinstance(b, ir.Assign)}:
            return None
        out.append(_guarded(a, s.cond, negate))
    return tuple(out)


def _branch(stmts: tuple[ir.Stmt, ...]) -> list[ir.Decl | ir.Assign] | None:
    out: list[ir.Decl | ir.Assign] = []
    for st in stmts:
        if isinstance(st, ir.Assign):
            out.append(st)
        elif isinstance(st, ir.Decl) and isinstance(st.type, ir.Scalar):
            out.append(replace(st, init=None))
            if st.init is not None:
                out.append(ir.Assign(ir.Var(st.name, st.range, st.type), "=", st.init, st.range))
        elif isinstance(st, ir.If) and (inner := if_converted(st)) is not None:
            out.extend(inner)
        else:
            return None
    return out


def _guarded(a: ir.Assign, cond: ir.Expr, negate: bool) -> ir.Assign:
    """``t op= e`` run only where `cond` holds (fails, with `negate`), as one assignment."""
    if a.op in _IDENTITY:
        keep: ir.Expr = ir.IntLit(_IDENTITY[a.op], a.range)
        value = a.value
        op = a.op
    else:
        keep = a.target
        value = a.value if a.op == "=" else ir.Binary(a.op.removesuffix("="), a.target, a.value, a.range)
        op = "="
    chosen = (keep, value) if negate else (value, keep)
    return ir.Assign(a.target, op, ir.Ternary(cond, *chosen, a.range), a.range)


def _target(a: ir.Assign) -> str:
    return a.target.base if isinstance(a.target, ir.Subscript) else a.target.name


def _names(e: ir.Expr) -> set[str]:
    return {n.base if isinstance(n, ir.Subscript) else n.name for n in ir.walk_expr(e) if isinstance(n, ir.Var | ir.Subscript)}
