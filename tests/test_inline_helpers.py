"""Small pure helpers (``static inline double max3(...) { return ...; }``) are inlined at their call
sites, so that loop nests calling them are modeled and run; helpers that may have side effects,
read memory or recurse stay calls, refused as before. Remarks point at the call, not the helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.frontend import ir, run_frontend
from core_compiler.runtime.differential import check_c, check_opencl
from tests.helpers import analyze, check_cpu, named, range_of, remarks

POOL = """
static inline double max3(double a, double b, double c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }
void pool(int n, double a[n], double b[n]) {
  for (int i = 1; i < n - 1; i++)
    b[i] = max3(a[i-1], a[i], a[i+1]);
}
"""

FLAT = """
static inline int idx(int i, int j, int n) { return i * n + j; }
void flat(int n, int m, double *a, const double *b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[idx(i, j, m)] = 2.0 * b[idx(i, j, m)] + 1.0;
}
"""

# Each conversion changes the result: `halve(i)` divides in double, `trunc_half(4 * a[i])` in int,
# and `whole` truncates its double result to int before `+ 0.25`.
CONVERSIONS = """
static double halve(double x) { return x / 2; }
static int trunc_half(int v) { return v / 2; }
static int whole(double x) { return x * 3; }
void conv(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = halve(i) + trunc_half(4 * a[i]) + whole(a[i]) + 0.25;
}
"""


def _write(tmp_path: Path, name: str, src: str) -> str:
    p = tmp_path / name
    p.write_text(src)
    return str(p)


def _value(src: str, function: str) -> ir.Expr:
    """The right-hand side of the only assignment of `function`'s innermost loop."""
    fn = next(f for f in run_frontend("t.c", src).functions if f.name == function)
    stmt = fn.body[0]
    while isinstance(stmt, ir.For):
        stmt = stmt.body[0]
    assert isinstance(stmt, ir.Assign), stmt
    return stmt.value


