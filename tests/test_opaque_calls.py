"""Calls of functions hexplore does not look into (issue 26): a call of a prototyped function
that is neither math nor inlined, as a statement or in an expression, stays a call (`OpaqueCall`):
its statement may read and write all of each array passed to it (only read through a `const`
pointer) and reads the numbers passed to it. The generated C and LLVM code call it in the original order relative to
what it may touch; GPU code cannot call it (`HostCall`). The callees here are marked
``__attribute__((noinline))``: hexplore then sees them as it would a function of another file."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.ad import differentiate
from core_compiler.compile import compile_file
from core_compiler.errors import HostOnly, NotDifferentiable
from core_compiler.pipeline import gpu_program
from core_compiler.runtime.cpu_variants import check_llvm_cpu
from core_compiler.runtime.differential import check_c
from explorer.commands import gpu_report
from tests.helpers import analyze, named, range_of

CALLS = """
static double seen;

__attribute__((noinline)) void smooth_all(int n, double *a) {
  for (int k = n - 1; k > 0; k--)
    a[k] = 0.5 * (a[k] + a[k - 1]);
}

__attribute__((noinline)) void record(int i, const double *a, double *log) {
  log[i] = a[i] + 0.25 * i;
}

__attribute__((noinline)) void note(double v) { seen += v; }

__attribute__((noinline)) double lookup(int n, const double *t, int i) { return t[(i * 7) % n] * 0.5; }

__attribute__((noinline)) double draw(double *state) {
  state[0] = state[0] * 1.1 + 0.3;
  return state[0];
}

void writes_arg(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++) {
    b[i] = a[i] + 1.0;
    smooth_all(n, a);
    b[i] += a[i];
  }
  for (int i = 0; i < n; i++)
    a[i] = 2.0 * a[i];
}

void reads_arg(int n, double a[n], double b[n], double log[n]) {
  for (int i = 0; i < n; i++)
    a[i] = a[i] * 3.0 + b[i];
  for (int i = 0; i < n; i++) {
    record(i, a, log);
    a[n - 1 - i] = b[i] + a[i];
  }
}

void numbers_only(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++) {
    note(a[i]);
    a[i] = a[i] * 0.5;
  }
  for (int i = 0; i < n; i++)
    b[i] = a[i] + 1.0;
}

void in_values(int n, double t[n], double s[n], double y[n]) {
  for (int i = 0; i < n; i++)
    y[i] = lookup(n, t, i) + y[i] * draw(s);
  for (int i = 0; i < n; i++)
    t[i] = y[i] * 2.0;
}
"""


@pytest.fixture(scope="module")
def calls_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("opaque") / "calls.c"
    path.write_text(CALLS)
    return str(path)


def test_a_call_is_an_opaque_statement() -> None:
    fa = analyze(CALLS)
    f = fa.function("writes_arg")
    assert f is not None and len(f.scops) == 1 and not named(list(f.remarks), "ImpureCall")
    scop = f.scops[0].scop
    [call] = [s for s in scop.statements if s.info.call is not None]
    assert call.info.text == "smooth_all(n, a)"
    assert [a.array for a in call.reads] == ["a"] and [a.array for a in call.writes] == ["a"]
    assert all(a.may and a.info.whole for a in (*call.reads, *call.writes))
    assert str(call.writes[0].relation).replace(" ", "") == "[n]->{S1[i]->a[hx_o0]:0<=i<n}"
    # the loop around the call stays sequential: S2 reads what the next S1 may write
    assert not f.scops[0].deps.loops[0].parallel
    [note] = named(list(f.remarks), "OpaqueCall")
    assert note.range == range_of(CALLS, "smooth_all(n, a)")
    assert note.message == (
        "`smooth_all(n, a)` calls a function whose body hexplore does not see: it is treated as reading and "
        "writing all of `a`, and runs in the original order relative to every statement that touches these; "
        "it may also read and write global variables these loops do not use and do I/O, so it also keeps its "
        "order among other such calls"
    )


def test_a_const_pointer_is_only_read() -> None:
    f = analyze(CALLS).function("reads_arg")
    assert f is not None and len(f.scops) == 1
    [call] = [s for s in f.scops[0].scop.statements if s.info.call is not None]
    assert sorted(a.array for a in call.reads) == ["a", "log"] and [a.array for a in call.writes] == ["log"]
    [note] = named(list(f.remarks), "OpaqueCall")
    assert "reading and writing all of `log` and only reading all of `a`" in note.message
    first, second = f.scops[0].deps.loops
    assert first.parallel and not second.parallel


def test_calls_with_hidden_effects_keep_their_order() -> None:
    """`note` touches only a global: no array orders its instances, the hidden state does."""
    f = analyze(CALLS).function("numbers_only")
    assert f is not None and len(f.scops) == 1
    deps = f.scops[0].deps
    assert [str(d) for d in deps.deps if d.array == "global state"] == ["output S0 -> S0 on global state"]
    assert not deps.loops[0].parallel and deps.loops[1].parallel


def test_a_call_in_an_expression_is_kept_in_its_statement() -> None:
    f = analyze(CALLS).function("in_values")
    assert f is not None and len(f.scops) == 1
    s0 = f.scops[0].scop.statements[0]
    assert [c.name for c in s0.info.opaque_calls] == ["lookup", "draw"]
    assert [(a.array, a.may) for a in s0.writes] == [("y", False), ("s", True)]
    assert sorted(a.array for a in s0.reads if a.may) == ["s", "t"]
    first, second = f.scops[0].deps.loops
    assert not first.parallel and second.parallel
    lookup, draw = named(list(f.remarks), "OpaqueCall")
    assert lookup.message.startswith("`lookup(n, t, i)` calls a function whose body hexplore does not see: it is "
                                     "treated as only reading all of `t`, and runs in the original order")
    assert "reading and writing all of `s`" in draw.message


def test_a_pure_callee_runs_in_parallel() -> None:
    src = """
