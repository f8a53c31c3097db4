"""The front end's budget for one expression: how many nodes, how deep.

A macro can expand to an expression of a million terms and a generated subscript can sum
thousands; lowering such a tree, and every pass after it (the affine forms, isl's text, the
printers: all recursive), would take minutes or overflow Python's stack. An expression is lowered
within `MAX_NODES` nodes and `MAX_DEPTH` levels; past either, the whole outermost expression is
an opaque ``ExpressionTooLarge`` node with its range, so the loop nest around it is not modeled and
says why (`Lowerer.expr` lowers every expression through `ExpressionBudget.lower`).
"""

from __future__ import annotations

from collections.abc import Callable

import clang.cindex as ci

from core_compiler.frontend import ir
from core_compiler.source import SourceRange

MAX_NODES = 10_000
MAX_DEPTH = 200

MESSAGE = (
    f"an expression larger than hexplore reads (more than {MAX_NODES:,} operators and operands, "
    f"or nested more than {MAX_DEPTH} deep, after macro expansion); compute it in several "
    "statements, with temporaries"
)
_SHOWN = 40  # characters of the expression's text kept in the IR (and in messages)


class _OverBudget(Exception):
    pass


class ExpressionBudget:
    def __init__(self) -> None:
        self.depth = 0
        self.nodes = 0

    def lower(
        self,
        cur: ci.Cursor,
        lower: Callable[[ci.Cursor], ir.Expr],
        where: Callable[[ci.Cursor], SourceRange],
        text: Callable[[SourceRange], str],
    ) -> ir.Expr:
        """`lower(cur)`, counted; an ``ExpressionTooLarge`` opaque node for the outermost
        expression when over budget (its text cut short)."""
        outermost = self.depth == 0
        if outermost:
            self.nodes = 0
        self.depth += 1
        self.nodes += 1
        try:
            if self.depth > MAX_DEPTH or self.nodes > MAX_NODES:
                raise _OverBudget
            return lower(cur)
        except _OverBudget:
            if not outermost:
                raise
            rng = where(cur)
            shown = text(rng)
            shown = shown if len(shown) <= _SHOWN else shown[:_SHOWN].rstrip() + " …"
            return ir.OpaqueExpr("ExpressionTooLarge", MESSAGE, shown, rng)
        finally:
            self.depth -= 1
