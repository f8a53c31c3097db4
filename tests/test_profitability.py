"""Profitability (Polly-ACC's model): operation counts by hand, the box estimate against isl's own
point counts, every decision path with its remark, and the run-time condition compiled by gcc."""

from __future__ import annotations

import dataclasses
import math
import shutil
import subprocess
from pathlib import Path

import islpy as isl
import pytest

from core_compiler.analysis import analyze_file
from core_compiler.remarks import RemarkKind
from core_compiler.scop.affine import isl_name
from core_compiler.scop.model import Scop
from core_compiler.transform.profitability import (
    DEFAULT_THRESHOLD,
    ProfitabilityOptions,
    decide,
    estimate_work,
    fixed_by_context,
    format_count,
    statement_ops,
)
from tests.conftest import suite
from tests.helpers import suite_analysis

SET = isl.dim_type.set
PARAM = isl.dim_type.param


def kernel_scop(file: str) -> Scop:
    entry = next(k for k in suite() if k["file"] == file)
    fa = suite_analysis(file, str(entry["function"]))
    (sa,) = fa.functions[0].scops
    return sa.scop


def inline_scop(src: str, function: str = "f") -> Scop:
    fa = analyze_file("t.c", text=src, only=function)
    assert fa.functions and fa.functions[0].scops, fa.all_remarks()
    return fa.functions[0].scops[0].scop


def suite_sizes(file: str) -> dict[str, int]:
    entry = next(k for k in suite() if k["file"] == file)
    return dict(entry["sizes"])  # type: ignore[call-overload]


# ------------------------------------------------------------------------------ operation counts


@pytest.mark.parametrize(
    ("statement", "ops"),
    [
        ("A[i] = B[i];", 2),  # load, store
        ("A[i] += 2.0 * B[i + 1];", 6),  # load B, index +, *, load A, +, store
        ("A[i] = -B[i] + sqrt(B[i]);", 6),  # -, load, call, load, +, store
        ("A[i] = +B[i];", 2),  # unary plus is free
        ("A[i] = (double)i;", 1),  # casts are free: the store only
        ("A[i] = B[i] > 0.0 ? B[i] : 0.0;", 5),  # ?:, >, 2 loads, store
        ("A[2 * i + 1] = x;", 3),  # address *, +, store
        ("x = B[i] * B[i];", 3),  # a scalar target is a register: 2 loads, *
        ("x += B[i];", 2),  # load, +
        ("x = 0.0;", 1),  # at least one: a move
    ],
)
def test_operations_per_instance_match_hand_counts(statement: str, ops: int) -> None:
    src = "#include <math.h>\n" + f"void f(int n, double x, double A[2 * n + 2], double B[n + 1]) {{\n  for (int i = 0; i < n; i++)\n    {statement}\n}}\n"
    scop = inline_scop(src)
    (s,) = scop.statements
    assert statement_ops(s.info.node) == ops


def test_gemm_statements_and_estimate_at_its_macro_sizes() -> None:
    scop = kernel_scop("gemm.c")
    assert [statement_ops(s.info.node) for s in scop.statements] == [3, 7]  # C*=beta; C+=alpha*A*B
    sizes = suite_sizes("gemm.c")
    assert sizes == {"ni": 40, "nj": 50, "nk": 30}
    estimate = estimate_work(scop)
    assert estimate.evaluate(sizes) == 3 * 40 * 50 + 7 * 40 * 50 * 30 == 426000
    assert estimate.to_text() == "7*ni*nj*nk + 3*ni*nj"
    assert estimate.involved() == ("ni", "nj", "nk")


def test_jacobi_2d_parametric_estimate() -> None:
    estimate = estimate_work(kernel_scop("jacobi_2d.c"))
    # two statements of 15 operations (5 loads, 4 +, 1 *, 4 index +-1, 1 store) over (n-2)^2 points
    assert estimate.to_text() == "30*n*n*tsteps - 120*n*tsteps + 120*tsteps"
    for n, tsteps in [(0, 5), (1, 5), (2, 5), (3, 5), (64, 16), (100, 7)]:
        assert estimate.evaluate({"n": n, "tsteps": tsteps}) == 2 * 15 * max(n - 2, 0) ** 2 * tsteps


