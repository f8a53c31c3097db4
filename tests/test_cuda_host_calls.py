"""A function that is more than one loop nest keeps its source (``<stem>_host.c``), each offloaded
nest a call of its own host function (`core_compiler/codegen/host_calls.py`): the result links and
runs, on the CPU under the CUDA shim, as the original does."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.compile import compile_file
from tests.cuda_cpu import harness

NVCC = shutil.which("nvcc")
SIZES = (0, 1, 7, 33)

TWO = """
static void scale(int n, double *p)
{
  for (int i = 0; i < n * n; i++)
    p[i] = p[i] * 0.5 + 1.0;
}

void two(int n, double A[n][n], double B[n][n], double C[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
  scale(n, &C[0][0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        A[i][j] += C[i][k] * B[k][j];
}
"""

AFTER = """
void after(int n, double A[n][n], double x[n], double y[n])
{
  for (int i = 0; i < n; i++) {
    y[i] = 0.0;
    for (int j = 0; j < n; j++)
      y[i] += A[i][j] * x[j];
  }
  if (n > 0)
    x[0] = y[(int)(y[n - 1] * y[n - 1]) % n] + 1.0;
}
"""

RETURNS = """
double returns(int n, double A[n], double B[n])
{
  for (int i = 0; i < n; i++)
    B[i] = 2.0 * A[i] + 1.0;
  return n > 0 ? B[n - 1] * B[(int)(B[0] * B[0]) % n] : -1.0;
}
"""

SCALAR = """
double total(int n, double A[n], double B[n])
{
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    B[i] = 2.0 * A[i];
    s += B[i];
  }
  return s;
}
"""

WHOLE = "void whole(int n, double A[n]) { for (int i = 0; i < n; i++) A[i] = 2.0 * A[i]; }\n"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    return str(path)


def _compile(tmp_path: Path, name: str, text: str, function: str) -> dict[str, str]:
    return compile_file(analyze_file(_write(tmp_path, name, text), only=function), "cuda", always_offload=True).files


def test_two_nests_get_host_functions_of_their_own(tmp_path: Path) -> None:
    files = _compile(tmp_path, "two", TWO, "two")
    assert sorted(files) == sorted(
        ["two_host.c"] + [f"two_two{k}_{f}" for k in ("", "_1") for f in ("host.cu", "host.h", "kernel.cu", "kernel.hu")]
    )
    host_c = files["two_host.c"]
    assert '#include "two_two_host.h"\n#include "two_two_1_host.h"\n' in host_c
    assert "  two_scop0(n, (double *)A, (double *)B, (double *)C);" in host_c
    assert "  scale(n, &C[0][0]);\n  two_scop1(" in host_c  # the call between them kept, in order
    assert "static void scale(int n, double *p)" in host_c  # the rest of the file as written
    assert 'extern "C" void two_scop1(int n, double *A, double *B, double *C)' in files["two_two_1_host.cu"]
    assert "#define kernel0 two_scop1_kernel0\n" in files["two_two_1_kernel.hu"]
    assert "#define kernel0 two_scop0_kernel0\n" in files["two_two_kernel.hu"]
    assert '#include "two_two_1_kernel.hu"' in files["two_two_1_kernel.cu"]  # both files see the rename
    assert '#include "two_two_1_kernel.hu"' in files["two_two_1_host.cu"]


def test_a_function_that_is_one_nest_is_its_host_function(tmp_path: Path) -> None:
    files = _compile(tmp_path, "whole", WHOLE, "whole")
    assert sorted(files) == ["whole_whole_host.cu", "whole_whole_host.h", "whole_whole_kernel.cu", "whole_whole_kernel.hu"]
    assert 'extern "C" void whole(int n, double *A)' in files["whole_whole_host.cu"]
    assert "#define" not in files["whole_whole_kernel.hu"]


def test_a_function_taken_whole_beside_a_rewritten_one_is_its_header(tmp_path: Path) -> None:
    path = _write(tmp_path, "both", WHOLE + TWO)
    files = compile_file(analyze_file(path), "cuda", always_offload=True).files
    host_c = files["both_host.c"]
    assert host_c.startswith('/* hexplore: the host functions of the loop nests that run on the GPU */\n#include "both_two_host.h"')
    assert '#include "both_whole_host.h"  /* hexplore: `whole` runs on the GPU (both_whole_host.cu) */\n' in host_c
    assert "void whole(" not in host_c


def test_a_scalar_the_code_after_reads_keeps_the_nest_on_the_cpu(tmp_path: Path) -> None:
    path = _write(tmp_path, "total", SCALAR)
    result = compile_file(analyze_file(path, only="total"), "cuda", always_offload=True)
    assert result.files == {}  # the function stays as written
    (kept,) = [r for r in result.remarks if r.name == "KeptOnCpuForCaller"]
    assert kept.message.startswith("the loop nest at line 4 stays on the CPU")
    assert "`s` is set by the nest and named here" in kept.message
    assert (kept.range.line, kept.range.col) == (9, 10)  # `return s;`


@pytest.fixture(scope="module")
def shim() -> None:
    why = harness.unavailable()
    if why:
        pytest.skip(why)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text", "function"), [("two", TWO, "two"), ("after", AFTER, "after"), ("returns", RETURNS, "returns")]
)
def test_rewritten_source_runs_as_the_original(shim: None, tmp_path: Path, name: str, text: str, function: str) -> None:
    path = _write(tmp_path, name, text)
    cases = [harness.prepare(path, function, {"n": n}, name=f"{name}-{n}") for n in SIZES]
    assert all(c.rewritten == f"{name}_host.c" for c in cases)
    results = harness.run_cases(cases)
    failed = {k: r.report() for k, r in results.items() if not r.ok}
    assert not failed, failed
    assert all(r.kernels >= 1 for r in results.values())


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed: CUDA text cannot be compile-checked")
def test_nvcc_builds_and_links_the_rewritten_source(tmp_path: Path) -> None:
    files = _compile(tmp_path, "two", TWO + "int main(void) { return 0; }\n", "two")
    out = tmp_path / "out"
    out.mkdir()
    for name, text in files.items():
        (out / name).write_text(text)
    objects = []
    for name in sorted(files):
        if name.endswith((".cu", ".c")):
            obj = out / f"{name}.o"
            cmd = [str(NVCC), "-c", name, "-o", obj.name] if name.endswith(".cu") else ["cc", "-std=gnu11", "-c", name, "-o", obj.name]
            proc = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr[-3000:]
            objects.append(obj.name)
    proc = subprocess.run([str(NVCC), *objects, "-o", "two"], cwd=out, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]  # two definitions of a kernel would not link
