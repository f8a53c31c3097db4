"""The GPU cost report and the decision it drives: counts checked exactly where they can be known
(points of sets against isl's enumeration, launches against the host AST executed, threads against
the grids the host code computes, bytes of a gemm by hand, coalescing of ``A[i][j]`` against
``A[j][i]``), the time formulas as C compiled by gcc against Python, and the decisions: a nest
whose GPU code would launch a kernel per time step of a small loop stays on the CPU, with the
numbers; `--always-offload` still generates GPU code."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import islpy as isl
import pytest

from core_compiler.analysis import analyze_file
from core_compiler.codegen.ast_print import call_parts, evaluate, walk_host
from core_compiler.compile import compile_file
from core_compiler.pipeline import GpuOptions, gpu_program
from core_compiler.remarks import RemarkKind
from core_compiler.scop.affine import isl_name
from core_compiler.transform.counting import count, sum_over
from core_compiler.transform.gpu_cost import (
    GpuCost,
    faster_on_gpu_c,
    gpu_cost,
    offload_decision,
    parse_ptxas,
    render_cost,
)
from core_compiler.transform.gpu_mapping import GpuProgram, MappingOptions
from core_compiler.transform.memory import MemoryOptions
from tests.helpers import polybench_analysis

POLYBENCH = Path(__file__).resolve().parent / "polybench"
PARAM = isl.dim_type.param


def inline_gpu(src: str, function: str = "f", options: GpuOptions | None = None) -> GpuProgram:
    fa = analyze_file("t.c", text=src, only=function)
    assert fa.functions and fa.functions[0].scops, fa.all_remarks()
    return gpu_program(fa.functions[0].scops[0], options)


def polybench_gpu(name: str) -> GpuProgram:
    (sa,) = polybench_analysis(name).functions[0].scops
    return gpu_program(sa)


def isl_values(gpu: GpuProgram, sizes: dict[str, int]) -> dict[str, int]:
    return {isl_name(p): v for p, v in sizes.items()}


# ------------------------------------------------------------------------------ counting points


def enumerated(s: isl.Set, values: dict[str, int]) -> int:
    for name, v in values.items():
        s = s.fix_val(PARAM, s.find_dim_by_name(PARAM, name), isl.Val.int_from_si(s.get_ctx(), v))
    return int(s.count_val().to_python())


@pytest.mark.parametrize(
    ("text", "exact", "rows"),
    [
        ("[n] -> { [i, j] : 0 <= j < i < n }", True, [{"n": v} for v in (0, 1, 2, 7, 30)]),
        ("[n] -> { [i, j, k] : 0 <= i < n and 0 <= j < i and 0 <= k < j }", True, [{"n": v} for v in (0, 3, 13)]),
        ("[n, m] -> { [i, j] : 0 <= i < n and 0 <= j < m and j <= i + 2 }", True, [{"n": a, "m": b} for a in (0, 3, 7) for b in (0, 2, 9)]),
        ("[n] -> { [i] : 0 <= 2i <= n }", True, [{"n": v} for v in (0, 1, 2, 7, 8)]),
        ("[n] -> { [g] : exists x: 32g <= x <= 32g + 31 and 0 <= x < n }", True, [{"n": v} for v in (1, 31, 32, 33, 100)]),
        ("[n] -> { [i, j] : 0 <= i < n and 0 <= j < n and (i + j) % 3 = 0 }", True, [{"n": v} for v in (1, 5, 9, 20)]),
        ("[n] -> { [i, j, k] : 0 <= i < n and i <= j < n and 0 <= k <= j and (i + k) % 2 = 0 }", True, [{"n": v} for v in (1, 5, 9, 16)]),
    ],
)
def test_counts_equal_isl_enumeration(text: str, exact: bool, rows: list[dict[str, int]]) -> None:
    s = isl.Set(text)
    c = count(s)
    assert c.exact is exact
    for values in rows:
        assert c.evaluate(values) == enumerated(s, values), values


def test_triangle_count_reads_as_a_polynomial() -> None:
    c = count(isl.Set("[n] -> { [i, j] : 0 <= j < i < n }"))
    assert c.at({"n": 100}).text() == "1/2*n*n - 1/2*n"


def test_sum_of_a_polynomial_over_a_set() -> None:
    """sum(i for 0 <= i < n) = n(n-1)/2, over a set whose dimension is named i."""
    from core_compiler.transform.counting import Poly

    c = sum_over(isl.Set("[n] -> { [i] : 0 <= i < n }"), Poly.var("i"))
    assert [c.evaluate({"n": n}) for n in (0, 1, 5, 10)] == [0, 0, 10, 45]


# ------------------------------------------------------------------------------ launches

TIME_LOOP = """#define T 100000
#define N 64
void f(double A[N], double B[N]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++)
      B[i] = 0.33 * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i < N - 1; i++)
      A[i] = 0.33 * (B[i - 1] + B[i] + B[i + 1]);
  }
}
"""


def launched_by_host_code(gpu: GpuProgram, values: dict[str, int]) -> Counter[str]:
    seen: Counter[str] = Counter()
    walk_host(gpu.host_ast, values, lambda e, env: seen.update([call_parts(e)[0]]))
    return seen


def test_time_loop_launches_each_kernel_once_per_step() -> None:
    gpu = inline_gpu(TIME_LOOP)
    cost = gpu_cost(gpu)
    assert [k.launches.evaluate({}) for k in cost.kernels] == [100000, 100000]
    assert [k.host_loops for k in cost.kernels] == [("t",), ("t",)]


@pytest.mark.parametrize("name", ["cholesky", "lu", "jacobi-1d", "trisolv"])
def test_launches_equal_the_host_code_executed(name: str) -> None:
    """cholesky at n = 10: one launch of each kernel per iteration of its host loop, as the
    generated host code runs them (counted by executing the host AST)."""
    gpu = polybench_gpu(name)
    cost = gpu_cost(gpu)
    for n in (1, 2, 10, 17):
        values = {p: n for p in gpu.scop.params}
        seen = launched_by_host_code(gpu, values)
        assert {k.name: int(k.launches.evaluate(values)) for k in cost.kernels} == {k.name: seen[k.name] for k in cost.kernels}, n


def test_cholesky_at_10_launches_each_kernel_where_it_has_work() -> None:
    """kernel0 at each of the 10 steps; kernel1 and kernel2 have nothing to do at the last one and
    the last two (their launches are guarded: `hx_when`), and the model counts what the host code
    launches."""
    gpu = polybench_gpu("cholesky")
    cost = gpu_cost(gpu)
    inside = [k for k in cost.kernels if k.host_loops]
    assert inside, "cholesky's kernels run inside its outer loop"
    assert [k.launches.evaluate({"n": 10}) for k in inside] == [10, 9, 8]
    assert [k.launches.at({"n": 10}).text() for k in inside] == ["n", "n - 1", "n - 2"]
    walked: Counter[str] = Counter()
    walk_host(gpu.host_ast, {"n": 10}, lambda e, env: walked.update([call_parts(e)[0]]))
    assert walked == {k.name: k.launches.evaluate({"n": 10}) for k in inside}


# ------------------------------------------------------------------------------ threads


def grid_threads_by_host_code(gpu: GpuProgram, values: dict[str, int]) -> Counter[str]:
    """Threads each kernel is launched with, over all launches, from the grid bounds the host
    code computes (only launches where the grid is not empty)."""
    kernels = {k.name: k for k in gpu.kernels}
    threads: Counter[str] = Counter()

    def on_user(e: isl.AstExpr, env: dict[str, int]) -> None:
        name, args = call_parts(e)
        k = kernels[name]
        scope = {**env, **{h: evaluate(a, env) for h, a in zip(k.host_params, args, strict=True)}}
        blocks = 1
        for lo, hi in zip(k.grid_min, k.grid_max, strict=True):
            blocks *= max(evaluate(hi, scope) - evaluate(lo, scope) + 1, 0)
        per_block = 1
        for b in k.block:
            per_block *= b
        threads[name] += blocks * per_block if k.parallel else 1

    walk_host(gpu.host_ast, values, on_user)
    return threads


@pytest.mark.parametrize(("name", "sizes"), [("gemm", {"ni": 40, "nj": 50, "nk": 30}), ("jacobi-2d", {"n": 70, "tsteps": 3}), ("syrk", {"n": 45, "m": 33})])
def test_threads_equal_the_grids_the_host_code_launches(name: str, sizes: dict[str, int]) -> None:
    gpu = polybench_gpu(name)
    cost = gpu_cost(gpu)
    values = isl_values(gpu, sizes)
    expected = grid_threads_by_host_code(gpu, sizes)
    assert {k.name: int(k.threads.evaluate(values)) for k in cost.kernels} == dict(expected)


def test_gemm_grid_at_40_by_50() -> None:
    """Register tiles of 32x64, blocks of 16x8 threads: ceil(40/32) * ceil(50/64) = 2 blocks of 128."""
    cost = gpu_cost(polybench_gpu("gemm"))
    (k,) = cost.kernels
    assert (k.block_threads, k.threads.evaluate({"ni": 40, "nj": 50, "nk": 30})) == (128, 2 * 128)


# ------------------------------------------------------------------------------ bytes

NO_COPIES = GpuOptions(mapping=MappingOptions(memory=MemoryOptions(shared=False, private=False)))


def test_gemm_global_bytes_by_hand() -> None:
    """Without promotion: C *= beta reads and writes C once per (i, j); C += alpha*A*B reads C, A
    and B and writes C once per (i, j, k); 8 bytes each."""
    cost = gpu_cost(gpu_program(_gemm(), NO_COPIES))
    (k,) = cost.kernels
    ni, nj, nk = 40, 50, 30
    at = {"ni": ni, "nj": nj, "nk": nk}
    assert k.global_bytes(write=False).evaluate(at) == 8 * (ni * nj + 3 * ni * nj * nk)
    assert k.global_bytes(write=True).evaluate(at) == 8 * (ni * nj + ni * nj * nk)
    assert cost.copied_in.evaluate(at) == 8 * (ni * nj + ni * nk + nk * nj)  # C, A, B at the macro sizes
    assert cost.copied_out.evaluate(at) == 8 * ni * nj


def test_promoted_arrays_cost_their_copies_not_their_accesses() -> None:
    cost = gpu_cost(gpu_program(_gemm()))
    (k,) = cost.kernels
    at = {"ni": 40, "nj": 50, "nk": 30}
    assert {a.array for a in k.accesses if a.place == "shared"} == {"A", "B"}
    assert all(a.bytes.evaluate(at) == 0 for a in k.accesses if a.place != "global")
    # A's 32x16 tiles and B's 16x64, one per tile executed
    assert k.copies_read.evaluate(at) > 0 and k.shared_bytes == 2 * (32 * 16 + 16 * 64) * 8  # two of each (double-buffered)


def _gemm():  # type: ignore[no-untyped-def]
    (sa,) = polybench_analysis("gemm", ("NI=40", "NJ=50", "NK=30")).functions[0].scops
    return sa


# ------------------------------------------------------------------------------ coalescing

COPY = """void f(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = A[%s] + C[i][0];
}
"""


@pytest.mark.parametrize(("subscript", "coalesced"), [("i][j", True), ("j][i", False)])
def test_coalescing_follows_threadIdx_x(subscript: str, coalesced: bool) -> None:
    """j, the inner loop, is on threadIdx.x: A[i][j] moves by one element from thread to thread,
    A[j][i] by a row; C[i][0] is the same element for all (a broadcast), B[i][j] is written in
    order."""
    (k,) = gpu_cost(inline_gpu(COPY % subscript, options=NO_COPIES)).kernels
    flags = {(a.array, a.is_write): a.coalesced for a in k.accesses}
    assert flags == {("A", False): coalesced, ("C", False): True, ("B", True): True}
    assert k.global_bytes(write=False).evaluate({"n": 10}) == 2 * 8 * 100
    assert k.coalesced_bytes(write=False).evaluate({"n": 10}) == (2 if coalesced else 1) * 8 * 100


# ------------------------------------------------------------------------------ the decision


def test_a_kernel_per_time_step_of_a_small_loop_stays_on_the_cpu() -> None:
    fa = analyze_file("t.c", text=TIME_LOOP, only="f")
    result = compile_file(fa, "cuda")
    (r,) = [r for r in result.remarks if r.pass_name == "profitability"]
    assert (r.kind, r.name) == (RemarkKind.MISSED, "KeptOnCpu")
    assert "launch 200,000 kernels per call (kernels 0, 1 once per iteration of `t`)" in r.message
    assert "on the GPU (H100) against" in r.message and "on one CPU core" in r.message
    assert r.args["gpu_seconds"] > r.args["cpu_seconds"] > 0
    assert not result.files


def test_always_offload_still_generates_gpu_code() -> None:
    fa = analyze_file("t.c", text=TIME_LOOP, only="f")
    result = compile_file(fa, "cuda", always_offload=True)
    assert any(name.endswith("_host.cu") for name in result.files)
    assert "if (!(" not in next(t for n, t in result.files.items() if n.endswith("_host.cu"))


def test_a_large_parallel_nest_is_offloaded_with_both_estimates() -> None:
    src = TIME_LOOP.replace("#define T 100000\n#define N 64", "#define T 2\n#define N 4000000")
    gpu = inline_gpu(src)
    p = offload_decision(gpu)
    assert p.decision == "offload", p.remark.message
    assert p.gpu_seconds is not None and p.cpu_seconds is not None and p.gpu_seconds < p.cpu_seconds
    assert "on the GPU against" in p.remark.message


# ------------------------------------------------------------------------------ the run-time check


def test_run_time_condition_compiled_by_gcc_agrees_with_python(tmp_path: Path) -> None:
    gpu = polybench_gpu("jacobi-1d")
    cost = gpu_cost(gpu)
    rows = [{"n": n, "tsteps": t} for n in (3, 100, 2000, 30000, 400000) for t in (1, 20, 500)]
    lines = _run(cost, rows, tmp_path)
    for row, line in zip(rows, lines, strict=True):
        at = cost.values(row)
        gpu_s, cpu_s = cost.gpu_time().at(at), cost.cpu_time().at(at)
        got, gpu_c, cpu_c = line.split()
        assert int(got) == (gpu_s < cpu_s), row
        assert float(gpu_c) == pytest.approx(gpu_s, rel=1e-9) and float(cpu_c) == pytest.approx(cpu_s, rel=1e-9)
    assert {line.split()[0] for line in lines} == {"0", "1"}, "the rows cross the break-even"


def _run(cost: GpuCost, rows: list[dict[str, int]], tmp: Path) -> list[str]:
    from core_compiler.transform.gpu_cost import Lets

    params = list(cost.params.values())
    lets = Lets()
    gpu_c, cpu_c = cost.gpu_time().c(cost.params, lets), cost.cpu_time().c(cost.params, lets)
    decls = "\n".join(f"    int {p} = atoi(argv[a + {i}]); (void){p};" for i, p in enumerate(params))
    program = f"""#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {{
  for (int a = 1; a + {len(params)} <= argc; a += {len(params)}) {{
{decls}
    {" ".join(lets.decls)}
    printf("%d %.17g %.17g\\n", {faster_on_gpu_c(cost)} ? 1 : 0, {gpu_c}, {cpu_c});
  }}
  return 0;
}}
"""
    (tmp / "check.c").write_text(program)
    gcc = shutil.which("gcc") or shutil.which("cc")
    assert gcc is not None, "the tests need the system C compiler"
    subprocess.run([gcc, "-std=gnu99", "-O1", "-Wall", "-Werror", "-o", str(tmp / "check"), str(tmp / "check.c")], check=True, capture_output=True)
    argv = [str(row[p]) for row in rows for p in params]
    return subprocess.run([str(tmp / "check"), *argv], check=True, capture_output=True, text=True).stdout.splitlines()


# ------------------------------------------------------------------------------ the report


def test_report_of_cholesky_at_2000() -> None:
    cost = gpu_cost(polybench_gpu("cholesky"))
    text = render_cost(cost, {"n": 2000})
    assert "at n = 2000" in text and "launches per call     n = 2.0e3" in text
    assert "ONE GPU thread (sequential)" in text
    assert "estimated               GPU" in text and "on one CPU core" in text


def test_report_without_sizes_gives_formulas() -> None:
    text = render_cost(gpu_cost(polybench_gpu("trisolv")))
    assert "formulas for large sizes" in text and "= " not in text.split("launches per call")[1].splitlines()[0]


PTXAS = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z7kernel0PdS_i' for 'sm_90'
ptxas info    : Function properties for _Z7kernel0PdS_i
    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 16384 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function '_Z7kernel1Pd' for 'sm_90'
ptxas info    : Function properties for _Z7kernel1Pd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, 364 bytes cmem[0]
"""


def test_ptxas_output_is_read_per_kernel() -> None:
    r = parse_ptxas(PTXAS)
    assert (r["kernel0"].registers, r["kernel0"].spill_bytes) == (40, 20)
    assert (r["kernel1"].registers, r["kernel1"].spill_bytes) == (12, 0)
