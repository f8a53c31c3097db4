"""One negative test per reason a loop nest cannot be modeled: the reason's name and the exact range
of the offending construct."""

from __future__ import annotations

import pytest

from core_compiler.remarks import RemarkKind
from core_compiler.source import SourceRange
from tests.helpers import analyze, named, range_of, remarks

CASES = [
    (
        "GlobalScalar",
        "double g;\nvoid f(int n, double *a) { for (int i = 0; i < 10; i++) g += a[i]; }",
        "g",
    ),
    (
        "UnsupportedExpression",  # an unexposed expression wider than its child is not a conversion
        "#include <stdarg.h>\nvoid f(int n, double *a, ...) { va_list ap; va_start(ap, a); for (int i = 0; i < n; i++) a[i] = va_arg(ap, int); }",
        "va_arg(ap, int)",
    ),
    (
        "UnsupportedStatement",
        "void f(int n, volatile double *a) { for (int i = 0; i < n; i++) a[i] = 0; }",
        "a",
    ),
    (
        "UnsupportedStatement",
        "void f(int n, _Atomic int *a) { for (int i = 0; i < n; i++) a[i] = i; }",
        "a",
    ),
    (
        "NonAffineSubscript",
        "void f(int n, double A[n][n]) { for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) A[i][i * j] = 0; }",
        "i * j",
    ),
    (
        "NonAffineLoopBound",
        "void f(int n, double A[n]) { for (int i = 0; i < n * n; i++) A[i] = 0; }",
        "n * n",
    ),
    (
        "NonAffineLoopBound",
        "void f(int n, int *len, double A[n]) { for (int i = 0; i < len[0]; i++) A[i] = 0; }",
        "len[0]",
    ),
    (
        "NonAffineCondition",
        "void f(int n, double A[n]) { for (int i = 0; i < n; i++) if (A[i] > 0) while (A[i] > 1) A[i] /= 2; }",
        "A[i]",
    ),
    (
        "NonAffineCondition",
        "void f(int n, double A[n]) { for (int i = 0; i < n; i++) if (i * i < n) while (A[i] > 1) A[i] /= 2; }",
        "i * i",
    ),
    (
        "NonCanonicalLoop",
        "void f(int n, double A[n]) { int i = 1; while (i < n) { A[i] = 0; i *= 2; } }",
        "while (i < n)",
    ),
    (
        "NonCanonicalLoop",
        "void f(int n, double A[n]) { for (int i = 0; i < n; i++) { A[i] = 0; i += 2; } }",
        "i",
    ),
    (
        "IndirectAccess",
        "void f(int n, int *idx, double *x) { for (int i = 0; i < n; i++) x[idx[i]] = 1.0; }",
        "idx[i]",
    ),
    (
        "ImpureCall",
        "#include <stdio.h>\nvoid f(int n, double *x) { for (int i = 0; i < n; i++) { x[i] = 1; printf(\"%p\", (void *)x); } }",
        "(void *)x",
    ),
    (
        "ImpureCall",
        "double g(double *);\nvoid f(int n, double *x, int *k) { for (int i = 0; i < n; i++) x[i] = g(x + k[i]); }",
        "x + k[i]",
    ),
    (
        "PossibleAliasing",
        "void f(int n, double *x) { double *p = x + 1; for (int i = 0; i < n; i++) { p[i] = x[i]; p += 2; } }",
        "p",
    ),
    (
        "PointerArithmetic",
        "void f(int n, double *x) { for (int i = 0; i < n; i++) *(x + i) = 0; }",
        "*(x + i)",
    ),
    (
        "NegativeDivision",  # C's (0 - 3) / 2 is -1, floor's -2
        "void f(int n, double *a, double *b) { for (int i = 0; i < n; i++) b[i] = a[(i - 3) / 2 + 2]; }",
        "a[(i - 3) / 2 + 2]",
    ),
    (
        "NegativeDivision",  # at n = 2 C runs i = 0 once, floor's bound -1 not at all
        "void f(int n, double *a) { for (int i = 0; i <= (n - 3) / 2; i++) a[i] = 0; }",
        "for (int i = 0; i <= (n - 3) / 2; i++)",
    ),
    (
        "PointerArithmetic",  # `*p` is `p[0]`, but `*pp` is no named array
        "typedef double *row;\nvoid f(int n, row *pp) { for (int i = 0; i < n; i++) **pp += 1.0; }",
        "**pp",
    ),
    (
        "UnstructuredControlFlow",
        # a `break` starting the body is the loop's condition (BreakAsCondition): this one is not
        "void f(int n, double *x) { for (int i = 0; i < n; i++) { x[i] = 0; if (i > 5) break; } }",
        "break",
    ),
    (
        "UnstructuredControlFlow",
        "void f(int n, double *x) { for (int i = 0; i < n; i++) { if (i > 5) return; x[i] = 0; } }",
        "return",
    ),
    (
        "UnstructuredControlFlow",
        "void f(int n, double *x) { for (int i = 0; i < n; i++) { if (i == 3) goto out; x[i] = 0; } out: ; }",
        "goto out",
    ),
    (
        "UnsupportedStatement",
        "void f(int n, double *x) { for (int i = 0; i < n; i++) { switch (i) { case 0: x[i] = 1; } } }",
        "switch (i) { case 0: x[i] = 1; }",
    ),
]


