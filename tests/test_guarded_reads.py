"""Reads C evaluates on one side of `?:`, `&&` or `||` only: boundary code such as
``i > 0 ? u[i - 1] : 0`` never reads ``u[-1]``, so the model says when each read happens, runs
check it against the original without a false out-of-bounds claim, and a GPU tile's shared-memory
copy stays inside the array."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest

from core_compiler.codegen.cuda import generate_cuda
from core_compiler.pipeline import GpuOptions, gpu_program
from core_compiler.runtime.differential import check_opencl
from core_compiler.transform.gpu_mapping import MappingOptions
from core_compiler.transform.memory import MemoryOptions
from tests.helpers import check_cpu, only_scop

SOURCE = """
void shift(int n, double u[n], double v[n]) {
  for (int i = 0; i < n; i++)
    v[i] = i > 0 ? u[i - 1] : 0.0;
}
void rising(int n, double u[n], double v[n]) {
  for (int i = 0; i < n; i++)
    v[i] = (i >= 1 && u[i - 1] < u[i]) || (i + 1 < n && u[i + 1] < u[i]) ? 1.0 : 0.0;
}
void edge(int n, int m, double u[n][m], double v[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      v[i][j] = (i > 0 && j > 0 && i < n - 1 && j < m - 1)
                  ? 0.2 * (u[i][j] + u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1])
                  : u[i][j];
}
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("guarded") / "guarded.c"
    p.write_text(SOURCE)
    return str(p)


def test_a_read_under_a_condition_happens_only_where_it_holds(path: str) -> None:
    scop = only_scop(path, "shift").scop
    reads = scop.reads("u")
    assert reads.is_equal(isl.UnionMap.read_from_str(scop.ctx, "[n] -> { S0[i] -> u[i - 1] : 1 <= i < n }"))
    rising = only_scop(path, "rising").scop.reads("u")
    # `u[i]` too: at n = 1 neither side of `||` gets past its bound test
    expected = "[n] -> { S0[i] -> u[o] : 0 <= i < n and ((o = i and (i >= 1 or i + 1 < n)) or (o = i - 1 and i >= 1) or (o = i + 1 and i + 1 < n)) }"
    assert rising.is_equal(isl.UnionMap.read_from_str(rising.get_ctx(), expected))


@pytest.mark.parametrize("function", ["shift", "rising", "edge"])
def test_boundary_code_runs_and_matches_the_original(path: str, function: str) -> None:
    for n in (37, 1, 0):
        params = {"n": n, "m": n + 3} if function == "edge" else {"n": n}
        cpu = check_cpu(path, function, params, threads=2)
        assert cpu.ok, cpu.report()
        device = check_opencl(path, function, params)
        assert device.ok, device.comparison.report()


def test_a_tiles_shared_copy_stays_inside_the_array(path: str) -> None:
    sa = only_scop(path, "edge")
    every_reuse = MemoryOptions(min_shared_uses=1)  # a 5-point stencil: by default its reuse is left to the cache
    gpu = gpu_program(sa, GpuOptions(mapping=MappingOptions(memory=every_reuse)))
    (kernel,) = gpu.kernels
    (promo,) = [p for p in kernel.promotions if p.array == "u" and p.place == "shared"]
    inside = isl.Set.read_from_str(sa.scop.ctx, "[m, n] -> { u[a, b] : 0 <= a < n and 0 <= b < m }")
    assert promo.read.range().is_subset(inside)
    assert promo.size == (34, 34)
    assert "__shared__ double shared_u[34][34];" in generate_cuda(gpu, "edge").kernel_cu


def test_a_condition_it_cannot_model_keeps_the_read_unconditional(tmp_path: Path) -> None:
    """A data-dependent condition: the read counts as always made, as before (a may-read)."""
    p = tmp_path / "data.c"
    p.write_text("void f(int n, double u[n], double v[n]) {\n  for (int i = 0; i < n; i++)\n    v[i] = v[i] > 0 ? u[i] : 0.0;\n}\n")
    scop = only_scop(str(p), "f").scop
    assert scop.reads("u").is_equal(isl.UnionMap.read_from_str(scop.ctx, "[n] -> { S0[i] -> u[i] : 0 <= i < n }"))
