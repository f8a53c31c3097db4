"""C text for loop-IR expressions and a few statement shapes, with C's precedences.

Derivative code is new code, so it is printed from the IR rather than sliced from the source; the
only source text reused is a macro name that the front end expanded to an integer (``i < N``
prints as ``i < N``, not ``i < 100``), so that the derivative follows ``-DN=...`` like the primal.

Example: ``Binary("*", Var("a"), Binary("+", Var("b"), IntLit(1)))`` prints as ``a * (b + 1)``.
"""

from __future__ import annotations

import re

from core_compiler.frontend import ir
from core_compiler.source import SourceRange

NO_RANGE = SourceRange("<ad>", 0, 0, 0, 0)

_PREC = {
    "||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10,
    ">=": 10, "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13,
}  # fmt: skip
_TERNARY, _UNARY, _POSTFIX = 3, 14, 15
_IDENT = re.compile(r"[A-Za-z_]\w*")


class SourceText:
    """The primal file's text, to slice macro names and parameter declarations from."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self._offsets = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self._offsets.append(i + 1)

    def slice(self, rng: SourceRange) -> str:
        if rng.file != self.path or rng.line < 1 or rng.end_line > len(self._offsets):
            return ""
        a = self._offsets[rng.line - 1] + rng.col - 1
        b = self._offsets[rng.end_line - 1] + rng.end_col - 1
        return self.text[a:b]


class CPrinter:
    def __init__(self, source: SourceText | None = None, variables: frozenset[str] = frozenset()) -> None:
        self.source = source
        self.variables = variables  # names that are variables, not macros (`j` in `int j = i + 1`)

    def expr(self, e: ir.Expr, prec: int = 0) -> str:
        text, own = self._expr(e)
        return f"({text})" if own < prec else text

    def _expr(self, e: ir.Expr) -> tuple[str, int]:
        if isinstance(e, ir.IntLit):
            return self._int(e), _POSTFIX
        if isinstance(e, ir.FloatLit):
            return e.text, _POSTFIX
        if isinstance(e, ir.Var):
            return e.name, _POSTFIX
        if isinstance(e, ir.Subscript):
            return e.base + "".join(f"[{self.expr(i)}]" for i in e.indices), _POSTFIX
        if isinstance(e, ir.Call):
            return f"{e.name}({', '.join(self.expr(a) for a in e.args)})", _POSTFIX
        if isinstance(e, ir.Unary):
            inner = self.expr(e.operand, _UNARY)
            space = " " if inner.startswith(e.op) else ""  # `- -x`, not `--x`
            return f"{e.op}{space}{inner}", _UNARY
        if isinstance(e, ir.Cast):
            return f"({e.type}){self.expr(e.operand, _UNARY)}", _UNARY
        if isinstance(e, ir.Binary):
            p = _PREC[e.op]
            return f"{self.expr(e.lhs, p)} {e.op} {self.expr(e.rhs, p + 1)}", p
        if isinstance(e, ir.Ternary):
            cond = self.expr(e.cond, _TERNARY + 1)
            return f"{cond} ? {self.expr(e.then, _TERNARY)} : {self.expr(e.other, _TERNARY)}", _TERNARY
        return e.text, _POSTFIX

    def _int(self, e: ir.IntLit) -> str:
        if self.source is not None:
            text = self.source.slice(e.range)
            if _IDENT.fullmatch(text) and text not in self.variables:
                return text  # a macro the front end expanded (not a variable it replaced by its value)
        return str(e.value)


# ------------------------------------------------------------------------- smart constructors


def flit(value: float) -> ir.FloatLit:
    text = repr(float(value))
    return ir.FloatLit(float(value), text, NO_RANGE)


ONE = flit(1.0)
ZERO = flit(0.0)


def is_const(e: ir.Expr, value: float) -> bool:
    return isinstance(e, ir.IntLit | ir.FloatLit) and e.value == value


def neg(a: ir.Expr) -> ir.Expr:
    if isinstance(a, ir.Unary) and a.op == "-":
        return a.operand
    if is_const(a, 0):
        return a
    return ir.Unary("-", a, NO_RANGE)


def add(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    if isinstance(b, ir.Unary) and b.op == "-":
        return ir.Binary("-", a, b.operand, NO_RANGE)
    if isinstance(b, ir.FloatLit) and b.value < 0:
        return ir.Binary("-", a, flit(-b.value), NO_RANGE)
    return ir.Binary("+", a, b, NO_RANGE)


def mul(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(a, 1):
        return b
    if is_const(b, 1):
        return a
    if is_const(a, 0) or is_const(b, 0):
        return ZERO
    if isinstance(a, ir.Unary) and a.op == "-":
        return neg(mul(a.operand, b))
    if isinstance(b, ir.Unary) and b.op == "-":
        return neg(mul(a, b.operand))
    if isinstance(b, ir.Binary) and b.op == "*":
        return mul(mul(a, b.lhs), b.rhs)  # `d * (x * y)` reads better as `d * x * y`
    return ir.Binary("*", a, b, NO_RANGE)


def div(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    if is_const(b, 1):
        return a
    if isinstance(a, ir.Unary) and a.op == "-":
        return neg(div(a.operand, b))
    return ir.Binary("/", a, b, NO_RANGE)


def call(name: str, *args: ir.Expr) -> ir.Call:
    return ir.Call(name, tuple(args), NO_RANGE)


def select(cond: ir.Expr, then: ir.Expr, other: ir.Expr) -> ir.Expr:
    return ir.Ternary(cond, then, other, NO_RANGE)


def compare(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.Binary(op, a, b, NO_RANGE)


def plus_const(e: ir.Expr, c: int) -> ir.Expr:
    """``e + c`` folded: ``n - 1`` plus 1 is ``n``, ``7`` plus 1 is ``8``."""
    if c == 0:
        return e
    if isinstance(e, ir.IntLit) and not _IDENT.fullmatch(str(e.value)):
        return ir.IntLit(e.value + c, NO_RANGE)
    if isinstance(e, ir.Binary) and e.op in "+-" and isinstance(e.rhs, ir.IntLit):
        k = e.rhs.value if e.op == "+" else -e.rhs.value
        return plus_const(e.lhs, k + c)
    if c > 0:
        return ir.Binary("+", e, ir.IntLit(c, NO_RANGE), NO_RANGE)
    return ir.Binary("-", e, ir.IntLit(-c, NO_RANGE), NO_RANGE)


def substitute(e: ir.Expr, by_id: dict[int, ir.Expr]) -> ir.Expr:
    """`e` with the nodes whose ``id`` is in `by_id` replaced (subscripts are not entered)."""
    if id(e) in by_id:
        return by_id[id(e)]
    if isinstance(e, ir.Unary):
        return ir.Unary(e.op, substitute(e.operand, by_id), e.range)
    if isinstance(e, ir.Cast):
        return ir.Cast(e.type, substitute(e.operand, by_id), e.range)
    if isinstance(e, ir.Binary):
        return ir.Binary(e.op, substitute(e.lhs, by_id), substitute(e.rhs, by_id), e.range)
    if isinstance(e, ir.Ternary):
        return ir.Ternary(
            substitute(e.cond, by_id), substitute(e.then, by_id), substitute(e.other, by_id), e.range
        )
    if isinstance(e, ir.Call):
        return ir.Call(e.name, tuple(substitute(a, by_id) for a in e.args), e.range)
    return e


def value_leaves(e: ir.Expr) -> list[ir.Var | ir.Subscript]:
    """The variables and array elements `e` reads, outside subscripts, in order."""
    if isinstance(e, ir.Var | ir.Subscript):
        return [e]
    return [leaf for sub in ir.sub_expressions(e) for leaf in value_leaves(sub)]
