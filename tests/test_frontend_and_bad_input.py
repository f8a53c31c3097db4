"""Front end on real headers and CUDA; bad input gets clear answers, never tracebacks or hangs."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from core_compiler.analysis import AnalysisOptions, analyze_file
from core_compiler.frontend import ParseOptions, ir, run_frontend
from tests.helpers import named, range_of

HEADERS = """#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
void f(int n, double A[n]) { for (int i = 0; i < n; i++) A[i] = sqrt(fabs(A[i])) + DBL_EPSILON; }
"""


def test_system_headers_parse_without_errors() -> None:
    res = run_frontend("h.c", HEADERS)
    assert res.remarks == ()
    assert [f.name for f in res.functions] == ["f"]


def test_vla_fixed_pointer_and_restrict_parameters() -> None:
    src = "#define N 8\nvoid f(int n, int m, double A[n][m], float B[N][N+1], double *restrict p, double (*Q)[m]) {}"
    (fn,) = run_frontend("t.c", src).functions
    a, b, p, q = fn.params[2:]
    assert isinstance(a.type, ir.Array) and [str(d) for d in a.type.dims] == ["n", "m"]
    assert isinstance(b.type, ir.Array) and [str(d) for d in b.type.dims] == ["8", "9"]
    assert isinstance(b.type.elem, ir.Scalar) and b.type.elem.name == "float"
    assert isinstance(p.type, ir.Pointer) and p.restrict
    assert isinstance(q.type, ir.Pointer) and isinstance(q.type.pointee, ir.Array)


def test_defines_and_include_dirs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "sizes.h").write_text("#define LEN 17\n")
    src = '#include "sizes.h"\nvoid f(double x[LEN]) { for (int i = 0; i < LEN * K; i++) x[i] = 0; }'
    opts = ParseOptions(include_dirs=(str(tmp_path),), defines=("K=1",))
    fa = analyze_file(str(tmp_path / "t.c"), src, opts)
    (sa,) = fa.functions[0].scops
    assert "i <= 16" in str(sa.scop.statements[0].domain)


def test_cuda_file_parses_kernels_and_host_code() -> None:
    src = """
