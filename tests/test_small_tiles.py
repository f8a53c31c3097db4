"""Small tiles where the default ones leave a big GPU idle (issue 27).

A kernel whose loops are bounded by constants, or by sizes that its arrays' declared extents bound
(`double A[120][120][120]` indexed by `i + 1` with `i < n - 1`: `n <= 120`), with at least
MIN_POINTS_FOR_SMALL_TILES iterations of its band, that 32-wide tiles cut into fewer blocks than
MIN_BLOCKS, gets 16-wide tiles, and the offload remark says why. On an H100 at PolyBench LARGE:
heat-3d 69.5 -> 55.4 ms, adi 427 -> 366 ms. The differential runs use sizes where the rule
applies (the declared extents) and small ones (0, 1, 37).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.frontend import ParseOptions
from core_compiler.pipeline import gpu_program
from core_compiler.runtime.differential import check_opencl
from core_compiler.transform.gpu_mapping import MIN_BLOCKS, SMALL_TILE, Kernel
from core_compiler.transform.gpu_remarks import mapping_remarks

POLYBENCH = Path(__file__).parent / "polybench"

STENCIL_3D = """
#define N 100
void heat(int tsteps, int n, double A[N][N][N], double B[N][N][N]) {
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          B[i][j][k] = 0.125 * (A[i+1][j][k] - 2.0 * A[i][j][k] + A[i-1][j][k]) + A[i][j][k] + 0.125 * A[i][j][k-1];
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          A[i][j][k] = 0.125 * (B[i][j+1][k] - 2.0 * B[i][j][k] + B[i][j-1][k]) + B[i][j][k];
  }
}
"""

MATVEC = """
#define N 1024
void matvec(int n, double A[N][N], double x[N], double y[N]) {
  for (int i = 0; i < n; i++) {
    y[i] = 0.0;
    for (int j = 0; j < n; j++)
      y[i] += A[i][j] * x[j];
  }
}
"""


def _kernels(path: Path, function: str, defines: tuple[str, ...] = ()) -> tuple[Kernel, ...]:
    options = ParseOptions(include_dirs=(str(POLYBENCH / "utilities"),), defines=defines)
    fa = analyze_file(str(path), parse_options=options, only=function)
    (sa,) = fa.functions[0].scops
    return gpu_program(sa).kernels


def _source(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    return path


def test_heat_3d_at_large_gets_small_tiles_and_says_why() -> None:
    kernels = _kernels(POLYBENCH / "heat-3d" / "heat-3d.c", "kernel_heat_3d", ("LARGE_DATASET",))
    assert kernels and all(k.shape.tile[:2] == (SMALL_TILE, SMALL_TILE) for k in kernels if k.parallel)
    assert all("give 16 blocks" in k.shape.why for k in kernels if k.parallel), [k.shape.why for k in kernels]


def test_the_remark_gives_the_reason() -> None:
    path = POLYBENCH / "heat-3d" / "heat-3d.c"
    options = ParseOptions(include_dirs=(str(POLYBENCH / "utilities"),), defines=("LARGE_DATASET",))
    (sa,) = analyze_file(str(path), parse_options=options, only="kernel_heat_3d").functions[0].scops
    messages = [r.message for r in mapping_remarks(gpu_program(sa)) if r.name == "Offloaded"]
    assert messages and all(f"fewer than a big GPU's {MIN_BLOCKS} multiprocessors" in m for m in messages), messages


@pytest.mark.parametrize(("name", "dataset"), [("jacobi-2d", "LARGE_DATASET"), ("heat-3d", "MINI_DATASET")])
def test_kernels_with_enough_blocks_or_little_work_keep_the_default(name: str, dataset: str) -> None:
    """jacobi-2d at LARGE: 41x41 blocks of 32x32; heat-3d at MINI: too little work to matter."""
    kernels = _kernels(POLYBENCH / name / f"{name}.c", f"kernel_{name.replace('-', '_')}", (dataset,))
    assert kernels and all(k.shape.tile[0] == 32 and not k.shape.why for k in kernels if k.parallel)


def test_sizes_without_a_bound_keep_the_default(tmp_path: Path) -> None:
    """`double A[n][n]`: nothing bounds `n`, so the number of blocks is unknown."""
    path = _source(tmp_path, "vla", MATVEC.replace("double A[N][N], double x[N], double y[N]", "double A[n][n], double x[n], double y[n]"))
    (k,) = _kernels(path, "matvec")
    assert k.shape.tile[0] == 32 and not k.shape.why


def test_matvec_bounded_by_its_arrays_gets_small_tiles(tmp_path: Path) -> None:
    (k,) = _kernels(_source(tmp_path, "matvec", MATVEC), "matvec")
    assert k.shape.tile[0] == SMALL_TILE and "give 32 blocks" in k.shape.why, k.shape


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "text", "function", "params"),
    [
        ("heat", STENCIL_3D, "heat", {"tsteps": 2, "n": 100}),
        ("heat", STENCIL_3D, "heat", {"tsteps": 2, "n": 37}),
        ("heat", STENCIL_3D, "heat", {"tsteps": 1, "n": 1}),
        ("matvec", MATVEC, "matvec", {"n": 1024}),
        ("matvec", MATVEC, "matvec", {"n": 1000}),
        ("matvec", MATVEC, "matvec", {"n": 0}),
    ],
    ids=["heat-100", "heat-37", "heat-1", "matvec-1024", "matvec-1000", "matvec-0"],
)
def test_small_tiles_match_the_original_on_opencl(tmp_path: Path, name: str, text: str, function: str, params: dict[str, int]) -> None:
    result = check_opencl(str(_source(tmp_path, name, text)), function, params)
    assert result.ok, result.comparison
