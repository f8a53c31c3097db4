"""Register tiles and full-tile code (issue 27: gemm's kernel within 2x of cuBLAS).

A band of two parallel members over a sequential one whose sums stay in registers (gemm, 2mm,
syrk, …) gets 32x64 tiles, 16 steps of `k` and 16x8 threads: 16 sums per thread, each value
loaded from shared memory feeding 4 of them. Each phase of a kernel also has a second AST for
tiles wholly inside the loop bounds, run when the tile is such a tile, without a bound check per
point. The suite's default sizes (30 to 50) hardly fill a 32x64 tile, so the differential runs
here use sizes that give full tiles and partial ones (70 = 64 + 6), exact multiples and 1.
Shared memory only for elements a tile uses often (`MemoryOptions.min_shared_uses`): not jacobi-2d's stencil.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.codegen.ast_print import expr_c
from core_compiler.pipeline import gpu_program
from core_compiler.runtime.differential import check_opencl
from core_compiler.transform.gpu_mapping import REGISTER_BLOCK, REGISTER_TILE, Kernel
from tests.conftest import KERNELS, suite
from tests.cuda_cpu import harness
from tests.helpers import polybench_analysis

POLYBENCH = Path(__file__).parent / "polybench"
SUITE = {str(k["file"]).removesuffix(".c"): k for k in suite()}
TIME_PARAMS = {"tsteps", "tmax"}


def _kernels(name: str) -> tuple[Kernel, ...]:
    (sa,) = polybench_analysis(name).functions[0].scops
    return gpu_program(sa).kernels


def test_gemm_sums_sixteen_points_per_thread_in_registers() -> None:
    (k,) = _kernels("gemm")
    assert k.shape.tile == REGISTER_TILE and tuple(reversed(k.block)) == REGISTER_BLOCK
    assert {p.array: p.place for p in k.promotions} == {"A": "shared", "B": "shared", "C": "register"}


def test_full_tiles_step_k_without_bound_checks() -> None:
    (k,) = _kernels("gemm")
    body = [ph for ph in k.phases.values() if ph.full is not None and "S1(" in ph.full.to_C_str()]
    assert len(body) >= 1, [ph.name for ph in k.phases.values()]
    full, general = body[0].full.to_C_str(), body[0].ast.to_C_str()  # type: ignore[union-attr]
    k_loop = full[full.rindex("for (") :]
    assert "if (" not in k_loop, k_loop
    assert k_loop.count("S1(") == 16  # the thread's 4x4 points, unrolled
    assert "if (" in general  # partial tiles keep their checks
    assert "ni >= T0 + 32" in expr_c(body[0].full_when)  # type: ignore[arg-type]


def test_stencils_keep_the_default_tiles_and_global_memory() -> None:
    for k in _kernels("jacobi-2d"):
        assert k.shape.tile == (32, 32)
        assert not k.promotions  # each element used about 4 times in a tile: the L1 cache's job
        reasons = {g.array: g.reason for g in k.global_accesses}
        assert any("used about 4 times" in r for r in reasons.values()), reasons


def _sizes(name: str, value: int) -> dict[str, int]:
    sizes = dict(SUITE[name]["sizes"])  # type: ignore[call-overload]
    return {p: (min(v, 3) if p in TIME_PARAMS else value) for p, v in sizes.items()}


# 70: full tiles and partial ones (make test: gemm, 2mm, trmm; syrk, syr2k and symm have gemm's
# and trmm's shapes); 64 and 1: exact multiples and one point (long tier)
CASES = [
    pytest.param(name, value, id=f"{name}-{value}",
                 marks=() if value == 70 and name in ("gemm", "2mm", "trmm") else pytest.mark.long)
    for name in ("gemm", "2mm", "syrk", "syr2k", "symm", "trmm")
    for value in (70, 64, 1)
]


@pytest.mark.slow  # runs generated code
@pytest.mark.parametrize(("name", "value"), CASES)
def test_register_tiles_match_the_original_on_opencl(name: str, value: int) -> None:
    k = SUITE[name]
    result = check_opencl(str(KERNELS / str(k["file"])), str(k["function"]), _sizes(name, value), k["size_limits"])  # type: ignore[arg-type]
    assert result.ok, result.comparison


@pytest.mark.slow
def test_register_tiles_match_the_original_as_cuda_on_the_cpu() -> None:
    why = harness.unavailable()
    if why:
        pytest.skip(why)
    cases = {}
    for name, params in (("gemm", {"ni": 70, "nj": 130, "nk": 37}), ("syrk", {"n": 70, "m": 20})):
        k = SUITE[name]
        label = f"{name}-{'-'.join(map(str, params.values()))}"
        cases[label] = harness.prepare(str(KERNELS / str(k["file"])), str(k["function"]), params, size_limits=k["size_limits"], name=label)  # type: ignore[arg-type]
    results = harness.run_cases(cases.values(), batch=2)
    assert set(results) == set(cases)
    assert all(r.ok for r in results.values()), "\n\n".join(r.report() for r in results.values() if not r.ok)
