"""`c_text`: expressions with only the parentheses C (and GCC's -Wparentheses) needs, checked
against the fully parenthesised `str` by compiling both and comparing their values."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from core_compiler.frontend import ir
from core_compiler.frontend.c_text import c_text
from core_compiler.source import SourceRange

R = SourceRange("t.c", 1, 1, 1, 1)
A, B, C = (ir.Var(v, R) for v in "abc")


def bin_(op: str, lhs: ir.Expr, rhs: ir.Expr) -> ir.Binary:
    return ir.Binary(op, lhs, rhs, R)


def sub(base: str, *indices: ir.Expr) -> ir.Subscript:
    return ir.Subscript(base, indices, R, R)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (bin_("+", bin_("*", A, sub("X", B)), sub("Y", bin_("-", C, ir.IntLit(1, R)))), "a * X[b] + Y[c - 1]"),
        (bin_("*", bin_("+", A, B), C), "(a + b) * c"),
        (bin_("-", A, bin_("-", B, C)), "a - (b - c)"),
        (bin_("+", A, bin_("+", B, C)), "a + (b + c)"),  # floating point is not associative
        (bin_("-", bin_("-", A, B), C), "a - b - c"),
        (bin_("||", bin_("&&", A, B), C), "(a && b) || c"),
        (bin_("&&", bin_("<", A, B), bin_(">=", B, C)), "a < b && b >= c"),
        (bin_("&", A, bin_("+", B, C)), "a & (b + c)"),
        (bin_("==", bin_("&", A, B), C), "(a & b) == c"),
        (ir.Unary("-", ir.Unary("-", A, R), R), "-(-a)"),
        (ir.Unary("-", bin_("+", A, B), R), "-(a + b)"),
        (ir.Ternary(bin_("<", A, B), A, ir.Ternary(C, B, A, R), R), "a < b ? a : c ? b : a"),
        (ir.Ternary(ir.Ternary(A, B, C, R), A, B, R), "(a ? b : c) ? a : b"),
        (ir.Cast(ir.Scalar("double"), bin_("+", A, B), R), "(double)(a + b)"),
        (ir.Call("fmax", (bin_("*", A, B), C), R), "fmax(a * b, c)"),
    ],
)
def test_c_text_reads_as_written(expr: ir.Expr, text: str) -> None:
    assert c_text(expr) == text


_OPS = ("+", "-", "*", "<", "<=", "==", "!=", "&", "|", "^", "&&", "||", "<<", ">>")


def _random_expr(rng: random.Random, depth: int) -> ir.Expr:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([A, B, C, ir.IntLit(rng.randint(0, 3), R)])  # negative: a unary minus
    kind = rng.random()
    if kind < 0.1:
        return ir.Unary(rng.choice("-!~"), _random_expr(rng, depth - 1), R)
    if kind < 0.2:
        return ir.Ternary(*(_random_expr(rng, depth - 1) for _ in range(3)), R)
    op = rng.choice(_OPS)
    rhs = _random_expr(rng, depth - 1)
    if op in ("<<", ">>"):
        rhs = ir.Binary("&", rhs, ir.IntLit(3, R), R)  # a shift by 0..3: defined
    return ir.Binary(op, _random_expr(rng, depth - 1), rhs, R)


def test_c_text_computes_what_the_parenthesised_form_computes(tmp_path: Path) -> None:
    """300 random integer expressions: C compiled from `c_text` and from `str` gives the same value
    at 27 points, and GCC asks for no parentheses (-Wparentheses is an error)."""
    rng = random.Random(7)
    exprs = [_random_expr(rng, 4) for _ in range(300)]
    # unsigned: no overflow is undefined, and `<<` of a negative value is not either
    body = "\n".join(
        f"  if (({c_text(e)}) != ({e})) {{ printf(\"%d: %s\\n\", {k}, \"{c_text(e)}\"); bad++; }}"
        for k, e in enumerate(exprs)
    )
    src = tmp_path / "t.c"
    src.write_text(
        "#include <stdio.h>\nint check(unsigned a, unsigned b, unsigned c) {\n  int bad = 0;\n"
        f"{body}\n  return bad;\n}}\n"
        "int main(void) {\n  int bad = 0;\n"
        "  for (unsigned a = 0; a < 3; a++) for (unsigned b = 0; b < 3; b++) for (unsigned c = 0; c < 3; c++)\n"
        "    bad += check(a - 1, b * 5, c + 2);\n  return bad != 0;\n}\n"
    )
    exe = tmp_path / "t"
    subprocess.run(["cc", "-O0", "-Werror=parentheses", "-o", exe, src], check=True, capture_output=True)
    run = subprocess.run([exe], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
