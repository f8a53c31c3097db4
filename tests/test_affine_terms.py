"""Subscripts with ``/`` and ``%`` (floor and mod terms of the model) in generated code.

They are expression trees (`core_compiler.scop.affine`: `FloorDiv`, `Mod`, `WrapMod`), printed for
C, OpenCL and CUDA by one printer that substitutes the generated iterators on the tree, and lowered
to LLVM from the tree. Each nest below once came out wrong when these terms were isl text edited
with ``str.replace``: the iterator ``l`` replaced inside the word ``floor`` (``f(c0)oor``), ``mod``
inside the parameter ``nmodes`` (``n%es``), ``i`` inside ``ii`` and ``i2``; the LLVM lowering
knew an iterator named ``max`` only by isl's name for it (``max_``). Each runs against the
original on the LLVM CPU path, as generated C and on OpenCL (PoCL), and its CUDA compiles.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.codegen.statements import affine_c
from core_compiler.compile import compile_file
from core_compiler.runtime.differential import check_c, check_opencl
from core_compiler.scop.affine import Affine, FloorDiv, Mod, WrapMod
from tests.helpers import analyze, check_cpu, nvcc_compiles

SOURCE = """
void half(int n, double A[n], double B[n]) {
  for (int l = 0; l < n; l++)
    B[l] = A[l / 2];
}
void modes(int nmodes, double A[nmodes], double B[nmodes]) {
  for (int i = 0; i < nmodes; i++)
    B[i] = A[(i + 1) % nmodes];
}
void blocks(int n, int m, double A[m], double B[n][m]) {
  for (int i = 0; i < n; i++)
    for (int ii = 0; ii < m; ii++)
      B[i][ii] = A[ii / 4] + i;
}
void prefixes(int n, double A[3 * n], double C[n][n][n]) {
  for (int i = 0; i < n; i++)
    for (int ii = 0; ii < n; ii++)
      for (int i2 = 0; i2 < n; i2++)
        C[i][ii][i2] = A[(i + 2 * ii + i2) / 3] + A[(ii + i2) % 5];
}
void keywords(int floor, int mod, int fmod, double A[2][floor + mod + fmod + 1], double B[floor]) {
  for (int i = 0; i < floor; i++)
    for (int k = 0; k < mod; k++)
      for (int j = 0; j < fmod; j++)
        B[i] += A[0][(i + fmod + j) / 2] + A[1][(i + mod) % 3] * j + A[1][i % floor] * k;
}
void negative(int n, double A[n + 3], double B[n]) {
  for (int r = 0; r < n; r++)
    for (int o = 0; o < 2; o++)
      B[r] += A[(n - 1 - r) / 2] - A[n - 1 - r / 2] + A[(2 * n - 2 * r - o + 1) % 3] * o;
}
void reserved(int n, double A[n], double B[n]) {
  for (int max = 0; max < n; max++)
    B[max] = A[max / 2] + A[(max + 1) % n];
}
void ring(int n, double a[n], double b[n]) {
  for (int d = 0; d < n; d++)
    b[d] = 0.5 * (a[(d + 1) % n] + a[(d + n - 1) % n]);
}
"""

FUNCTIONS = ["half", "modes", "blocks", "prefixes", "keywords", "negative", "reserved", "ring"]

# a tile multiple and not (tiles are 32 wide), a single iteration, none
SIZES = [
    {"n": 37, "m": 70, "nmodes": 37, "floor": 37, "mod": 5, "fmod": 6},
    {"n": 32, "m": 64, "nmodes": 32, "floor": 32, "mod": 2, "fmod": 3},
    {"n": 1, "m": 1, "nmodes": 1, "floor": 1, "mod": 1, "fmod": 1},
    {"n": 0, "m": 0, "nmodes": 0, "floor": 0, "mod": 0, "fmod": 0},
]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("affine") / "terms.c"
    path.write_text(SOURCE)
    return str(path)


def test_each_nest_is_modeled() -> None:
    fa = analyze(SOURCE)
    for name in FUNCTIONS:
        f = fa.function(name)
        assert f is not None and len(f.scops) == 1, (name, [r.message for r in fa.all_remarks()])


def test_the_printer_substitutes_on_the_tree() -> None:
    i, ii, n = (Affine.of({v: 1}) for v in ("i", "ii", "n"))
    subst = {"i": "(c0)", "ii": "(c0 + c2)"}
    assert affine_c(Affine.of({FloorDiv(ii, 4): 1}), subst) == "(((c0 + c2))/4)"
    assert affine_c(Affine.of({Mod(i + ii, 2): -1}, 3), subst) == "-1 * (((c0) + (c0 + c2)) % 2) + 3"
    assert affine_c(Affine.of({WrapMod(i + Affine.of({}, 1), n): 1}), subst) == "(((c0) + 1) % (n))"
    floor = Affine.of({"floor": 1, "mod": -2})
    assert affine_c(Affine.of({FloorDiv(floor - i, 3): 2}), subst) == "2 * ((floor - (c0) - 2*mod)/3)"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_llvm_cpu_matches(source: str, function: str) -> None:
    for values in SIZES:
        cpu = check_cpu(source, function, values, threads=2)
        assert cpu.ok, f"{values}\n{cpu.report()}"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_generated_c_matches(source: str, function: str) -> None:
    for values in SIZES:
        c = check_c(source, function, values)
        assert c.ok and c.kernels == 1, f"{values}\n{c.comparison.report()}"


@pytest.mark.parametrize("function", FUNCTIONS)
def test_opencl_matches(source: str, function: str) -> None:
    for values in SIZES:
        gpu = check_opencl(source, function, values)
        assert gpu.ok, f"{values}\n{gpu.comparison.report()}"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: CUDA text cannot be compile-checked")
@pytest.mark.parametrize("function", FUNCTIONS)
def test_cuda_compiles(function: str, tmp_path: Path) -> None:
    fa = analyze_file(str(tmp_path / "terms.c"), SOURCE, only=function)
    result = compile_file(fa, "cuda", always_offload=True)
    nvcc_compiles(result.files, tmp_path)


LOW_BITS = """
void wrap8(int n, double a[8], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = a[i & 7] + a[(i + 3) & 7];
}
void signed8(int n, double a[8], double b[n]) {
  for (int i = -n; i < n; i++)
    b[i + n] = a[i & 7];
}
"""


def test_low_bits_are_a_modulo_where_the_value_is_not_negative(tmp_path: Path) -> None:
    """``e & (2^k - 1)`` is ``e mod 2^k`` (CUDA's `lane = i & 31`, a double-buffered copy's
    ``(T / 16) & 1``); printed as ``%``, which is C's value only where `e >= 0`: elsewhere refused."""
    fa = analyze(LOW_BITS)
    wrap8, signed8 = fa.function("wrap8"), fa.function("signed8")
    assert wrap8 is not None and len(wrap8.scops) == 1
    assert signed8 is not None and not signed8.scops and "NegativeDivision" in {r.name for r in signed8.remarks}
    path = tmp_path / "low_bits.c"
    path.write_text(LOW_BITS)
    for n in (37, 1, 0):
        assert check_c(str(path), "wrap8", {"n": n}).ok, n
