"""Local scalars that every iteration of a loop sets before it reads them: one per iteration.

    double temp2;                          /* declared before the loops, used nowhere else */
    for (i = 0; i < m; i++)
      for (j = 0; j < n; j++) {
        temp2 = 0;                         /* the first thing iteration (i, j) does with it */
        for (k = 0; k < i; k++) temp2 += B[k][j] * A[i][k];
        C[i][j] = beta * C[i][j] + alpha * temp2;
      }

Each iteration of `j` reads only the `temp2` it wrote itself, and nothing after the loops reads it:
the one variable is only a way of writing one value per iteration. Modeled as one variable it puts
anti and output dependences between all iterations (no loop runs in parallel, and the GPU code of
symm and deriche ran on one thread); modeled as if it were declared inside `j` — as a scalar declared
there already is, ``temp2[i][j]`` — those dependences are gone. PPCG gets the same by relaxing them
(live-range reordering); on the GPU, register promotion keeps each thread's element in a register.

`private_scalars` finds, for the statements of one region, the loops that make a scalar private in
this sense. A scalar qualifies when it is a local variable of the function (not a parameter, a
global, or `static`), its address is never taken, nothing outside the region mentions it, and every
mention of it in the region lies in the body of a loop whose first statement that mentions it is a
plain assignment ``t = <expression without t>`` at the top of that body (so it runs in every
iteration, before any read). All such loops of one scalar must be nested equally deep.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core_compiler.frontend import ir


def private_scalars(function: ir.Function, region: tuple[ir.Stmt, ...]) -> dict[int, tuple[str, ...]]:
    """``id(loop)`` -> the scalars private to each iteration of that loop (sorted), for the loops
    of `region` (statements of `function`) that privatize some."""
    out: dict[int, list[str]] = {}
    for name in sorted(_candidates(function, region)):
        loops = _private_loops(region, name, 0)
        if loops is None or not loops or len({depth for _, depth in loops}) != 1:
            continue
        for loop, _ in loops:
            out.setdefault(id(loop), []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def _candidates(function: ir.Function, region: tuple[ir.Stmt, ...]) -> set[str]:
    """Local scalars written in `region`, declared and mentioned outside it only by a declaration."""
    inside = {id(s) for s in _all(region)}
    declared = {s.name for s in _all(function.body) if isinstance(s, ir.Decl) and _bare_scalar(s)}
    written = {s.target.name for s in _all(region) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Var)}
    names = (declared & written) - {p.name for p in function.inputs}
    for s in _all(function.body):
        if id(s) not in inside:
            if isinstance(s, ir.OpaqueStmt | ir.OtherLoop) and not function.text:
                return set()  # what it mentions cannot be read
            names -= _mentioned(s, include_decl_name=False) | _unlowered_words(function, s)
    return {n for n in names if not _escapes(function.text, n)}


def _bare_scalar(s: ir.Stmt) -> bool:
    """``double t;``: a scalar declared without a value (the region's own top may declare it)."""
    return isinstance(s, ir.Decl) and isinstance(s.type, ir.Scalar) and s.init is None


def _unlowered_words(function: ir.Function, s: ir.Stmt) -> set[str]:
    """The words on the source lines of what the front end did not lower (an opaque statement, a
    `while` loop's header), which may mention anything."""
    if not isinstance(s, ir.OpaqueStmt | ir.OtherLoop):
        return set()
    rng = s.range if isinstance(s, ir.OpaqueStmt) else s.header_range
    lines = function.text.splitlines()[rng.line - function.range.line : rng.end_line - function.range.line + 1]
    return set(re.findall(r"[A-Za-z_]\w*", "\n".join(lines) or function.text))  # lines unknown: all of it


def _escapes(text: str, name: str) -> bool:
    """`&name` anywhere, or a `static` declaration of it: its value may live on after the region."""
    word = re.escape(name)
    return re.search(rf"&\s*{word}\b", text) is not None or re.search(rf"\bstatic\b[^;{{}}]*\b{word}\b", text) is not None


def _private_loops(stmts: tuple[ir.Stmt, ...], name: str, depth: int) -> list[tuple[ir.For, int]] | None:
    """The outermost loops in `stmts` that privatize `name`, with their depth, or None when some
    mention of it lies outside all of them."""
    found: list[tuple[ir.For, int]] = []
    for s in stmts:
        if name not in _mentioned(s) or (_bare_scalar(s) and depth == 0):
            continue
        if isinstance(s, ir.For) and name not in _own_mentions(s) and _set_first(s.body, name):
            found.append((s, depth))
            continue
        if name in _own_mentions(s) or isinstance(s, ir.OpaqueStmt):
            return None
        inner = _private_loops(ir.sub_statements(s), name, depth + isinstance(s, ir.For | ir.OtherLoop))
        if inner is None:
            return None
        found += inner
    return found


def _set_first(body: tuple[ir.Stmt, ...], name: str) -> bool:
    """The first statement of `body` that mentions `name` is ``name = e`` with `e` not reading it."""
    first = next((s for s in body if name in _mentioned(s)), None)
    return (
        isinstance(first, ir.Assign)
        and first.op == "="
        and isinstance(first.target, ir.Var)
        and first.target.name == name
        and name not in _names(first.value)
    )


def _mentioned(s: ir.Stmt, include_decl_name: bool = True) -> set[str]:
    """Every name `s` and the statements in it mention (an opaque expression: every word of it)."""
    out = _own_mentions(s, include_decl_name)
    for c in ir.sub_statements(s):
        out |= _mentioned(c, include_decl_name)
    return out


def _own_mentions(s: ir.Stmt, include_decl_name: bool = True) -> set[str]:
    out: set[str] = set()
    for e in _expressions(s):
        out |= _names(e)
    if isinstance(s, ir.For):
        out.add(s.var)
    if isinstance(s, ir.Decl) and include_decl_name:
        out.add(s.name)
    return out


def _names(e: ir.Expr) -> set[str]:
    out: set[str] = set()
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Var):
            out.add(x.name)
        elif isinstance(x, ir.OpaqueExpr):
            out |= set(re.findall(r"[A-Za-z_]\w*", x.text))
    return out


def _expressions(s: ir.Stmt) -> Iterator[ir.Expr]:
    if isinstance(s, ir.Assign):
        yield from (s.target, s.value)
    elif isinstance(s, ir.Decl):
        if s.init is not None:
            yield s.init
        if isinstance(s.type, ir.Array):
            yield from (d for d in s.type.dims if d is not None)
    elif isinstance(s, ir.For):
        yield from (s.init, s.cond)
    elif isinstance(s, ir.If):
        yield s.cond
    elif isinstance(s, ir.ExprStmt):
        yield s.expr
    elif isinstance(s, ir.Jump) and s.value is not None:
        yield s.value


def _all(stmts: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for s in stmts:
        yield s
        yield from _all(ir.sub_statements(s))