# ------------------------------------------------------------------- the box against point counts


def _fix(domain: isl.Set, values: dict[str, int]) -> isl.Set:
    for i in range(domain.dim(PARAM)):
        name = domain.get_dim_name(PARAM, i)
        c_name = next(p for p in values if isl_name(p) == name)
        domain = domain.fix_val(PARAM, i, isl.Val.int_from_si(domain.get_ctx(), values[c_name]))
    return domain


def brute_box(domain: isl.Set, values: dict[str, int]) -> int:
    """The bounding box of the domain's points at `values`, by enumerating them."""
    points: list[list[int]] = []
    n = domain.dim(SET)
    _fix(domain, values).foreach_point(
        lambda p: points.append([int(p.get_coordinate_val(SET, d).to_python()) for d in range(n)])
    )
    if not points:
        return 0
    return math.prod(max(c) - min(c) + 1 for c in zip(*points, strict=True)) if n else 1


def exact_count(scop: Scop, values: dict[str, int]) -> int:
    return sum(
        int(_fix(s.domain, values).count_val().to_python()) * statement_ops(s.info.node) for s in scop.statements
    )


SUITE_FILES = [str(k["file"]) for k in suite()]
RECTANGULAR = [
    "gemm.c", "2mm.c", "3mm.c", "atax.c", "bicg.c", "mvt.c", "doitgen.c", "matvec.c", "sgemv.c",
    "soft_threshold.c", "softmax.c", "jacobi_1d.c", "jacobi_2d.c", "heat_3d.c", "seidel_2d.c",
    "fdtd_2d.c", "gemver.c", "gesummv.c", "floyd_warshall.c", "conv2d.c", "dot_norm.c",
    "integral_image.c",
]  # fmt: skip


@pytest.mark.parametrize("file", SUITE_FILES)
def test_estimate_is_the_enumerated_box_times_operations(file: str) -> None:
    scop = kernel_scop(file)
    estimate = estimate_work(scop)
    for base in (0, 1, 5):
        values = {p: base + 2 * i for i, p in enumerate(scop.params)}  # distinct: swapped params show
        expected = sum(brute_box(s.domain, values) * statement_ops(s.info.node) for s in scop.statements)
        assert estimate.evaluate(values) == expected, values


@pytest.mark.parametrize("file", SUITE_FILES)
def test_estimate_over_approximates_the_exact_count(file: str) -> None:
    scop = kernel_scop(file)
    sizes = suite_sizes(file)
    value, exact = estimate_work(scop).evaluate(sizes), exact_count(scop, sizes)
    if file in RECTANGULAR:
        assert value == exact
    else:
        assert value > exact > 0


def test_triangle_counts_its_bounding_square() -> None:
    scop = inline_scop(
        "void f(int n, double A[n][n]) {\n"
        "  for (int i = 0; i < n; i++)\n"
        "    for (int j = i; j < n; j++)\n"
        "      A[i][j] = A[j][i];\n"
        "}\n"
    )
    estimate = estimate_work(scop)
    assert estimate.to_text() == "2*n*n"
    assert estimate.evaluate({"n": 10}) == 2 * 100
    assert exact_count(scop, {"n": 10}) == 2 * 55


# --------------------------------------------------------------------------------- decisions


BIG_MACRO = """#define N 1024
void f(double C[N][N], double A[N][N]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = A[i][j] * A[j][i] + C[i][j];
}
"""