# Where the culprit is shorter than a unique needle: (needle, how many characters of it)
PREFIX = {"i += 2": 1, "p[i]": 1, "a[i] = ": 1, "g += ": 1}


def _expected(src: str, culprit: str) -> SourceRange:
    for needle, length in PREFIX.items():
        if culprit == needle[:length] and needle in src:
            r = range_of(src, needle)
            return SourceRange(r.file, r.line, r.col, r.end_line, r.col + length)
    return range_of(src, culprit)


@pytest.mark.parametrize(("reason", "src", "culprit"), CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)])
def test_reject_reason_and_range(reason: str, src: str, culprit: str) -> None:
    found = named(remarks(src), reason)
    assert found, f"no {reason} remark; got {[r.name for r in remarks(src)]}"
    assert _expected(src, culprit) in [r.range for r in found], [r.range for r in found]
    assert all(r.kind is RemarkKind.MISSED for r in found)
    assert not analyze(src).functions[0].scops


def test_rejected_outer_loop_still_finds_inner_scop() -> None:
    src = """
void f(int n, int m, double A[n][m], int *len) {
  for (int t = 0; t < len[0]; t++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < m; j++)
        A[i][j] = A[i][j] + 1.0;
}"""
    fa = analyze(src).functions[0]
    assert len(fa.scops) == 1
    assert [lp.var for lp in fa.scops[0].scop.loops] == ["i", "j"]


def test_each_reason_reported_once_for_nested_candidates() -> None:
    src = "void f(int n, int *idx, double *x) { for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) x[idx[j]] = 1.0; }"
    assert len(named(remarks(src), "IndirectAccess")) == 1


def test_delinearization_records_its_assumption() -> None:
    src = "void f(int n, int m, double *A) { for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) A[i * m + j] = 1.0; }"
    fa = analyze(src).functions[0]
    (sa,) = fa.scops
    (access,) = sa.scop.statements[0].writes
    assert "A[i, j]" in str(access.relation)
    (d,) = named(list(fa.remarks), "Delinearized")
    assert d.kind is RemarkKind.ANALYSIS
    assert d.range == range_of(src, "i * m + j")


