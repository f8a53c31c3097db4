"""A counting ``while`` loop read as the ``for`` loop it means (`WhileAsFor`)::

    int i = 0;                              for (i = 0; i < n; i++) {
    while (i < n) {                 ->          a[i] = 2 * a[i];
        a[i] = 2 * a[i];                    }
        i++;
    }

The statement before the loop sets an integer counter, the condition reads it, the body ends by
stepping it by a constant and changes it nowhere else, and no ``continue`` skips the step. The
counter stays the function's variable (`declares_var=False`): read after the loop, it keeps SCoP
detection from taking the loop, as for a ``for`` loop counting with an outer variable.
"""

from __future__ import annotations

from core_compiler.frontend import ir
from core_compiler.source import SourceRange


def counter(before: ir.Stmt) -> tuple[str, ir.Expr] | None:
    """The integer variable the statement `before` a ``while`` loop sets and its value:
    ``int i = 0;`` or ``i = 0;``."""
    typ: ir.CType | None
    if isinstance(before, ir.Decl):
        name, typ, init = before.name, before.type, before.init
    elif isinstance(before, ir.Assign) and before.op == "=" and isinstance(before.target, ir.Var):
        name, typ, init = before.target.name, before.target.type, before.value
    else:
        return None
    if init is None or not isinstance(typ, ir.Scalar) or not typ.is_integer:
        return None
    return name, init


def while_as_for(
    before: ir.Stmt, cond: ir.Expr, body: tuple[ir.Stmt, ...], rng: SourceRange, header: SourceRange
) -> tuple[ir.For, ir.Note] | None:
    """The ``while (cond) body`` loop at `rng` (`header`: its keyword and condition) after the
    statement `before`, as a ``for`` loop spanning both, with the note that says so; None when it
    does not count (see the module's docstring)."""
    found = counter(before)
    if found is None:
        return None
    name, init = found
    step = _constant_step(body[-1], name) if body else None
    reads = any(_is_var(e, name) for e in ir.walk_expr(cond))
    if step is None or not reads or name in _changed(body[:-1]) or _continues(body):
        return None
    first = str(init)[1:-1] if isinstance(init, ir.Binary) else str(init)
    message = f"this `while` loop counts `{name}` from `{first}` by {step}: hexplore reads it as a `for` loop"
    whole = SourceRange(rng.file, before.range.line, before.range.col, rng.end_line, rng.end_col)
    loop = ir.For(name, init, cond, step, body[:-1], whole, header, declares_var=False)
    return loop, ir.Note("WhileAsFor", message, header)


def _constant_step(s: ir.Stmt, name: str) -> int | None:
    """The constant `s` adds to `name`: ``i++``, ``i += 2``, ``i -= 1``, ``i = i + 4``."""
    if not isinstance(s, ir.Assign) or not _is_var(s.target, name):
        return None
    value, op = s.value, s.op
    if op == "=" and isinstance(s.value, ir.Binary) and s.value.op in ("+", "-") and _is_var(s.value.lhs, name):
        value, op = s.value.rhs, s.value.op + "="
    if op in ("+=", "-=") and isinstance(value, ir.IntLit) and value.value != 0:
        return value.value if op == "+=" else -value.value
    return None


def _changed(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """The variables `stmts` assign or declare, loop counters included."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var):
            out.add(s.target.name)
        elif isinstance(s, ir.Decl):
            out.add(s.name)
        elif isinstance(s, ir.For):
            out.add(s.var)
        out |= _changed(ir.sub_statements(s))
    return out


def _continues(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether a ``continue`` of this loop (not of a loop inside it) is among `stmts`."""
    for s in stmts:
        if isinstance(s, ir.Jump) and s.kind == "continue":
            return True
        if isinstance(s, ir.If | ir.OpaqueStmt) and _continues(ir.sub_statements(s)):
            return True
    return False


def _is_var(e: ir.Expr, name: str) -> bool:
    return isinstance(e, ir.Var) and e.name == name
