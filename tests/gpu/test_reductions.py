"""Reductions on the GPU: a loop that only carries a `+=` reduction runs in parallel with atomic
additions (PPCG serializes it) — run on PoCL against the original C, with the remark that says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.compile import compile_file
from core_compiler.runtime.differential import check_opencl

SOURCE = """
void dot(int n, double x[n], double y[n], double s[1]) {
  for (int i = 0; i < n; i++)
    s[0] += x[i] * y[i];
}
void colsum(int n, int m, double A[n][m], double s[m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s[j] += A[i][j];
}
void histo(int n, int m, double A[n][m], float h[4]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      h[j % 4] -= (float)A[i][j];
}
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("red") / "red.c"
    p.write_text(SOURCE)
    return p


@pytest.mark.parametrize("n", [0, 1, 37, 1000])
def test_parallel_sum_with_atomics_matches(path: Path, n: int) -> None:
    result = check_opencl(str(path), "dot", {"n": n})
    assert result.ok, result.comparison.report()


@pytest.mark.parametrize(("n", "m"), [(0, 3), (1, 1), (37, 45), (70, 33)])
def test_float_atomics_and_subtraction_match(path: Path, n: int, m: int) -> None:
    result = check_opencl(str(path), "histo", {"n": n, "m": m})
    assert result.ok, result.comparison.report()


def test_reduction_remarks_and_code(path: Path) -> None:
    result = compile_file(analyze_file(str(path)), "opencl", always_offload=True)
    parallelized = {r.function for r in result.remarks if r.name == "ReductionParallelized"}
    assert parallelized == {"dot", "histo"}  # colsum has a parallel loop without atomics
    assert "hx_atomic_add_double(&s[0], (x[" in result.files["red_dot.cl"]
    assert "hx_atomic_add_float(&h[" in result.files["red_histo.cl"]
    assert "atomic" not in result.files["red_colsum.cl"].split("*/", 1)[1].split("__kernel", 1)[1]


def test_cuda_uses_atomic_add(path: Path) -> None:
    files = compile_file(analyze_file(str(path), only="dot"), "cuda", always_offload=True).files
    assert "atomicAdd(&s[0], " in files["red_dot_kernel.cu"]


def test_ptx_uses_atomic_add(path: Path) -> None:
    from core_compiler.llvm.nvptx import lower_gpu, ptxas_path, run_ptxas
    from core_compiler.pipeline import gpu_program

    sa = analyze_file(str(path), only="dot").functions[0].scops[0]
    gpu = gpu_program(sa)
    ptx = lower_gpu(gpu).ptx
    assert "atom.global.add.f64" in ptx
    if ptxas_path() is None:
        pytest.skip(reason="ptxas is not installed: the PTX cannot be assembled")
    assert run_ptxas(ptx).ok