def test_offload_when_constant_sizes_give_enough_work() -> None:
    scop = inline_scop(BIG_MACRO)
    p = decide(scop)
    assert (p.decision, p.value, p.condition_c) == ("offload", 6 * 1024 * 1024, None)
    r = p.remark
    assert (r.kind, r.pass_name, r.name) == (RemarkKind.PASSED, "profitability", "OffloadProfitable")
    assert "offload pays: about 6.3e6 dynamic instructions" in r.message
    assert "threshold of 2.6e6" in r.message
    assert (r.range, r.function) == (scop.range, "f")
    assert dict(r.args) == {"estimate": 6291456, "threshold": DEFAULT_THRESHOLD, "condition": None}


def test_cpu_when_constant_sizes_give_too_little_work() -> None:
    scop = inline_scop(BIG_MACRO.replace("1024", "64"))
    p = decide(scop)
    assert (p.decision, p.value) == ("cpu", 6 * 64 * 64)
    r = p.remark
    assert (r.kind, r.name) == (RemarkKind.MISSED, "KeptOnCpu")
    assert r.message == (
        "kept on CPU: about 2.5e4 dynamic instructions, below the offload threshold of 2.6e6"
    )


def test_explicit_values_decide_at_compile_time() -> None:
    scop = kernel_scop("gemm.c")
    p = decide(scop, values=suite_sizes("gemm.c"))
    assert (p.decision, p.value) == ("cpu", 426000)
    assert p.remark.message == (
        "kept on CPU: about 4.3e5 dynamic instructions, below the offload threshold of 2.6e6 "
        "(with ni = 40, nj = 50, nk = 30)"
    )
    big = decide(scop, values={"ni": 200, "nj": 200, "nk": 200, "unrelated": 3})
    assert (big.decision, big.value) == ("offload", 7 * 200**3 + 3 * 200**2)
    assert big.remark.name == "OffloadProfitable"


def test_values_outside_the_context_mean_empty_loops() -> None:
    p = decide(kernel_scop("jacobi_2d.c"), values={"n": -1, "tsteps": 3})
    assert (p.decision, p.value) == ("cpu", 0)
    assert p.remark.message.startswith("kept on CPU: about 0 dynamic instructions")


def test_threshold_is_an_option() -> None:
    scop = kernel_scop("gemm.c")
    sizes = suite_sizes("gemm.c")
    assert decide(scop, ProfitabilityOptions(threshold=426000), sizes).decision == "offload"
    assert decide(scop, ProfitabilityOptions(threshold=426001), sizes).decision == "cpu"


def test_runtime_check_when_sizes_are_parameters() -> None:
    scop = kernel_scop("gemm.c")
    p = decide(scop)
    assert (p.decision, p.value) == ("runtime", None)
    assert p.condition_c is not None and p.condition_c.endswith(">= 2621440.0")
    r = p.remark
    assert (r.kind, r.pass_name, r.name) == (RemarkKind.ANALYSIS, "profitability", "RuntimeOffloadCheck")
    assert "offload decided at run time: on the GPU when 7*ni*nj*nk + 3*ni*nj >= 2621440" in r.message
    assert "the host code checks this" in r.message
    assert dict(r.args) == {
        "estimate": "7*ni*nj*nk + 3*ni*nj",
        "threshold": DEFAULT_THRESHOLD,
        "condition": p.condition_c,
    }


def test_partial_values_leave_a_runtime_check_over_the_others() -> None:
    p = decide(kernel_scop("jacobi_2d.c"), values={"tsteps": 10})
    assert p.decision == "runtime"
    assert p.estimate.involved() == ("n",)
    assert "on the GPU when 300*n*n - 1200*n + 1200 >= 2621440" in p.remark.message
    assert p.condition_c is not None and "tsteps" not in p.condition_c


def _pin(scop: Scop, constraints: str) -> Scop:
    params = ", ".join(isl_name(p) for p in scop.params)
    extra = isl.Set.read_from_str(scop.ctx, f"[{params}] -> {{ : {constraints} }}")
    return dataclasses.replace(scop, context=scop.context.intersect_params(extra))


