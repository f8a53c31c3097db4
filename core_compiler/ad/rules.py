"""Derivative rules: the partial derivative of an expression with respect to each active read.

`partials(e, active)` walks `e` top-down carrying the derivative of the whole expression with
respect to the current sub-expression (reverse accumulation inside one statement) and returns one
`(leaf, partial)` pair per occurrence of an active variable or array element. Partials are loop-IR
expressions over the primal values, so forward mode (``d_y = sum(partial * d_x)``) and reverse
mode (``d_x += d_y * partial``) share them.

Example: for ``A[i] * sqrt(x[i])`` the partials are ``sqrt(x[i])`` for ``A[i]`` and
``A[i] / (2.0 * sqrt(x[i]))`` for ``x[i]``.

Operations with no derivative (``floor``, ``fmod``, a cast to an integer type, an unknown call) on
an active path give a `NonDifferentiable` note with the range of the operation; their derivative
is taken as zero. Comparisons only choose values (``x > 0 ? x : 0``): they contribute nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core_compiler.ad.cprint import (
    NO_RANGE,
    ONE,
    ZERO,
    add,
    call,
    compare,
    div,
    flit,
    is_const,
    mul,
    neg,
    select,
)
from core_compiler.frontend import ir
from core_compiler.source import SourceRange

Leaf = ir.Var | ir.Subscript


@dataclass(frozen=True)
class NonDifferentiable:
    what: str  # the operation, as the C programmer wrote it
    reason: str
    range: SourceRange


SMOOTH_CALLS = frozenset(
    ["sqrt", "exp", "log", "pow", "sin", "cos", "tanh", "fabs", "fmax", "fmin", "tan", "sinh",
     "cosh", "atan", "log10", "log2", "exp2", "cbrt", "hypot", "erf", "asin", "acos"]
)  # fmt: skip
_FLAT = frozenset(["floor", "ceil", "round", "trunc", "fmod", "abs", "labs", "min", "max"])


def base_name(name: str) -> str:
    """``sqrtf`` -> ``sqrt``: the float variants share the double rules."""
    return name[:-1] if name.endswith("f") and name[:-1] in SMOOTH_CALLS | _FLAT else name


def partials(
    e: ir.Expr, active: Callable[[Leaf], bool]
) -> tuple[list[tuple[Leaf, ir.Expr]], list[NonDifferentiable]]:
    out: list[tuple[Leaf, ir.Expr]] = []
    notes: list[NonDifferentiable] = []
    _Walker(active, out, notes).walk(e, ONE)
    return out, notes


@dataclass
class _Walker:
    active: Callable[[Leaf], bool]
    out: list[tuple[Leaf, ir.Expr]]
    notes: list[NonDifferentiable]

    def depends(self, e: ir.Expr) -> bool:
        if isinstance(e, ir.Var | ir.Subscript):
            return self.active(e)
        return any(self.depends(s) for s in ir.sub_expressions(e) if not isinstance(e, ir.Subscript))

    def walk(self, e: ir.Expr, c: ir.Expr) -> None:
        if not self.depends(e) or is_const(c, 0):
            return
        if isinstance(e, ir.Var | ir.Subscript):
            self.out.append((e, c))
        elif isinstance(e, ir.Unary):
            self.unary(e, c)
        elif isinstance(e, ir.Cast):
            if isinstance(e.type, ir.Scalar) and not e.type.is_integer:
                self.walk(e.operand, c)
            else:
                self.note(e, f"the cast to `{e.type}` drops the fraction", e.range)
        elif isinstance(e, ir.Binary):
            self.binary(e, c)
        elif isinstance(e, ir.Ternary):
            self.walk(e.then, select(e.cond, c, ZERO))
            self.walk(e.other, select(e.cond, ZERO, c))
        elif isinstance(e, ir.Call):
            self.call(e, c)
        else:
            self.note(e, "hexplore cannot see inside this expression", e.range)

    def unary(self, e: ir.Unary, c: ir.Expr) -> None:
        if e.op == "-":
            self.walk(e.operand, neg(c))
        elif e.op == "+":
            self.walk(e.operand, c)
        # `!x` and `~x` are integer-valued: piecewise constant, derivative zero.

    def binary(self, e: ir.Binary, c: ir.Expr) -> None:
        a, b = e.lhs, e.rhs
        if e.op == "+":
            self.walk(a, c)
            self.walk(b, c)
        elif e.op == "-":
            self.walk(a, c)
            self.walk(b, neg(c))
        elif e.op == "*":
            self.walk(a, mul(c, b))
            self.walk(b, mul(c, a))
        elif e.op == "/":
            self.walk(a, div(c, b))
            self.walk(b, neg(div(mul(c, a), mul(b, b))))
        elif e.op in ("%", "<<", ">>", "&", "|", "^"):
            self.note(e, f"the integer operator `{e.op}`", e.range)
        # comparisons and && || only select: derivative zero almost everywhere

    def call(self, e: ir.Call, c: ir.Expr) -> None:
        name = base_name(e.name)
        args = e.args
        f = "f" if e.name != name else ""  # keep float calls in float
        x = args[0] if args else ZERO
        if name == "sqrt":
            self.walk(x, div(c, mul(flit(2.0), e)))
        elif name == "exp":
            self.walk(x, mul(c, e))
        elif name == "exp2":
            self.walk(x, mul(c, mul(e, flit(0.6931471805599453))))
        elif name == "log":
            self.walk(x, div(c, x))
        elif name == "log2":
            self.walk(x, div(c, mul(x, flit(0.6931471805599453))))
        elif name == "log10":
            self.walk(x, div(c, mul(x, flit(2.302585092994046))))
        elif name == "pow":
            y = args[1]
            self.walk(x, mul(c, mul(y, call(e.name, x, add(y, flit(-1.0))))))
            self.walk(y, mul(c, mul(e, call("log" + f, x))))
        elif name == "sin":
            self.walk(x, mul(c, call("cos" + f, x)))
        elif name == "cos":
            self.walk(x, neg(mul(c, call("sin" + f, x))))
        elif name == "tan":
            self.walk(x, mul(c, add(ONE, mul(e, e))))
        elif name == "tanh":
            self.walk(x, mul(c, ir.Binary("-", ONE, mul(e, e), NO_RANGE)))
        elif name == "sinh":
            self.walk(x, mul(c, call("cosh" + f, x)))
        elif name == "cosh":
            self.walk(x, mul(c, call("sinh" + f, x)))
        elif name == "atan":
            self.walk(x, div(c, add(ONE, mul(x, x))))
        elif name == "cbrt":
            self.walk(x, div(c, mul(flit(3.0), mul(e, e))))
        elif name == "fabs":
            self.walk(x, select(compare(">=", x, ZERO), c, neg(c)))
        elif name in ("fmax", "fmin"):
            first = compare(">=" if name == "fmax" else "<=", x, args[1])
            self.walk(x, select(first, c, ZERO))
            self.walk(args[1], select(first, ZERO, c))
        elif name == "hypot":
            self.walk(x, mul(c, div(x, e)))
            self.walk(args[1], mul(c, div(args[1], e)))
        else:
            why = "is piecewise constant" if name in _FLAT else "has no derivative rule in hexplore"
            self.note(e, f"`{e.name}` {why}", e.range)

    def note(self, e: ir.Expr, reason: str, rng: SourceRange) -> None:
        self.notes.append(NonDifferentiable(str(e), reason, rng))
