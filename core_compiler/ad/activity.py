"""Activity analysis: which variables carry derivatives from the `--wrt` inputs to the outputs.

A variable is *varied* when its value depends on a `wrt` input and *useful* when an output
(`of`) depends on its value; it is *active* when both. Dependence follows values only: a variable
that only appears in a subscript, a loop bound, a comparison or an integer computation passes no
derivative, and integer variables are never active. The analysis is per variable (array or
scalar) and flow-insensitive, so it is a safe over-approximation: an inactive variable provably
has a zero derivative.

Example: in ``C[i][j] += alpha * A[i][k] * B[k][j]`` with ``wrt = {A}`` and ``of = {C}``,
``A`` and ``C`` are active, ``B`` and ``alpha`` are not.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from core_compiler.frontend import ir


@dataclass(frozen=True)
class Activity:
    wrt: tuple[str, ...]
    of: tuple[str, ...]
    active: frozenset[str]
    varied: frozenset[str]
    useful: frozenset[str]
    floats: frozenset[str]  # every floating-point variable of the function

    def is_active(self, name: str) -> bool:
        return name in self.active


def assignments(stmts: tuple[ir.Stmt, ...]) -> Iterator[tuple[str, str, ir.Expr]]:
    """(target, op, value) for every assignment and initialized declaration, in source order."""
    for s in stmts:
        if isinstance(s, ir.Assign):
            target = s.target.name if isinstance(s.target, ir.Var) else s.target.base
            yield target, s.op, s.value
        elif isinstance(s, ir.Decl) and s.init is not None:
            yield s.name, "=", s.init
        yield from assignments(ir.sub_statements(s))


def value_names(e: ir.Expr) -> Iterator[str]:
    """The variables whose values flow into `e`'s value (not through subscripts or comparisons)."""
    if isinstance(e, ir.Var):
        yield e.name
    elif isinstance(e, ir.Subscript):
        yield e.base
    elif isinstance(e, ir.Ternary):
        yield from value_names(e.then)
        yield from value_names(e.other)
    elif isinstance(e, ir.Binary):
        if e.op in ("+", "-", "*", "/"):
            yield from value_names(e.lhs)
            yield from value_names(e.rhs)
    elif isinstance(e, ir.Cast):
        if isinstance(e.type, ir.Scalar) and not e.type.is_integer:
            yield from value_names(e.operand)
    elif isinstance(e, ir.Unary):
        if e.op in ("-", "+"):
            yield from value_names(e.operand)
    elif isinstance(e, ir.Call):
        for a in e.args:
            yield from value_names(a)


def float_names(fn: ir.Function) -> frozenset[str]:
    names = {p.name for p in fn.params if _is_float(p.type)}

    def decls(stmts: tuple[ir.Stmt, ...]) -> Iterator[str]:
        for s in stmts:
            if isinstance(s, ir.Decl) and _is_float(s.type):
                yield s.name
            yield from decls(ir.sub_statements(s))

    return frozenset(names | set(decls(fn.body)))


def _is_float(t: ir.CType) -> bool:
    while isinstance(t, ir.Pointer | ir.Array):
        t = t.pointee if isinstance(t, ir.Pointer) else t.elem
    return isinstance(t, ir.Scalar) and not t.is_integer


def analyze_activity(fn: ir.Function, wrt: tuple[str, ...], of: tuple[str, ...]) -> Activity:
    floats = float_names(fn)
    edges = [
        (target, {n for n in value_names(value) if n in floats} | ({target} if op != "=" else set()))
        for target, op, value in assignments(fn.body)
        if target in floats
    ]
    varied = set(w for w in wrt if w in floats)
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            if target not in varied and sources & varied:
                varied.add(target)
                changed = True
    useful = set(o for o in of if o in floats)
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            if target in useful and not sources <= useful:
                useful |= sources
                changed = True
    return Activity(
        wrt, of, frozenset(varied & useful), frozenset(varied), frozenset(useful), floats
    )


def written_params(fn: ir.Function) -> tuple[str, ...]:
    """Floating-point array parameters the function writes: the default outputs."""
    written = {t for t, _, _ in assignments(fn.body)}
    floats = float_names(fn)
    return tuple(
        p.name
        for p in fn.params
        if p.name in written and p.name in floats and not isinstance(p.type, ir.Scalar)
    )