__attribute__((pure)) double peek(int i, const double *a);
void f(int n, double *a, double *b) {
  for (int i = 0; i < n; i++) {
    peek(i, a);
    b[i] = a[i] + 1.0;
  }
}
"""
    f = analyze(src).function("f")
    assert f is not None and len(f.scops) == 1
    assert f.scops[0].deps.loops[0].parallel
    [note] = named(list(f.remarks), "OpaqueCall")
    assert "only reading all of `a`" in note.message and "declared `pure`" in note.message
    src2 = "__attribute__((const)) double w(int i);\nvoid g(int n, double *z) { for (int i = 0; i < n; i++) z[i] = w(i); }"
    g = analyze(src2).function("g")
    assert g is not None and g.scops[0].deps.loops[0].parallel
    [note] = named(list(g.remarks), "OpaqueCall")
    assert note.message == (
        "`w(i)` calls a function whose body hexplore does not see: it is treated as touching no array of these "
        "loops; `w` is declared `pure`, so it is assumed to write no global variable and do no I/O"
    )


def test_a_device_function_stays_refused_in_a_kernel() -> None:
    """A CUDA kernel's callee is a `__device__` function: host code cannot call it, so the kernel
    is not modeled (as before), rather than checked for races around an opaque call."""
    src = """
__device__ __noinline__ float helper(float *p, int i) { p[i] *= 2.0f; return p[i]; }
__global__ void kern(int n, float *a, float *b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = helper(a, i);
}
"""
    fa = analyze(src, "k.cu")
    assert not named(fa.all_remarks(), "OpaqueCall") and not named(fa.all_remarks(), "DataRace")
    assert named(fa.all_remarks(), "CudaKernelNotModeled")


REFUSED = """
#include <stdio.h>
int N;
double hist[8];
void tally(int m, const double *a);
__attribute__((pure)) double peek(int m, const double *a);
void bound(double *a) {
  for (int i = 0; i < N; i++) { a[i] += 1.0; tally(i, a); }
}
void global_array(int n, double *a) {
  for (int i = 0; i < n; i++) { a[i] += hist[i % 8]; peek(i, a); }
}
void counter(int n, double *a) {
  for (int i = 0; i < n; i++) tally(i, (double *)&i);
}
void bytes(int n, double A[n][n]) {
  for (int i = 0; i < n; i++) tally(i, (double *)((char *)A[i] + 8));
}
void io(int n, double *a, char *name) {
  for (int i = 0; i < n; i++) printf("%s %f", name, a[i]);
}
void log_to(int n, double *a, FILE *f) {
  for (int i = 0; i < n; i++) fprintf(f, "%f", a[i]);
}
void legacy();
void old_style(int n, double *a) {
  for (int i = 0; i < n; i++) legacy(a);
}
void gather(int n, double *a, int *k) {
  for (int i = 0; i < n; i++) a[i] = peek(i, a + k[i]);
}
"""


@pytest.mark.parametrize(
    "function, needle, nth, says",
    [
        ("bound", "tally(i, a)", 0, "may read or change the global variable `N`, which these loops also use"),
        ("global_array", "peek(i, a)", 0, "may read or change the global variable `hist`"),
        ("counter", "(double *)&i", 0, "an address in one at affine subscripts (`&a[i]`, `a + i`) or the address of a local number (`&x`), and `(double *)&i` is none of these"),
        ("bytes", "(double *)((char *)A[i] + 8)", 0, "and `(double *)((char *)A[i] + 8)` is none of these"),
        ("io", "name", 1, "`name` is an address passed to `printf`'s `...`: hexplore cannot tell which elements it reads or writes"),
        ("gather", "a + k[i]", 0, "and `a + k[i]` is none of these"),
        ("log_to", "fprintf(f, \"%f\", a[i])", 0, "`fprintf` takes a `FILE *` (parameter 1), so hexplore cannot tell what the call reads or writes"),
        ("old_style", "legacy(a)", 0, "`legacy` is declared without a prototype (`legacy()`)"),
    ],
)
def test_what_stays_refused(function: str, needle: str, nth: int, says: str) -> None:
    f = analyze(REFUSED).function(function)
    assert f is not None and not f.scops
    [refused] = named(list(f.remarks), "ImpureCall")
    assert refused.range == range_of(REFUSED, needle, nth=nth)
    assert says in refused.message


def test_no_gpu_code_calls_a_host_function(calls_file: str) -> None:
    fa = analyze(CALLS, calls_file)
    result = compile_file(fa, "opencl", always_offload=True, text=CALLS)
    host = named(list(result.remarks), "HostCall")
    calls = ("smooth_all(n, a)", "record(i, a, log)", "note(a[i])", "lookup(n, t, i)")
    assert [r.range.line for r in host] == [range_of(CALLS, s).line for s in calls]
    assert "kept on CPU: the loops call `smooth_all`" in host[0].message
    assert not [name for name in result.files if "writes_arg" in name or "reads_arg" in name]
    f = fa.function("writes_arg")
    assert f is not None
    with pytest.raises(HostOnly, match="call `smooth_all`"):
        gpu_program(f.scops[0])
    report = gpu_report(analyze(CALLS, calls_file))  # `hexplore analyze --gpu`
    assert "writes_arg#scop0: no GPU code\n" in report and "[Missed:HostCall]" in report


def test_no_derivative_through_an_opaque_call(calls_file: str) -> None:
    with pytest.raises(NotDifferentiable, match="it calls `smooth_all`, whose body hexplore does not see") as e:
        differentiate(calls_file, "writes_arg", ("a",))
    assert [r.name for r in e.value.remarks] == ["ImpureCall"]


ROWS = """
__attribute__((noinline)) void scale_row(int m, double *row, double s) {
  for (int j = 0; j < m; j++)
    row[j] *= s;
}
__attribute__((noinline)) __attribute__((pure)) double row_sum(int m, const double *row) {
  double t = 0;
  for (int j = 0; j < m; j++)
    t += row[j];
  return t;
}
void rows(int n, int m, double A[n][m], double b[n]) {
  for (int i = 0; i < n; i++) {
    b[i] = row_sum(m, A[i]);
    scale_row(m, A[i], 1.0 / (1.0 + b[i] * b[i]));
    A[i][0] += b[i];
  }
}
void sums(int n, int m, double A[n][m], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = row_sum(m, A[i]) + b[i];
  for (int i = 1; i < n; i++)
    A[i][0] = A[i - 1][1] + row_sum(m, A[i - 1]);
}
"""


def test_a_row_argument_is_all_of_that_row() -> None:
    fa = analyze(ROWS)
    f = fa.function("rows")
    assert f is not None and len(f.scops) == 1
    s1 = f.scops[0].scop.statements[1]
    assert str(s1.writes[0].relation).replace(" ", "") == "[m,n]->{S1[i]->A[i,hx_o1]:0<=i<n}"
    [_, scale] = named(list(f.remarks), "OpaqueCall")
    assert "reading and writing all of `A[i]`" in scale.message
    g = fa.function("sums")
    assert g is not None
    first, second = g.scops[0].deps.loops  # `row_sum` is pure: rows apart do not depend on each other
    assert first.parallel and not second.parallel


@pytest.mark.long
@pytest.mark.parametrize("function", ["rows", "sums"])
def test_rows_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "rows.c"
    path.write_text(ROWS)
    for sizes in ({"n": 37, "m": 5}, {"n": 1, "m": 1}, {"n": 0, "m": 0}, {"n": 2, "m": 33}):
        c = check_c(str(path), function, sizes, openmp=True)
        assert c.ok, f"{sizes}\n{c.comparison.report()}"
        cpu = check_llvm_cpu(str(path), function, sizes, threads=2)
        assert cpu.ok, f"{sizes}\n{cpu.report()}"


# TSVC's loops: each timing iteration ends with a call of `dummy` (defined in another file) that is
# passed every global array, so that the compiler cannot drop the loops
TSVC = """
#define LEN 64
#define LEN2 16
float a[LEN], b[LEN], c[LEN], d[LEN], e[LEN];
float aa[LEN2][LEN2], bb[LEN2][LEN2], cc[LEN2][LEN2];
__attribute__((noinline)) int dummy(float a[LEN], float b[LEN], float c[LEN], float d[LEN], float e[LEN],
                                    float aa[LEN2][LEN2], float bb[LEN2][LEN2], float cc[LEN2][LEN2], float s) {
  a[0] += 0.5f * s + b[1];
  return 0;
}
void s000(int ntimes) {
  for (int nl = 0; nl < ntimes; nl++) {
    for (int i = 0; i < LEN; i++)
      a[i] = b[i] + 1.0f;
    dummy(a, b, c, d, e, aa, bb, cc, 1.f);
  }
}
void s1115(int ntimes) {
  for (int nl = 0; nl < ntimes; nl++) {
    for (int i = 0; i < LEN2; i++)
      for (int j = 0; j < LEN2; j++)
        aa[i][j] = aa[i][j] * cc[j][i] + bb[i][j];
    dummy(a, b, c, d, e, aa, bb, cc, 0.f);
  }
}
void not_passed(int ntimes) {
  for (int nl = 0; nl < ntimes; nl++) {
    for (int i = 0; i < LEN; i++)
      a[i] = b[i] * 2.0f;
    dummy(b, b, c, d, e, aa, bb, cc, 0.f);
  }
}
"""


def test_global_arrays_passed_to_the_call_are_modeled() -> None:
    fa = analyze(TSVC)
    for name in ("s000", "s1115"):
        f = fa.function(name)
        assert f is not None and len(f.scops) == 1, name
        timing, *inner = f.scops[0].deps.loops
        assert not timing.parallel and inner[0].parallel, name
    f = fa.function("not_passed")  # the loop over `nl` is not modeled, the one over `i` inside it is
    assert f is not None and [[lp.var for lp in sa.scop.loops] for sa in f.scops] == [["i"]]
    [refused] = named(list(f.remarks), "ImpureCall")
    assert refused.message.startswith("`dummy` may read or change the global variable `a`, which these loops also use")


@pytest.mark.long
@pytest.mark.parametrize("function", ["s000", "s1115"])
def test_tsvc_loops_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "tsvc.c"
    path.write_text(TSVC)
    for ntimes in (3, 1, 0):
        c = check_c(str(path), function, {"ntimes": ntimes}, openmp=True)
        assert c.ok, f"ntimes={ntimes}\n{c.comparison.report()}"
        cpu = check_llvm_cpu(str(path), function, {"ntimes": ntimes}, threads=2)
        assert cpu.ok, f"ntimes={ntimes}\n{cpu.report()}"


def _matches_everywhere(path: str, function: str, sizes: list[int]) -> None:
    """The generated C (with OpenMP, 2 threads) and the LLVM CPU code match the original."""
    for n in sizes:
        c = check_c(path, function, {"n": n}, openmp=True)
        assert c.ok, f"n={n}\n{c.comparison.report()}"
        cpu = check_llvm_cpu(path, function, {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"


@pytest.mark.parametrize("function", ["writes_arg", "in_values"])
def test_calls_run_and_match(calls_file: str, function: str) -> None:
    _matches_everywhere(calls_file, function, [37])


@pytest.mark.long
@pytest.mark.parametrize("function", ["writes_arg", "reads_arg", "numbers_only", "in_values"])
def test_calls_run_and_match_at_every_size(calls_file: str, function: str) -> None:
    _matches_everywhere(calls_file, function, [37, 1, 0, 33])


@pytest.mark.long
def test_a_static_helper_writing_a_global_runs(tmp_path: Path) -> None:
    """The coverage corpus's `sum_into_global`: `accumulate` is `static` and adds to a global."""
    corpus = Path(__file__).parent / "coverage" / "helpers.c"
    _matches_everywhere(str(corpus), "sum_into_global", [37, 1, 0])