def test_parameters_pinned_by_the_context_decide_at_compile_time() -> None:
    scop = _pin(kernel_scop("jacobi_2d.c"), "n = 130")
    assert fixed_by_context(scop) == {"n": 130}
    partly = decide(scop)
    assert partly.decision == "runtime"
    assert partly.estimate.to_text() == f"{30 * 128 * 128}*tsteps"
    fully = decide(_pin(scop, "tsteps = 6"))
    assert (fully.decision, fully.value) == ("offload", 30 * 128 * 128 * 6)
    assert fully.remark.message == (
        "offload pays: about 2.9e6 dynamic instructions, at least the offload threshold of 2.6e6"
    )


def test_a_single_short_loop_is_too_little_work() -> None:
    scop = inline_scop(
        "void f(int n, double a, double x[n], double y[n]) {\n"
        "  for (int i = 0; i < n; i++)\n"
        "    y[i] = a * x[i] + y[i];\n"
        "}\n"
    )
    p = decide(scop, values={"n": 10**8})  # however large: the static check comes first
    assert (p.decision, p.condition_c) == ("cpu", None)
    r = p.remark
    assert (r.kind, r.pass_name, r.name) == (RemarkKind.MISSED, "profitability", "TooLittleWork")
    assert r.message.startswith(
        "kept on CPU: a single loop with 5 operations per iteration is too little work to offload"
    )
    assert "at least 20 operations per iteration" in r.message
    assert (r.range, r.function) == (scop.range, "f")


def test_a_single_loop_with_enough_operations_is_considered() -> None:
    long_body = " + ".join(f"x[i] * {k}.0" for k in range(10))  # 10 loads, 10 *, 9 +, 1 store
    src = f"void f(int n, double x[n], double y[n]) {{\n  for (int i = 0; i < n; i++) {{\n    y[i] = {long_body};\n  }}\n}}\n"
    scop = inline_scop(src)
    assert statement_ops(scop.statements[0].info.node) == 30
    assert decide(scop).decision == "runtime"
    assert decide(scop, ProfitabilityOptions(min_ops_single_loop=31)).remark.name == "TooLittleWork"
    several = src.replace("    y[i] =", "    y[i] = x[i];\n    y[i] =")  # ops of one iteration add up
    assert decide(inline_scop(several), ProfitabilityOptions(min_ops_single_loop=32)).decision == "runtime"


def test_two_nested_loops_pass_the_static_check_however_small_the_body() -> None:
    p = decide(inline_scop(BIG_MACRO.replace("A[i][j] * A[j][i] + C[i][j]", "0.0")))
    assert p.remark.name == "KeptOnCpu"  # decided by the work estimate, not the static check


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0"), (999, "999"), (21000, "2.1e4"), (99960, "1.0e5"), (DEFAULT_THRESHOLD, "2.6e6"), (7 * 10**15, "7.0e15")],
)
def test_format_count(n: int, text: str) -> None:
    assert format_count(n) == text


# ---------------------------------------------------------------- the C condition, run by gcc

STRIDED = """void f(int n, int range, double A[n][range]) {
  for (int i = 1; i < n; i += 3)
    for (int j = i; j < range && j < i + 40; j++)
      A[i][j] = A[i][j] * 2.0 + 1.0;
}
"""


SKEWED = """void f(int n, int m, double A[n][n]) {
  for (int i = 0; i < n; i += 4)
    for (int j = i - m; j < n; j += 3)
      A[i][j] = 1.0;
}
"""

GUARDED = """void f(int n, int m, double A[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if ((i + 2) / 3 >= j - m)
        A[i][j] = 1.0;
}
"""

SIGNED_ROWS = [{"n": n, "m": m} for n in (0, 1, 2, 5, 9, 40, 3000) for m in (-7, -2, -1, 0, 1, 3, 8)]


@pytest.mark.parametrize("src", [STRIDED, SKEWED, GUARDED])
def test_strided_and_skewed_domains_match_the_enumerated_box(src: str) -> None:
    scop = inline_scop(src)
    estimate = estimate_work(scop)
    rows = _rows(scop.params, [0, 1, 4, 11, 30])
    if set(scop.params) == {"n", "m"}:
        rows += [row for row in SIGNED_ROWS if row["n"] < 100]
    for values in rows:
        expected = sum(brute_box(s.domain, values) * statement_ops(s.info.node) for s in scop.statements)
        assert estimate.evaluate(values) == expected, values


