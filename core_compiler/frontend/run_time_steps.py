"""A ``for`` loop whose step is known only at run time, as a step-1 loop whose body runs where
the counter is on the step: ``i += s`` with `s` a size (``i -= s``: step -1, guard
``(lo - i) % s == 0``).

Before::                                    After::

    for (int i = lo; i < n; i += s)             if (s >= 1)
        a[i] = 2.0 * a[i];                          for (int i = lo; i < n; i++)
                                                        if ((i - lo) % s == 0)
                                                            a[i] = 2.0 * a[i];

The guard is pushed down to each assignment (through the loops and ``if``s of the body, which it
does not depend on), where SCoP detection if-converts it (`GuardedAssignment`): the loop visits
every `i` from `lo` to the bound, the statements only those the original visits. Exact for
``s >= 1``, which is assumed and said (`RunTimeStep`): with ``s <= 0`` the original loop does not
end or overflows `i` (undefined behaviour), and the rewritten one does nothing. Dependences are
those of every `i`, a superset of the original's: safe, maybe less parallel.

Rewritten: ``i += s`` or ``i -= s`` in a ``for`` loop of a C function (not a CUDA kernel, whose
grid-stride loops `core_compiler.cuda.grid` reads), with a step and a start of integer variables
and numbers the body does not assign, and a body of assignments, declarations, ``if``s and ``for``
loops. Otherwise the loop stays refused, with a remark that says what stopped it.
"""

from __future__ import annotations

from dataclasses import replace

from core_compiler.frontend import ir
from core_compiler.source import SourceRange


def run_time_steps(body: tuple[ir.Stmt, ...]) -> tuple[tuple[ir.Stmt, ...], list[ir.Note]]:
    """`body` with each loop stepping by a run-time size read as a guarded step-1 loop."""
    notes: list[ir.Note] = []
    return tuple(_statement(s, notes) for s in body), notes


def _statement(s: ir.Stmt, notes: list[ir.Note]) -> ir.Stmt:
    if isinstance(s, ir.OtherLoop):
        s = replace(s, body=tuple(_statement(t, notes) for t in s.body))
        return _rewritten(s, notes)
    if isinstance(s, ir.For | ir.OpaqueStmt):
        return replace(s, body=tuple(_statement(t, notes) for t in s.body))
    if isinstance(s, ir.If):
        return replace(s, then=tuple(_statement(t, notes) for t in s.then), other=tuple(_statement(t, notes) for t in s.other))
    return s


def _rewritten(loop: ir.OtherLoop, notes: list[ir.Note]) -> ir.Stmt:
    """`loop` as ``if (s >= 1) for (...; i++) guarded body``, else `loop` with a precise message."""
    h = loop.header
    if h is None or loop.kind != "for" or h.op not in ("+=", "-="):
        return loop
    why = _not_a_size(h, loop.body)
    guard = _guard(h, loop.header_range)
    body = _guarded(loop.body, guard) if why is None else None
    if why is None and body is None:
        why = "its body holds more than assignments, declarations, `if`s and `for` loops (a call, a `break`, a `while`)"
    if why is not None or body is None:
        return replace(loop, message=_refusal(h, why or ""))
    notes.append(ir.Note("RunTimeStep", _note(h), loop.header_range))
    step = 1 if h.op == "+=" else -1
    counted = ir.For(h.var, h.init, h.cond, step, body, loop.range, loop.header_range, h.declares_var)
    positive = ir.Binary(">=", h.value, ir.IntLit(1, loop.header_range), loop.header_range)
    return ir.If(positive, (counted,), (), loop.range)


