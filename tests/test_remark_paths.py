"""Each decision `hexplore compile` makes is a remark: offloaded (with its memory placement), kept
on the CPU as unprofitable or too little work, a run-time check emitted (and compiled by nvcc), and
not offloaded because no loop is parallel."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.compile import CompileResult, compile_file
from tests.helpers import nvcc_compiles

SOURCE = """
void saxpy(int n, double a, double x[n], double y[n]) {
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}
void mm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
#define N 8
void small(double A[N][N]) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = 2 * A[i][j];
}
#define M 2048
void big(double A[M][M], double B[M][M]) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      B[i][j] = A[i][j] + A[j][i];
}
void recurrence(int n, double A[n][n], double x[1]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      x[0] = x[0] * A[i][j] + 1.0;
}
"""


@pytest.fixture(scope="module")
def result() -> CompileResult:
    return compile_file(analyze_file("paths.c", SOURCE), "cuda")


def _names(result: CompileResult, function: str) -> list[str]:
    return [r.name for r in result.remarks if r.function == function]


def test_single_small_loop_stays_on_cpu(result: CompileResult) -> None:
    (r,) = [r for r in result.remarks if r.function == "saxpy"]
    assert r.name == "TooLittleWork" and r.kind.value == "Missed"
    assert "kept on CPU" in r.message and "5 operations per iteration" in r.message
    assert not any(name.startswith("paths_saxpy") for name in result.files)


def test_known_small_sizes_stay_on_cpu(result: CompileResult) -> None:
    (r,) = [r for r in result.remarks if r.function == "small"]
    assert r.name == "KeptOnCpu"
    assert "below the offload threshold" in r.message
    assert r.args["estimate"] == 8 * 8 * 3  # load, multiply, store per instance


def test_known_large_sizes_are_offloaded_without_a_check(result: CompileResult) -> None:
    assert _names(result, "big") == ["OffloadProfitable", "Offloaded"]
    assert "if (!(" not in result.files["paths_big_host.cu"]


def test_parametric_sizes_get_a_run_time_check(result: CompileResult) -> None:
    assert _names(result, "mm") == ["RuntimeOffloadCheck", "Offloaded"]
    check = next(r for r in result.remarks if r.name == "RuntimeOffloadCheck")
    assert "6*n*n*n >= 2621440" in check.message
    host = result.files["paths_mm_host.cu"]
    assert "if (!(" in host and "return;" in host


def test_offload_remark_says_where_arrays_live(result: CompileResult) -> None:
    r = next(r for r in result.remarks if r.function == "mm" and r.name == "Offloaded")
    assert r.args["shared"] == ["A", "B"] and r.args["registers"] == ["C"]
    assert "A, B in shared memory (32x16, 16x64 tiles, two of each: the next tile is copied while this one computes); C in registers" in r.message


def test_no_parallel_loop_is_said(result: CompileResult) -> None:
    names = _names(result, "recurrence")
    assert "RuntimeOffloadCheck" in names
    (r,) = [r for r in result.remarks if r.function == "recurrence" and r.name != "RuntimeOffloadCheck"]
    assert r.name == "SequentialKernel" and r.kind.value == "Missed"
    assert "on one GPU thread: no loop around them is parallel" in r.message


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: the run-time check cannot be compile-checked")
@pytest.mark.slow  # nvcc
def test_run_time_check_compiles_with_nvcc(result: CompileResult, tmp_path: Path) -> None:
    nvcc_compiles({n: t for n, t in result.files.items() if n.startswith("paths_mm")}, tmp_path)
