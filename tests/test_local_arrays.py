"""Local arrays: one declared inside a loop (``double t[8];`` in loop ``i``) is a separate array per
iteration, stored side by side (``t[i][j]``), so the loop stays parallel; one declared before the
loops is one array the nest shares, and the remark on the loop it serializes says how to fix
that. Both run and match on the CPU, on OpenCL and as generated C, and their CUDA compiles."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from core_compiler.compile import compile_file
from core_compiler.runtime.differential import check_c, check_opencl
from tests.helpers import analyze, check_cpu, named, nvcc_compiles

LOCALS = """
void inner(int n, double A[n][8], double out[n]) {
  for (int i = 0; i < n; i++) {
    double t[8];
    for (int j = 0; j < 8; j++)
      t[j] = A[i][j] * A[i][j];
    double s = 0;
    for (int j = 0; j < 8; j++)
      s += t[7 - j] * j;
    out[i] = s;
  }
}
void outer(int n, double A[n][8], double out[n]) {
  double t[8];
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < 8; j++)
      t[j] = A[i][j] + 1;
    out[i] = t[0] * t[7];
  }
}
void sized(int n, const double *a, double *b) {
  double tmp[n];
  for (int i = 0; i < n; i++)
    tmp[i] = 2 * a[i];
  for (int i = 0; i < n; i++)
    b[i] = tmp[n - 1 - i];
}
"""


def test_an_array_declared_in_a_loop_is_one_per_iteration() -> None:
    f = analyze(LOCALS).function("inner")
    assert f is not None
    (sa,) = f.scops
    (write,) = sa.scop.statements[0].writes
    assert "t[i, j]" in str(write.relation), str(write.relation)
    assert next(lp for lp in sa.deps.loops if lp.loop.var == "i").parallel, [r.message for r in f.remarks]
    assert not named(list(f.remarks), "PossibleAliasing")


def test_a_shared_local_array_gets_a_hint_on_the_loop_it_serializes() -> None:
    f = analyze(LOCALS).function("outer")
    assert f is not None and len(f.scops) == 1
    (carried,) = [r for r in named(list(f.remarks), "LoopCarriedDependence") if r.args["loop"] == "i"]
    assert "declare it inside loop `i`" in carried.message, carried.message


@pytest.mark.parametrize("function", ["inner", "outer", "sized"])
def test_local_arrays_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "locals.c"
    path.write_text(LOCALS)
    for n in (37, 1, 0):
        cpu = check_cpu(str(path), function, {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"
        c = check_c(str(path), function, {"n": n})
        assert c.ok, f"n={n}\n{c.comparison.report()}"
    gpu = check_opencl(str(path), function, {"n": 37})
    assert gpu.ok, gpu.comparison.report()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: CUDA text cannot be compile-checked")
def test_cuda_with_local_arrays_compiles_with_its_cpu_fallback(tmp_path: Path) -> None:
    result = compile_file(analyze(LOCALS, "locals.c"), "cuda")
    assert any("too little work" in text for text in result.files.values())
    nvcc_compiles(result.files, tmp_path)


TABLE = """
void smooth(int n, const double *x, double *y) {
  static const double w[3] = {0.25, 0.5, 0.25};
  for (int i = 1; i < n - 1; i++) {
    double s = 0;
    for (int k = 0; k < 3; k++)
      s += w[k] * x[i + k - 1];
    y[i] = s;
  }
}
"""


def test_a_table_with_initial_values_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "table.c"
    path.write_text(TABLE)
    c = check_c(str(path), "smooth", {"n": 37})  # the generated loops read the function's `w`
    assert c.ok, c.comparison.report()
    cpu = check_cpu(str(path), "smooth", {"n": 37})  # its values are `w`'s input (`test_globals`)
    assert cpu.ok, cpu.report()


PROGRAM = """
#include <stdio.h>
int g[4] = {1, 1, 1, 1};
static int sums(int n) {
  static int calls[2];
  int a[4], b[4];
  for (int i = 0; i < 4; i++) {
    a[i] = i + n;
    b[i] = 2 * i;
  }
  for (int i = 0; i < 2; i++)
    calls[i] += n;
  if (n > 0) {
    int c[3];
    for (int i = 0; i < 3; i++)
      c[i] = i * n;
    calls[0] += c[2];
  }
  return a[3] + b[2] + calls[0] * 100 + calls[1];
}
static void touch(int *x) {
  if (x[0] < 0)
    puts("negative");  /* output: a call hexplore does not inline */
}
static int split(int n) {
  int p[2], q[3];
  for (int i = 0; i < 2; i++)
    p[i] = i + n;
  touch(p);
  for (int i = 0; i < 3; i++)
    q[i] = p[1] + i;
  return q[2];
}
int main(void) {
  int g[4];
  for (int i = 0; i < 4; i++)
    g[i] = 7;
  int first = sums(1);
  printf("%d %d %d %d\\n", g[0], first, sums(2), split(3));
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: the generated C cannot be built")
def test_generated_c_keeps_local_arrays_declared_before_the_loops(tmp_path: Path) -> None:
    """A local array declared before a nest is the user's array in the generated C (issue 31): it
    was a `malloc`'d buffer freed at the end of the nest, so code after the nest that reads it
    did not compile, or, where it shadows a global (`g`), read the global: 1 printed for 7. One
    declared in a SCoP that does not use it (`q`) is declared there still."""
    path = tmp_path / "prog.c"
    path.write_text(PROGRAM)
    fa = analyze(PROGRAM, str(path))
    assert len(fa.function("main").scops) == 1  # type: ignore[union-attr]
    assert len(fa.function("split").scops) == 2  # `q` declared in the first, used in the second and after
    result = compile_file(fa, "c")
    (generated,) = result.files.values()
    assert "malloc" not in generated and "static int calls[2];" in generated
    outputs = []
    for name, text in (("original", PROGRAM), ("generated", generated)):
        source = tmp_path / f"{name}.c"
        source.write_text(text)
        subprocess.run(["gcc", "-w", "-o", str(tmp_path / name), str(source)], check=True)
        run = subprocess.run([str(tmp_path / name)], capture_output=True, text=True, check=True)
        outputs.append(run.stdout)
    assert outputs[0] == "7 309 912 6\n"
    assert outputs[1] == outputs[0]