__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __shared__ float tile[256];
  tile[threadIdx.x] = x[i];
  __syncthreads();
  if (i < n) { y[i] = a * tile[threadIdx.x] + y[i]; atomicAdd(&y[0], 1.0f); }
}
void host(int n, float *x, float *y) {
  for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
}
"""
    res = run_frontend("k.cu", src)
    assert res.remarks == (), [r.message for r in res.remarks]
    kernel, host = res.functions
    assert kernel.is_cuda_kernel and not host.is_cuda_kernel
    fa = analyze_file("k.cu", src)
    assert len(fa.function("host").scops) == 1  # type: ignore[union-attr]


def test_syntax_errors_keep_other_functions_analysed() -> None:
    src = """void broken(int n, double *x) {
  for (int i = 0; i < n; i++) x[i] = ;
}
void good(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = 2 * x[i]; }
"""
    fa = analyze_file("e.c", src)
    (err,) = named(list(fa.remarks), "SyntaxError")
    assert (err.range.line, err.range.col) == (2, 38)
    assert "expected expression" in err.message
    assert named(list(fa.function("broken").remarks), "FunctionHasErrors")  # type: ignore[union-attr]
    assert len(fa.function("good").scops) == 1  # type: ignore[union-attr]


def test_unbalanced_braces_and_garbage_do_not_raise() -> None:
    for src in ["void f( {", "int x = ;;; }}}", "for (;;)", "\x00\x01binary", "void f(int n) { while (", ""]:
        fa = analyze_file("g.c", src)
        assert isinstance(fa.all_remarks(), list)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True, text=True, timeout=60)


def test_cli_missing_file_one_line_exit_2() -> None:
    res = _cli("analyze", "does-not-exist.c")
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0
    assert "does-not-exist.c" in res.stderr and "Traceback" not in res.stderr


def test_cli_unknown_function_exit_2() -> None:
    res = _cli("analyze", "examples/demo.c", "--function", "nope")
    assert res.returncode == 2 and "nope" in res.stderr


def test_cli_json_schema_top_level() -> None:
    res = _cli("analyze", "examples/demo.c", "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "hexplore-analyze/1" and doc["file"] == "examples/demo.c"
    fn = {f["name"]: f for f in doc["functions"]}
    scop = fn["matmul"]["scops"][0]
    assert {"range", "parameters", "statements", "loops", "dependences", "reductions"} <= set(scop)
    assert [lp["parallel"] for lp in scop["loops"]] == [True, True, False]
    r = fn["scatter_add"]["remarks"][0]
    assert {"kind", "pass", "name", "message", "range"} <= set(r) and r["name"] == "IndirectAccess"


@pytest.mark.slow  # spends isl's whole budget
def test_pathological_scop_hits_the_budget_quickly() -> None:
    params = [f"p{k}" for k in range(12)]
    bounds = " + ".join(f"{997 * (k + 1)}*{p}" for k, p in enumerate(params))
    loops = "".join(f"for (int i{d} = {d}*p{d % 12}; i{d} < {bounds} - {7919 * d}*i{max(d - 1, 0)}; i{d}++) " for d in range(10))
    sub = " + ".join(f"{31 * d + 1}*i{d}" for d in range(10))
    src = f"void f({', '.join('int ' + p for p in params)}, double *A, double *B) {{ {loops} A[{sub}] = B[{sub} + 1] + A[{sub} - 3]; }}"
    start = time.perf_counter()
    fa = analyze_file("p.c", src, options=AnalysisOptions(max_isl_operations=200_000))
    elapsed = time.perf_counter() - start
    assert elapsed < 20
    (budget,) = named(fa.all_remarks(), "AnalysisBudgetExceeded")
    assert budget.range == range_of(src, src[src.index("for") : src.index(";", src.index("A["))], "p.c")


def test_a_chained_assignment_is_two_assignments_right_to_left() -> None:
    """``a1 = a5 = k;`` (PolyBench's deriche) sets ``a5`` first, then ``a1`` from it: the
    conversion to ``int`` on the way is kept."""
    src = "void f(int n, double *y, double k) {\n  double a1; int a5;\n  a1 = a5 = k;\n  for (int i = 0; i < n; i++) y[i] = a1 + a5;\n}\n"
    (fn,) = run_frontend("t.c", src).functions
    chain = [s for s in fn.body if isinstance(s, ir.Assign)]
    assert [(str(s.target), str(s.value)) for s in chain] == [("a5", "k"), ("a1", "a5")]
    (fa,) = analyze_file("t.c", src).functions
    assert len(fa.scops) == 1 and len(fa.scops[0].scop.statements) == 3


# ----------------------------------------------------------------------------- hexplore compile

BROKEN = "void f(int n, double *a)\n{\n  for (int i = 0; i < n; i++)\n    a[i] = a[i] * 2.0\n}\n"
INDIRECT = "void g(int n, int *restrict h, const int *restrict p)\n{\n  for (int i = 0; i < n; i++)\n    h[p[i]] += 1;\n}\n"
SMALL = "void s(double x[8][8])\n{\n  for (int i = 0; i < 8; i++)\n    for (int j = 0; j < 8; j++)\n      x[i][j] = 2.0 * x[i][j];\n}\n"
MATMUL = "void mm(int n, double C[n][n], double A[n][n])\n{\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n      C[i][j] += A[j][i];\n}\n"


def _main(tmp_path, capsys, source: str, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    from tui.cli import main

    path = tmp_path / "input.c"
    path.write_text(source)
    try:
        code = main([args[0], str(path), *args[1:]])
    except SystemExit as e:  # argparse
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err.replace(str(path), "input.c")


def test_compile_of_a_file_with_a_syntax_error_says_it_and_exits_1(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, err = _main(tmp_path, capsys, BROKEN, "compile")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "input.c:4:22: error: expected ';' after expression",
        "hexplore: error: input.c has 1 error(s): nothing generated",
    ]


def test_compile_that_generates_nothing_says_why_and_exits_1(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    for target in ("cuda", "c"):
        code, out, err = _main(tmp_path, capsys, INDIRECT, "compile", "--target", target)
        assert (code, out) == (1, "")
        assert "[Missed:IndirectAccess]" in err
        assert err.splitlines()[-1] == "hexplore: nothing to generate: `g` has no loop nest hexplore models (the reasons above)"
    code, out, err = _main(tmp_path, capsys, SMALL, "compile", "--target", "opencl")
    assert (code, out) == (1, "") and "[Missed:KeptOnCpu]" in err
    assert err.splitlines()[-1].startswith("hexplore: nothing to generate: every loop nest of `s` stays on the CPU")
    code, out, err = _main(tmp_path, capsys, SMALL, "compile", "--target", "opencl", "--always-offload")
    assert code == 0 and "__kernel void kernel0(" in out


@pytest.mark.parametrize(
    "args,message",
    [
        (("compile", "--tile-size", "0"), "argument --tile-size: expected a positive integer, got '0'"),
        (("compile", "--tile-size", "-4"), "argument --tile-size: expected a positive integer, got '-4'"),
        (("compile", "--tile-size", "many"), "argument --tile-size: expected a positive integer, got 'many'"),
        (("compile", "--max-shared-memory", "-1"), "argument --max-shared-memory: expected an integer of 0 or more, got '-1'"),
        (("compile", "--target", "tpu"), "argument --target: invalid choice: 'tpu'"),
        (("run", "--repeat", "0"), "argument --repeat: expected a positive integer, got '0'"),
    ],
)
def test_bad_arguments_end_in_one_line_exit_2(tmp_path, capsys, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    code, out, err = _main(tmp_path, capsys, MATMUL, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert err.startswith(f"hexplore {args[0]}: error: ")


def test_every_face_defaults_sizes_alike(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from explorer import commands
    from explorer.running import DEFAULT_SIZE
    from tui.model import size_params

    source = "void f(int n, int m, double A[n][40], double x[n])\n{\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < m; j++)\n      A[i][j] = x[i];\n}\n"
    path = tmp_path / "f.c"
    path.write_text(source)
    parse = ParseOptions()
    run = commands.plan_run(str(path), source, parse, "f", []).sizes
    req = commands.grad_request(str(path), source, parse, "f", "x", None, "reverse")
    grad, warnings = commands.grad_params(req, ["n=5"])
    assert run == {"n": DEFAULT_SIZE // 2, "m": DEFAULT_SIZE // 2} and warnings == ()  # halved until rows of 40 hold m
    assert grad == {"n": 5, "m": DEFAULT_SIZE // 2}
    assert size_params(analyze_file(str(path), source).functions[0]) == run  # the TUI's (and the editor's)