def _not_a_size(h: ir.LoopHeader, body: tuple[ir.Stmt, ...]) -> str | None:
    """Why the step and start of `h` are not values fixed for the whole loop, or None."""
    names = [e for x in (h.value, h.init) for e in ir.walk_expr(x)]
    if any(not isinstance(e, ir.Var | ir.IntLit | ir.Binary | ir.Unary) for e in names):
        return "its step or start reads an array or calls a function"
    used = {e.name for e in names if isinstance(e, ir.Var)}
    if any(isinstance(e, ir.Var) and not (isinstance(e.type, ir.Scalar) and e.type.is_integer) for e in names):
        return "its step or start is not made of integer variables"
    changed = sorted(used & (_assigned(body) | {h.var}))
    if changed:
        return f"the loop changes `{changed[0]}`, which its step or start reads"
    return None


def _assigned(stmts: tuple[ir.Stmt, ...]) -> set[str]:
    """The variables `stmts` assign, declare, count with or pass the address of."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var):
            out.add(s.target.name)
        elif isinstance(s, ir.Decl):
            out.add(s.name)
        elif isinstance(s, ir.For):
            out.add(s.var)
        elif isinstance(s, ir.OtherLoop) and s.header is not None:
            out.add(s.header.var)
        out |= _assigned(ir.sub_statements(s))
    addresses = (e for e in ir.all_exprs(stmts) if isinstance(e, ir.Unary) and e.op == "&")
    return out | {e.operand.name for e in addresses if isinstance(e.operand, ir.Var)}


def _guard(h: ir.LoopHeader, r: SourceRange) -> ir.Expr:
    """``(i - start) % s == 0`` (``(start - i) % s`` counting down: never negative), every part at
    the loop header `r`."""
    var = ir.Var(h.var, r, ir.Scalar("int"))
    offset = ir.Binary("-", var, h.init, r) if h.op == "+=" else ir.Binary("-", h.init, var, r)
    return ir.Binary("==", ir.Binary("%", offset, h.value, r), ir.IntLit(0, r), r)


def _offset_text(h: ir.LoopHeader) -> str:
    return f"{h.var} - {h.init}" if h.op == "+=" else f"{h.init} - {h.var}"


def _guarded(stmts: tuple[ir.Stmt, ...], guard: ir.Expr) -> tuple[ir.Stmt, ...] | None:
    """`stmts` with each assignment under ``if (guard)``; None where a statement is not one the
    guard can be pushed into (a call, a jump, another loop)."""
    out: list[ir.Stmt] = []
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.append(ir.If(guard, (s,), (), s.range))
        elif isinstance(s, ir.Decl) and (s.init is None or not isinstance(s.type, ir.Scalar)):
            if s.init is not None:
                return None  # an array's initializer: not an assignment
            out.append(s)
        elif isinstance(s, ir.Decl):
            assert s.init is not None
            set_it = ir.Assign(ir.Var(s.name, s.range, s.type), "=", s.init, s.range)
            out += [replace(s, init=None), ir.If(guard, (set_it,), (), s.range)]
        elif isinstance(s, ir.For):
            body = _guarded(s.body, guard)
            if body is None:
                return None
            out.append(replace(s, body=body))
        elif isinstance(s, ir.If):
            then, other = _guarded(s.then, guard), _guarded(s.other, guard)
            if then is None or other is None:
                return None
            out.append(replace(s, then=then, other=other))
        else:
            return None
    return tuple(out)


def _note(h: ir.LoopHeader) -> str:
    step = "1" if h.op == "+=" else "-1"
    return (
        f"`{h.var} {h.op} {h.value}` steps by `{h.value}`, known only at run time: hexplore reads the loop as one "
        f"over every `{h.var}` (step {step}) whose statements run where `({_offset_text(h)}) % {h.value} == 0`, assuming "
        f"`{h.value} >= 1` (with `{h.value} <= 0` the loop would not end, or would overflow `{h.var}`, and "
        f"the generated code does nothing); it visits `{h.value}` times as many `{h.var}` as the original"
    )


def _refusal(h: ir.LoopHeader, why: str) -> str:
    return (
        f"the loop steps by `{h.value}` (`{h.var} {h.op} {h.value}`), known only at run time; hexplore reads such "
        f"a loop as a guarded loop of step 1 where the step is a size, but {why}"
    )