def test_max3_is_inlined_modeled_and_runs(tmp_path: Path) -> None:
    fa = analyze(POOL).functions[1]
    assert fa.function.name == "pool" and len(fa.scops) == 1, [r.name for r in fa.remarks]
    assert not named(list(fa.remarks), "ImpureCall")
    assert not any(isinstance(e, ir.Call) for e in ir.walk_expr(_value(POOL, "pool")))
    path = _write(tmp_path, "pool.c", POOL)
    for n in (37, 3, 2, 1, 0):  # 1 and 0: the loop runs no iteration
        cpu = check_cpu(path, "pool", {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"
    gpu = check_opencl(path, "pool", {"n": 37})
    assert gpu.ok, gpu.comparison.report()


def test_a_flat_index_helper_is_delinearized(tmp_path: Path) -> None:
    fa = analyze(FLAT).functions[1]
    (sa,) = fa.scops
    (write,) = sa.scop.statements[0].writes
    assert "a[i, j]" in str(write.relation), str(write.relation)
    assert any("b[i, j]" in str(r.relation) for r in sa.scop.statements[0].reads)
    ranges = sorted(r.range for r in named(list(fa.remarks), "Delinearized"))
    calls = [range_of(FLAT, "idx(i, j, m)", nth=k) for k in (0, 1)]  # the calls, not `i * n + j`
    assert ranges == calls, ranges
    cpu = check_cpu(_write(tmp_path, "flat.c", FLAT), "flat", {"n": 9, "m": 13}, threads=2)
    assert cpu.ok, cpu.report()


def test_arguments_and_results_are_converted_as_in_c(tmp_path: Path) -> None:
    value = str(_value(CONVERSIONS, "conv"))
    for cast in ("((double)i)", "((int)(4 * a[i]))", "((int)(a[i] * 3))"):
        assert cast in value, value
    assert len(analyze(CONVERSIONS).functions[3].scops) == 1
    path = _write(tmp_path, "conv.c", CONVERSIONS)
    for n in (37, 1):
        cpu = check_cpu(path, "conv", {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"


NOT_INLINED = [
    ("two statements", "static double g(double x) { double y = 2 * x; return y; }", "g(a[i])"),
    ("writes a global", "static double last;\nstatic double g(double x) { return last = x; }", "g(a[i])"),
    ("reads a global", "static double scale;\nstatic double g(double x) { return scale * x; }", "g(a[i])"),
    ("takes a pointer", "static double g(const double *p) { return p[0]; }", "g(a)"),
    ("recursive", "static double g(int x) { return x > 0 ? g(x - 1) + 1 : 0; }", "g(i)"),
]


@pytest.mark.parametrize(("helper", "call"), [c[1:] for c in NOT_INLINED], ids=[c[0] for c in NOT_INLINED])
def test_helpers_that_are_not_pure_stay_calls(helper: str, call: str) -> None:
    """Not inlined: each stays a call, an opaque one (tests/test_opaque_calls.py) that keeps the
    loop around it in order."""
    src = f"{helper}\nvoid f(int n, double a[n], double b[n]) {{\n  for (int i = 0; i < n; i++)\n    b[i] = {call};\n}}\n"
    assert not named(remarks(src), "ImpureCall")
    found = named(remarks(src), "OpaqueCall")
    assert [r.range for r in found] == [range_of(src, call)], [(r.range, r.message) for r in found]
    assert found[0].args.get("callee") == "g", found[0].args
    (sa,) = analyze(src).functions[-1].scops
    assert [c.name for s in sa.scop.statements for c in s.info.opaque_calls] == ["g"]
    assert not sa.deps.loops[0].parallel


def test_a_non_affine_helper_is_blamed_at_the_call() -> None:
    src = """static int sq(int x) {
  return x * x;
}
void f(int n, double a[n]) {
  for (int i = 0; i < n; i++)
    a[sq(i)] = 0;
}
"""
    (r,) = named(remarks(src), "NonAffineSubscript")
    assert r.range == range_of(src, "sq(i)"), r.range
    assert r.range.line == 6


# `if (c) return a; … return b;` helpers are `c ? a : …` (each value converted to the result type).
BRANCHING = """
static double clamp(double v) {
  if (v < 0.0)
    return 0.0;
  return v > 1.0 ? 1.0 : v;
}
static int sgn(int x) { if (x > 0) { return 1; } else if (x < 0) return -1; else return 0; }
static float relu(float x) { if (x > 0) return x; return 0; }
void branching(int n, double *restrict a, int *restrict s, float *restrict r) {
  for (int i = 0; i < n; i++) {
    s[i] = sgn(i - n / 2) + sgn((int)(4 * a[i] - 2));
    r[i] = relu(a[i] - 0.5);
    a[i] = clamp(2 * a[i] - 0.5);
  }
}
"""

# `void` helpers that update arrays are inlined as their statements: a row (`A[i]`) for a pointer,
# a number argument that reads memory (`c[i]`, `b[i]`) bound to a local set before the body, the
# same array for two pointers (`addto(a, a, i)`: the dependence between them stays).
VOID_HELPERS = """
static void bump(double *a, int i) { a[i] += 1.0; }
static void axpy_row(int m, double alpha, const double *x, double *y) {
  for (int j = 0; j < m; j++)
    y[j] += alpha * x[j];
}
static void scale2(double *a, int i, double s) { double t = a[i] * s; a[i] = t + t; }
static void addto(double *dst, const double *src, int i) { dst[i] += src[i + 1]; }
void helpers(int n, int m, double A[n][m], double B[n][m], double *c, double *a, double *b) {
  for (int i = 0; i < n; i++) {
    bump(c, i);
    axpy_row(m, c[i], A[i], B[i]);
    scale2(b, i, c[i]);
  }
  for (int i = 0; i + 1 < n; i++)
    addto(a, a, i);
}
"""

SIZES = [{"n": 37, "m": 5}, {"n": 1, "m": 1}, {"n": 0, "m": 0}, {"n": 2, "m": 33}]


def _runs(path: str, function: str) -> None:
    for sizes in SIZES:
        c = check_c(path, function, sizes)
        assert c.ok, f"{sizes}\n{c.comparison.report()}"
    cpu = check_cpu(path, function, SIZES[0], threads=2)
    assert cpu.ok, cpu.report()
    gpu = check_opencl(path, function, SIZES[0])
    assert gpu.ok, gpu.comparison.report()


def test_helpers_of_if_and_return_are_conditional_expressions(tmp_path: Path) -> None:
    fa = analyze(BRANCHING).functions[-1]
    assert len(fa.scops) == 1 and not named(list(fa.remarks), "ImpureCall"), [r.message for r in fa.remarks]
    (loop,) = next(f for f in run_frontend("t.c", BRANCHING).functions if f.name == "branching").body
    assert isinstance(loop, ir.For)
    values = [str(s.value) for s in loop.body if isinstance(s, ir.Assign)]
    assert values[1] == "((((float)(a[i] - 0.5)) > 0) ? ((float)(a[i] - 0.5)) : ((float)0))", values[1]
    _runs(_write(tmp_path, "branching.c", BRANCHING), "branching")


def test_void_helpers_are_inlined_as_their_statements(tmp_path: Path) -> None:
    fa = analyze(VOID_HELPERS).functions[-1]
    assert len(fa.scops) == 1 and not named(list(fa.remarks), "ImpureCall"), [r.message for r in fa.remarks]
    notes = named(list(fa.remarks), "InlinedCall")
    calls = ["bump(c, i)", "axpy_row(m, c[i], A[i], B[i])", "scale2(b, i, c[i])", "addto(a, a, i)"]
    assert sorted(r.range for r in notes) == sorted(range_of(VOID_HELPERS, c) for c in calls)
    assert "`x` = `A[i]`" in notes[1].message or any("`x` = `A[i]`" in r.message for r in notes)
    _runs(_write(tmp_path, "helpers.c", VOID_HELPERS), "helpers")


VOID_NOT_INLINED = [
    ("writes a global", "static double last;\nstatic void g(double *p, int i) { last = p[i]; }", "g(a, i)"),
    ("returns early", "static void g(double *p, int i) { if (i > 3) return; p[i] = 0; }", "g(a, i)"),
    ("assigns a parameter", "static void g(double *p, int i) { i = i + 1; p[i] = 0; }", "g(a, i)"),
    ("pointer arithmetic", "static void g(double *p, int i) { p[i] = 0; }", "g(a + 1, i)"),
    ("calls printf", "#include <stdio.h>\nstatic void g(double *p, int i) { printf(\"%f\", p[i]); }", "g(a, i)"),
    ("a row of rows", "static void g(int k, double p[][4], int i) { p[i][0] = 0; }", "g(4, b, i)"),
    ("a static local", "static void g(double *p, int i) { static int calls; calls += 1; p[i] = calls; }", "g(a, i)"),
    ("a row by an element", "static void g(double *p, int i) { p[0] = i; }", "g(b[(int)a[i]], i)"),
    ("volatile elements", "static void g(volatile double *p, int i) { p[i] = 0; }", "g(a, i)"),
]


# those whose arguments are numbers, arrays and affine addresses in them (`a + 1`) are modeled as
# opaque calls (test_opaque_calls.py, test_opaque_arguments.py)
REFUSED_ARGUMENT = {"a row by an element": "b[(int)a[i]]"}


@pytest.mark.parametrize(("helper", "call"), [c[1:] for c in VOID_NOT_INLINED], ids=[c[0] for c in VOID_NOT_INLINED])
def test_void_helpers_that_cannot_be_inlined_stay_calls(helper: str, call: str) -> None:
    src = f"{helper}\nvoid f(int n, double a[n], double b[n][4]) {{\n  for (int i = 0; i < n; i++)\n    {call};\n}}\n"
    found = named(remarks(src), "ImpureCall")
    bad = next((arg for arg in REFUSED_ARGUMENT.values() if f", {arg}" in call or f"({arg}" in call), None)
    if bad is not None:
        assert [r.range for r in found] == [range_of(src, bad)], [(r.range, r.message) for r in found]
    else:
        assert not found and [r.range for r in named(remarks(src), "OpaqueCall")] == [range_of(src, call)]
    assert not named(remarks(src), "InlinedCall")
