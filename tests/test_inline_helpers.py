"""Small pure helpers (``static inline double max3(...) { return ...; }``) are inlined at their call
sites, so that loop nests calling them are modeled and run; helpers that may have side effects,
read memory or recurse stay calls, refused as before. Remarks point at the call, not the helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.frontend import ir, run_frontend
from core_compiler.runtime.cpu_variants import check_llvm_cpu
from core_compiler.runtime.differential import check_opencl
from tests.helpers import analyze, named, range_of, remarks

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
        cpu = check_llvm_cpu(path, "pool", {"n": n}, threads=2)
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
    cpu = check_llvm_cpu(_write(tmp_path, "flat.c", FLAT), "flat", {"n": 9, "m": 13}, threads=2)
    assert cpu.ok, cpu.report()


def test_arguments_and_results_are_converted_as_in_c(tmp_path: Path) -> None:
    value = str(_value(CONVERSIONS, "conv"))
    for cast in ("((double)i)", "((int)(4 * a[i]))", "((int)(a[i] * 3))"):
        assert cast in value, value
    assert len(analyze(CONVERSIONS).functions[3].scops) == 1
    path = _write(tmp_path, "conv.c", CONVERSIONS)
    for n in (37, 1):
        cpu = check_llvm_cpu(path, "conv", {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"


NOT_INLINED = [
    ("two statements", "static double g(double x) { double y = 2 * x; return y; }", "g(a[i])"),
    ("writes a global", "static double last;\nstatic double g(double x) { return last = x; }", "g(a[i])"),
    ("reads a global", "static double scale;\nstatic double g(double x) { return scale * x; }", "g(a[i])"),
    ("takes a pointer", "static double g(const double *p) { return p[0]; }", "g(a)"),
    ("recursive", "static double g(int x) { return x > 0 ? g(x - 1) + 1 : 0; }", "g(i)"),
]


@pytest.mark.parametrize(("helper", "call"), [c[1:] for c in NOT_INLINED], ids=[c[0] for c in NOT_INLINED])
def test_helpers_that_are_not_pure_stay_impure_calls(helper: str, call: str) -> None:
    src = f"{helper}\nvoid f(int n, double a[n], double b[n]) {{\n  for (int i = 0; i < n; i++)\n    b[i] = {call};\n}}\n"
    found = named(remarks(src), "ImpureCall")
    assert [r.range for r in found] == [range_of(src, call)], [(r.range, r.message) for r in found]
    assert found[0].args.get("callee") == "g", found[0].args
    assert not analyze(src).functions[-1].scops


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
