"""Differential tests of the C target: every suite kernel's file, with the kernel's SCoPs replaced by
hexplore's tiled C, built by the system compiler and run against the original — at the default
sizes, a size that is not a multiple of the tile size, and sizes 1 and 0; a few kernels also with
OpenMP on two threads. Plus what the spliced file must look like."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.codegen.c import OMP_PRAGMA, COptions, generate_c
from core_compiler.runtime.differential import check_c, check_opencl
from core_compiler.transform.cpu_schedule import CpuOptions
from tests.conftest import KERNELS, ROOT, suite
from tests.test_differential_opencl import CASES

OPENMP_KERNELS = ("gemm.c", "jacobi_2d.c", "seidel_2d.c", "correlation.c", "softmax.c", "covariance.c")
OPENMP_CASES = [c for c in CASES if str(c.values[0]["file"]) in OPENMP_KERNELS]  # type: ignore[index]


def _check(kernel: dict[str, object], params: dict[str, int], openmp: bool) -> None:
    path = str(KERNELS / str(kernel["file"]))
    result = check_c(path, str(kernel["function"]), params, kernel["size_limits"], openmp=openmp)  # type: ignore[arg-type]
    assert result.ok, result.comparison.report()
    assert result.kernels >= 1


@pytest.mark.parametrize(("kernel", "params"), CASES)
def test_c_matches_original(kernel: dict[str, object], params: dict[str, int]) -> None:
    _check(kernel, params, openmp=False)


@pytest.mark.parametrize(("kernel", "params"), OPENMP_CASES)
def test_openmp_c_matches_original(
    kernel: dict[str, object], params: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # read when libgomp is loaded, in this process
    _check(kernel, params, openmp=True)


# ------------------------------------------------------------------------- the spliced file


def _generate(name: str, openmp: bool = False, function: str | None = None) -> str:
    path = KERNELS / name
    fa = analyze_file(str(path), only=function)
    return generate_c(fa, path.read_text(), COptions(openmp=openmp)).source


def _function_text(source: str, signature_start: str) -> str:
    start = source.index(signature_start)
    return source[start : source.index("\n}\n", start)]


def test_gemm_pragma_sits_on_the_outer_tile_loop_only() -> None:
    kernel = _function_text(_generate("gemm.c", openmp=True), "void kernel_gemm(")
    lines = kernel.splitlines()
    pragmas = [k for k, ln in enumerate(lines) if ln.strip() == OMP_PRAGMA]
    assert len(pragmas) == 1, kernel
    assert re.fullmatch(r"\s*for \(int c0 = 0; c0 < ni; c0 \+= 32\) \{", lines[pragmas[0] + 1]), kernel


def test_no_pragma_without_openmp() -> None:
    assert "#pragma omp" not in _generate("gemm.c")


def test_seidel_parallel_loop_is_inside_the_wavefront_loop() -> None:
    kernel = _function_text(_generate("seidel_2d.c", openmp=True), "void kernel_seidel_2d(")
    lines = kernel.splitlines()
    (at,) = [k for k, ln in enumerate(lines) if ln.strip() == OMP_PRAGMA]
    outer = [ln for ln in lines[:at] if ln.lstrip().startswith("for (")]
    assert len(outer) == 1, kernel  # the sequential time-skewed loop, then the parallel one


def test_untiled_trmm_runs_strips_of_j_in_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the dependences show that trmm's ``j`` carries nothing (isl's flags mark it inside
    ``k`` and ``i`` alone): the pragma sits on the loop over its strips, outermost, and the result
    is still the original's."""
    path = KERNELS / "trmm.c"
    options = COptions(cpu=CpuOptions(tile_size=1), openmp=True)
    kernel = _function_text(generate_c(analyze_file(str(path)), path.read_text(), options).source, "void kernel_trmm(")
    lines = kernel.splitlines()
    first = next(k for k, ln in enumerate(lines) if ln.strip() == OMP_PRAGMA)
    assert not any(ln.lstrip().startswith("for (") for ln in lines[:first]), kernel
    assert "/ 32" in lines[first + 1] or "floord" in lines[first + 1], kernel
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    trmm = next(k for k in suite() if k["file"] == "trmm.c")
    for params in ({"m": 37, "n": 29}, {"m": 1, "n": 1}):
        result = check_c(str(path), "kernel_trmm", params, trmm["size_limits"], openmp=True, cpu=CpuOptions(tile_size=1))  # type: ignore[arg-type]
        assert result.ok, result.comparison.report()


