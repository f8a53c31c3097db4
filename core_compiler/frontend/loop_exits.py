"""``break`` and ``continue`` at the top of a ``for`` body as the loop's condition and guards.

A ``break`` that is the whole of an ``if`` at the start of a ``for`` body, whose condition once
true stays true as the counter moves on (``j > i`` counting up), is part of the loop's condition::

    for (j = 0; j < n; j++) {               for (j = 0; j < n && !(j > i); j++)
        if (j > i)                  ->          A[i][j] = 0.0;
            break;
        A[i][j] = 0.0;
    }

(SCoP detection then asks that condition to bound `j`, as any other: ``if (a[j] == key) break;``
is still refused, as a bound that reads data.) Noted ``BreakAsCondition``.

``continue`` as a guard: in the body of a ``for`` loop, an ``if`` whose branch ends the
iteration with ``continue`` guards the statements after it::

    for (i = 0; i < n; i++) {               for (i = 0; i < n; i++) {
        if (i % 2)                              if (i % 2) {
            continue;               ->          } else {
        a[i] = 0.0;                                 a[i] = 0.0;
    }                                           }
                                            }

A ``for`` loop's ``continue`` goes to the increment, so skipping the rest of the body is what it
does. Rewritten: an ``if`` without ``else``, directly in the body of a ``for`` (``for`` only: a
``while`` loop's ``continue`` would skip its counter's step), whose branch ends with ``continue``
and holds no other ``continue``, ``break``, ``return`` or ``goto`` of its own (those of loops
nested in it belong to them); a function with a ``goto`` label is left as it is. The condition
is evaluated once, as before. Each rewrite is said by a ``ContinueAsGuard`` note.
"""

from __future__ import annotations

from dataclasses import replace

from core_compiler.frontend import ir


def loop_exits(body: tuple[ir.Stmt, ...]) -> tuple[tuple[ir.Stmt, ...], list[ir.Note]]:
    """`body` with the leading ``if (c) break;`` of its ``for`` loops in their conditions and
    their ``if (c) continue;`` as guards, and a note for each."""
    if _has(body, ("label", "goto"), inner_loops=True):
        return body, []
    notes: list[ir.Note] = []
    return tuple(_statement(s, notes) for s in body), notes


def _statement(s: ir.Stmt, notes: list[ir.Note]) -> ir.Stmt:
    if isinstance(s, ir.For):
        s = _break_as_condition(s, notes)
        return replace(s, body=_guarded(tuple(_statement(t, notes) for t in s.body), notes))
    if isinstance(s, ir.If):
        return replace(s, then=tuple(_statement(t, notes) for t in s.then), other=tuple(_statement(t, notes) for t in s.other))
    if isinstance(s, ir.OtherLoop | ir.OpaqueStmt):
        return replace(s, body=tuple(_statement(t, notes) for t in s.body))
    return s


def _break_as_condition(s: ir.For, notes: list[ir.Note]) -> ir.For:
    """`s` with the ``if (c) break;`` that starts its body (if any) as ``cond && !c``."""
    first = s.body[0] if s.body else None
    if not (isinstance(first, ir.If) and not first.other and len(first.then) == 1):
        return s
    jump = first.then[0]
    if not (isinstance(jump, ir.Jump) and jump.kind == "break" and _stays_true(s, first.cond)):
        return s
    cond = ir.Binary("&&", s.cond, ir.Unary("!", first.cond, first.cond.range), first.range)
    message = (
        f"the loop `{s.var}` starts its body with `if ({_text(first.cond)}) break;`: hexplore reads "
        f"it as part of the loop condition, `{_text(s.cond)} && !({_text(first.cond)})`"
    )
    notes.append(ir.Note("BreakAsCondition", message, jump.range))
    return replace(s, cond=cond, body=s.body[1:])


def _stays_true(s: ir.For, c: ir.Expr) -> bool:
    """Whether `c`, once true, stays true as the counter moves on (`j > e` counting up, `j < e`
    counting down, `e` not reading `j`). The model takes a loop's iterations to be every value of
    the counter its condition admits, so `cond && !c` is exact only then: after
    `if (j == 3) break;` the C loop stops at 3 while `j < n && j != 3` admits 4, 5, ... (a csmith
    program printed another checksum; so did one breaking on a condition that does not read `j`,
    `for (g = -12; g <= 51; ++g) { if (l) break; }`, whose global counter's final value is read)."""
    if not (isinstance(c, ir.Binary) and c.op in ("<", "<=", ">", ">=")):
        return False
    rising = (">", ">=") if s.step > 0 else ("<", "<=")
    for counter, other, ops in ((c.lhs, c.rhs, rising), (c.rhs, c.lhs, tuple(_MIRROR[o] for o in rising))):
        if isinstance(counter, ir.Var) and counter.name == s.var and c.op in ops:
            return not any(isinstance(e, ir.Var) and e.name == s.var for e in ir.walk_expr(other))
    return False


_MIRROR = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


def _text(e: ir.Expr) -> str:
    t = str(e)
    return t[1:-1] if t.startswith("(") and t.endswith(")") else t


def _guarded(block: tuple[ir.Stmt, ...], notes: list[ir.Note]) -> tuple[ir.Stmt, ...]:
    """A ``for`` body (`block`) with its first ``if (c) { ...; continue; }`` guarding the rest."""
    for k, s in enumerate(block):
        if not (isinstance(s, ir.If) and not s.other and s.then):
            continue
        last = s.then[-1]
        if not (isinstance(last, ir.Jump) and last.kind == "continue"):
            continue
        if _has(s.then[:-1], ("continue", "break", "return", "goto", "label"), inner_loops=False):
            continue
        message = (
            "this `if` ends the iteration with `continue`: hexplore reads the statements after it "
            "in the loop body as its `else` branch"
        )
        notes.append(ir.Note("ContinueAsGuard", message, last.range))
        rest = _guarded(block[k + 1 :], notes)
        return (*block[:k], replace(s, then=s.then[:-1], other=rest))
    return block


def _has(stmts: tuple[ir.Stmt, ...], kinds: tuple[str, ...], inner_loops: bool) -> bool:
    """Whether `stmts` hold a jump of one of `kinds`; in loops nested in them too if `inner_loops`
    (``return`` and ``goto`` are looked for there always: they leave those loops as well)."""
    for s in stmts:
        if isinstance(s, ir.Jump) and s.kind in kinds:
            return True
        if isinstance(s, ir.For | ir.OtherLoop):
            inner = kinds if inner_loops else tuple(k for k in kinds if k in ("return", "goto", "label"))
            if _has(s.body, inner, inner_loops):
                return True
        elif _has(ir.sub_statements(s), kinds, inner_loops):
            return True
    return False