def test_a_flat_array_read_and_written_in_one_nest_is_delinearized_once() -> None:
    """Rodinia's hotspot and lud index one flat array several times (``a[r * m + c - 1]`` next to
    ``a[(r + 1) * m + c]``): every access is split by the same row size."""
    src = "void f(int n, int m, float *a) { for (int r = 1; r < n - 1; r++) for (int c = 1; c < m - 1; c++) a[(r + 1) * m + c] = a[r * m + c - 1] + a[r * m + c + 1]; }"
    fa = analyze(src).functions[0]
    (sa,) = fa.scops
    accesses = [str(a.relation) for a in (*sa.scop.statements[0].reads, *sa.scop.statements[0].writes)]
    assert [x for x in ("a[r, -1 + c]", "a[r, 1 + c]", "a[1 + r, c]") if any(x in a for a in accesses)] == ["a[r, -1 + c]", "a[r, 1 + c]", "a[1 + r, c]"], accesses
    assert len(named(list(fa.remarks), "Delinearized")) == 1
    mixed = "void f(int n, int m, float *a) { for (int r = 0; r < n; r++) for (int c = 0; c < m; c++) a[r * m + c] = a[c]; }"
    assert named(remarks(mixed), "NonAffineSubscript")  # a plain subscript next to the 2-D ones


def test_division_of_what_cannot_be_negative_is_modeled() -> None:
    src = "void f(int n, double *a, double *b) { for (int i = 0; i < n; i++) b[i] = a[i / 2] + a[(i + 5) % 4]; }"
    assert len(analyze(src).functions[0].scops) == 1
    assert not named(remarks(src), "NegativeDivision")


def test_a_counter_read_after_its_loop_keeps_the_loop_unmodeled() -> None:
    """Generated loops count with their own variables: ``cnt[0] = it`` would read garbage."""
    src = "void f(int n, double *a, int *cnt) { int it; for (it = 0; it < n; it++) a[it] += 1.0; cnt[0] = it; }"
    fa = analyze(src).functions[0]
    assert not fa.scops
    (r,) = named(list(fa.remarks), "UnsupportedStatement")
    assert r.range.col == src.rindex("it;") + 1 and "read after the loop it counts" in r.message
    again = "void f(int n, double *a) { int it; for (it = 0; it < n; it++) a[it] = 1; for (it = 0; it < n; it++) a[it] += it; }"
    assert len(analyze(again).functions[0].scops) == 1  # counting again is a new value


def test_a_loop_it_cannot_model_gets_one_remark_not_one_per_use_of_its_counter() -> None:
    """`len[0]` is the reason; the subscripts that use `i` are not reasons of their own."""
    src = ("void f(int n, int *len, double a[n][n], double b[n][n]) { for (int i = 0; i < len[0]; i++)"
           " for (int j = 0; j < n; j++) b[j][i] = a[i][j]; }")  # fmt: skip
    missed = [r for r in remarks(src) if r.kind == RemarkKind.MISSED]
    assert [r.name for r in missed] == ["NonAffineLoopBound"] and "len[0]" in missed[0].message
    assert len(analyze(src).functions[0].scops) == 1  # the `j` loop, with `i` a size


def test_a_shadowed_scalar_is_not_merged_with_the_outer_one() -> None:
    """The ``s`` after the inner loop is the outer ``s``: the inner one is a variable of its own
    (`frontend/shadowing.py`), so the whole nest is modeled with two scalars."""
    src = ("void f(int n, double *b, double *c, double *d) { for (int i = 0; i < n; i++) { double s = b[i];"
           " for (int j = 0; j < n; j++) { double s = b[j]; c[j] = s; } d[i] = s; } }")  # fmt: skip
    fa = analyze(src).functions[0]
    (sa,) = fa.scops
    assert [lp.var for lp in sa.scop.loops] == ["i", "j"]
    outer, inner, copy, back = (s.info.assignment for s in sa.scop.statements)
    assert str(outer.target) == str(back.value) != str(inner.target) == str(copy.value)
    assert not named(list(fa.remarks), "UnsupportedStatement")


def test_no_alias_assumption_and_restrict() -> None:
    plain = "void f(int n, double *x, double *y) { for (int i = 0; i < n; i++) y[i] = x[i]; }"
    assert named(remarks(plain), "NoAliasAssumption")
    restricted = "void f(int n, double *restrict x, double *restrict y) { for (int i = 0; i < n; i++) y[i] = x[i]; }"
    assert not named(remarks(restricted), "NoAliasAssumption")
