"""User code that uses the names generated code declares — block ids ``b0``, thread ids ``t0``,
tile origins ``T0``, loop counters ``c0``, host loop values ``h0``, first blocks ``o0``, set
dimensions ``x0``/``y0``/``a0`` — keeps its meaning: those families move to ``hx_b0``, … in
that SCoP (`core_compiler.transform.names`), in isl's sets (where a user parameter ``t0`` would otherwise
be read as the thread id) and in the CUDA, OpenCL, C and PTX printed from them. So do arrays
named like the copies of others (``shared_A``, ``private_C``, ``dev_B``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core_compiler.compile import compile_file
from core_compiler.llvm.nvptx import lower_gpu, ptxas_path, run_ptxas
from core_compiler.pipeline import gpu_program
from core_compiler.runtime.cpu_variants import check_llvm_cpu
from core_compiler.transform.names import PLAIN, free_prefix, names_avoiding
from tests.helpers import analyze, nvcc_compiles, runs_everywhere

# Every family is used: as sizes in the loop bounds (isl parameters), as values, as a local.
CLASHES = """
void product(int n, int b0, int t0, int T0, int h0, int o0, int x0, int y0, int a0,
             double b1, double t1, const double *A, const double *B, double *C) {
  for (int i = b0; i < n - t0; i++)
    for (int j = 0; j < n - T0; j++) {
      double c0 = 0.0;
      for (int k = 0; k < n; k++)
        c0 += A[i * n + k] * B[k * n + j];
      C[i * n + j] = b1 * c0 + t1 * (h0 + o0 + x0 + y0 + a0);
    }
}
void sweep(int steps, int n, int b0, int t0, double *A, double *B) {
  for (int c1 = 0; c1 < steps; c1++) {
    for (int T1 = b0; T1 < n - t0; T1++)
      B[T1] = 0.25 * (A[T1 - 1] + 2.0 * A[T1] + A[T1 + 1]);
    for (int X0 = b0; X0 < n - t0; X0++)
      A[X0] = B[X0];
  }
}
void copies(int n, const double *A, const double *B, double *C,
            const double *shared_A, const double *dev_B, double *private_C) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      C[i * n + j] = shared_A[i] * dev_B[j];
      for (int k = 0; k < n; k++)
        C[i * n + j] += A[i * n + k] * B[k * n + j];
    }
  for (int i = 0; i < n; i++)
    private_C[i] = C[i * n + i];
}
"""
SIZES = {
    "copies": [{"n": 37}, {"n": 1}, {"n": 0}],
    "product": [
        {"n": 37, "b0": 2, "t0": 3, "T0": 5, "h0": 7, "o0": 11, "x0": 13, "y0": 17, "a0": 19},
        {"n": 1, "b0": 0, "t0": 0, "T0": 0, "h0": 1, "o0": 1, "x0": 1, "y0": 1, "a0": 1},
        {"n": 0, "b0": 0, "t0": 0, "T0": 0, "h0": 0, "o0": 0, "x0": 0, "y0": 0, "a0": 0},
    ],
    "sweep": [
        {"steps": 3, "n": 41, "b0": 1, "t0": 1},
        {"steps": 2, "n": 70, "b0": 5, "t0": 9},
        {"steps": 1, "n": 1, "b0": 1, "t0": 1},
    ],
}


def test_a_family_moves_only_when_the_code_uses_one_of_its_names() -> None:
    assert free_prefix("b", ["b", "bx", "n", "b1x"]) == "b"  # `b` itself is no b<digits>
    assert free_prefix("b", ["b1"]) == "hx_b"
    assert free_prefix("b", ["b1", "hx_b0"]) == "hx0_b"
    names = names_avoiding(["t0", "c12", "n", "A"])
    assert (names("t", 0), names("c", 3), names("b", 1)) == ("hx_t0", "hx_c3", "b1")
    assert PLAIN("T", 2) == "T2"


# `product` first: `make test` runs it alone (the most clashing names), `make test-long` all three
@pytest.mark.parametrize("function", ["product", "copies", "sweep"])
def test_clashing_names_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "clashes.c"
    path.write_text(CLASHES)
    runs_everywhere(str(path), function, SIZES[function])


def test_clashing_names_get_other_names_in_the_kernels() -> None:
    result = compile_file(analyze(CLASHES, "clashes.c"), "opencl")
    text = "\n".join(result.files.values())
    for declared in ("int hx_b0 = get_group_id", "int hx_t0 = get_local_id", "int hx_T0 = ", "for (int hx_c"):
        assert declared in text
    for user in ("int b0,", "int t0,", "double b1,"):  # the user's stay what they were
        assert user in text
    for copy in ("hx_shared_A[", "hx_shared_B[", "hx_private_C["):  # A, B and C's copies
        assert copy in text


def test_device_buffers_are_named_apart_from_the_users_arrays() -> None:
    text = "\n".join(compile_file(analyze(CLASHES, "clashes.c"), "cuda").files.values())
    for buffer in ("double *hx_dev_A;", "double *hx_dev_dev_B;", "double *hx_dev_private_C;"):
        assert buffer in text


def test_a_local_named_like_a_counter_keeps_its_value_on_the_cpu(tmp_path: Path) -> None:
    """isl names the CPU loops itself, around parameters; the LLVM path looks names up by name."""
    path = tmp_path / "clashes.c"
    path.write_text(CLASHES)
    result = check_llvm_cpu(str(path), "product", SIZES["product"][0], threads=1)
    assert result.ok, result.report()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: CUDA text cannot be compile-checked")
def test_cuda_with_clashing_names_compiles(tmp_path: Path) -> None:
    result = compile_file(analyze(CLASHES, "clashes.c"), "cuda")
    nvcc_compiles(result.files, tmp_path)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) is not installed")
def test_ptx_with_clashing_names_assembles() -> None:
    for f in analyze(CLASHES, "clashes.c").functions:
        (sa,) = f.scops
        gpu = gpu_program(sa)
        assert gpu.names("b", 0) == ("b0" if f.function.name == "copies" else "hx_b0")
        result = run_ptxas(lower_gpu(gpu).ptx)
        assert result.ok, result.output