def test_output_is_deterministic() -> None:
    for name in ("gemm.c", "correlation.c", "softmax.c"):
        assert _generate(name, openmp=True) == _generate(name, openmp=True)


def test_spliced_file_keeps_signatures_and_the_rest() -> None:
    original = (KERNELS / "2mm.c").read_text()
    generated = _generate("2mm.c", function="kernel_2mm")
    signature = original[original.index("void kernel_2mm(") : original.index("{", original.index("kernel_2mm("))]
    assert signature in generated
    assert generated.count("kernel_2mm(") == original.count("kernel_2mm(")
    main = original[original.index("int main(") :]
    assert generated.endswith(main)  # only the kernel's loop nest changed
    assert "/* hexplore: kernel_2mm#scop0, tiled 32 */" in generated


def test_macros_are_defined_once_and_guarded() -> None:
    generated = _generate("gemm.c")
    for macro in ("floord", "hx_min", "hx_max"):
        assert generated.count(f"#define {macro}(") == 1
        assert f"#ifndef {macro}\n#define {macro}(" in generated


def test_locals_declared_at_the_top_of_a_scop_stay_visible_after_it() -> None:
    """`main` sums into `checksum` inside the SCoP and prints it after: the declaration moves out."""
    generated = _function_text(_generate("gemm.c"), "int main(")
    decl, block = generated.index("double checksum;"), generated.index("/* hexplore: main#scop0")
    assert block < decl < generated.index("printf(")


def test_file_without_scops_is_unchanged(tmp_path: Path) -> None:
    src = "int f(int n) { int s = 0; while (n) { s += n; n--; } return s; }\n"
    path = tmp_path / "w.c"
    path.write_text(src)
    assert generate_c(analyze_file(str(path)), src).source == src


def test_cli_writes_the_spliced_file(tmp_path: Path) -> None:
    kernel = next(k for k in suite() if k["file"] == "jacobi_2d.c")
    cmd = [sys.executable, "-m", "tui.cli", "compile", str(KERNELS / "jacobi_2d.c"), "--target", "c",
           "--openmp", "-o", str(tmp_path)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = (tmp_path / "jacobi_2d.hexplore.c").read_text()
    assert out == _generate("jacobi_2d.c", openmp=True)
    assert f"void {kernel['function']}(" in out
    assert "[Passed:CpuCode]" in proc.stderr
    compiled = subprocess.run(["cc", "-fopenmp", "-fsyntax-only", "-Wall", "-Werror", str(tmp_path / "jacobi_2d.hexplore.c")],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr


# ------------------------------------------------------------------------- names in the way


def _check_text(tmp_path: Path, source: str, params: dict[str, int], openmp: bool = False) -> None:
    path = tmp_path / "t.c"
    path.write_text(source)
    result = check_c(str(path), "f", params, openmp=openmp)
    assert result.ok, result.comparison.report()
    assert result.kernels == 1


def test_loop_counters_avoid_the_files_names(tmp_path: Path) -> None:
    """isl names loop counters c0, c1, ...: an array called `c1` must not be shadowed by one."""
    src = textwrap.dedent("""\
        void f(int n, double c0[n][n], double c1[n])
        {
          for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
              c0[i][j] = c0[i][j] + c1[j];
        }
        """)
    _check_text(tmp_path, src, {"n": 37})
    generated = generate_c(analyze_file(str(tmp_path / "t.c")), src).source
    assert "for (int hx_c0 = 0;" in generated and "int c0 =" not in generated


def test_parameter_named_like_an_isl_keyword(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """isl calls the parameter `min` `min_`; the block declares that name as a copy."""
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    src = textwrap.dedent("""\
        void f(int min, int n, double A[n + 1][min + 1])
        {
          for (int i = 0; i < n; i++)
            for (int j = 0; j < min; j++) {
              double t = A[i][j] * 2.0;
              A[i][j] = t + A[i][j + 1];
            }
        }
        """)
    _check_text(tmp_path, src, {"min": 37, "n": 5}, openmp=True)


def test_opencl_parameter_named_like_an_isl_keyword(tmp_path: Path) -> None:
    """A regression: gpu.py once wrote raw parameter names into isl text (`min` is a keyword)."""
    path = tmp_path / "t.c"
    path.write_text("void f(int min, double A[min])\n{\n  for (int i = 0; i < min; i++)\n    A[i] = 2.0 * A[i];\n}\n")
    assert check_opencl(str(path), "f", {"min": 7}).ok