def run_condition(scop: Scop, condition: str, expression: str, rows: list[dict[str, int]], tmp: Path) -> list[str]:
    """Compile `condition` and `expression` over the parameters (ints, as in the source) and
    evaluate them on each row of values; one ``<0|1> <value>`` line per row."""
    params = scop.params
    decls = "\n".join(f"    int {p} = atoi(argv[a + {i}]); (void){p};" for i, p in enumerate(params))
    program = f"""#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {{
  for (int a = 1; a + {len(params)} <= argc; a += {len(params)}) {{
{decls}
    printf("%d %.0f\\n", ({condition}) ? 1 : 0, (double)({expression}));
  }}
  return 0;
}}
"""
    (tmp / "check.c").write_text(program)
    gcc = shutil.which("gcc") or shutil.which("cc")
    assert gcc is not None, "the tests need the system C compiler"
    subprocess.run(
        [gcc, "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(tmp / "check"), str(tmp / "check.c")],
        check=True,
        capture_output=True,
    )
    argv = [str(row[p]) for row in rows for p in params]
    out = subprocess.run([str(tmp / "check"), *argv], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def _rows(params: tuple[str, ...], bases: list[int]) -> list[dict[str, int]]:
    return [{p: b + 3 * i for i, p in enumerate(params)} for b in bases]


@pytest.mark.parametrize(
    ("name", "scop_of", "bases"),
    [
        ("gemm", lambda: kernel_scop("gemm.c"), [0, 1, 2, 40, 60, 70, 100000]),
        ("jacobi_2d", lambda: kernel_scop("jacobi_2d.c"), [0, 1, 2, 3, 20, 60, 5000]),
        ("lu", lambda: kernel_scop("lu.c"), [0, 1, 2, 3, *range(70, 81), 100000]),
        ("nussinov", lambda: kernel_scop("nussinov.c"), [0, 1, 2, 50, 60, 70]),
        ("strided", lambda: inline_scop(STRIDED), [0, 1, 2, 3, 4, 5, 6, 7, 50, 41, 1000, 10**6]),
        ("skewed", lambda: inline_scop(SKEWED), [0, 1, 2, 3, 4, 5, 6, 7, 50, 41, 1000, 10**5]),
        ("guarded", lambda: inline_scop(GUARDED), [0, 1, 2, 3, 4, 5, 6, 7, 50, 41, 1000, 10**5]),
    ],
)
def test_condition_compiled_by_gcc_agrees_with_python(name: str, scop_of, bases: list[int], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    scop = scop_of()
    p = decide(scop)
    assert p.decision == "runtime" and p.condition_c is not None, name
    rows = _rows(scop.params, bases)
    rows += [dict(reversed(list(r.items()))) for r in _rows(tuple(reversed(scop.params)), bases)]
    if set(scop.params) == {"n", "m"}:  # m is no size: hexplore assumes nothing of its sign
        rows += SIGNED_ROWS
    lines = run_condition(scop, p.condition_c, p.estimate.to_c(), rows, tmp_path)
    expected = []
    for row in rows:
        value = p.estimate.evaluate(row)
        expected.append(f"{int(value >= p.threshold)} {value}")
    assert lines == expected
    decisions = {line.split()[0] for line in lines}
    assert decisions == {"0", "1"}, f"{name}: the rows should fall on both sides of the threshold"


def test_condition_uses_the_source_names_of_parameters() -> None:
    scop = inline_scop(STRIDED)
    assert "range_" in str(scop.statements[0].domain)  # isl's name differs from the C name
    p = decide(scop)
    assert p.condition_c is not None
    assert "range_" not in p.condition_c and "(long long)range" in p.condition_c
    assert "range_" not in p.remark.message and "range" in p.remark.message
