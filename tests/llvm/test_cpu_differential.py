"""The LLVM CPU backend against gcc: every suite kernel, every CPU variant (`choose_variant`:
tiled, untiled, unrolled-and-jammed, … and the source order), OpenMP-parallel, JIT-compiled at O3
and run on the inputs the gcc-compiled original gets — at the default sizes plus 7 (plus a tile
more where that is not past one: each size its own, none a multiple of the tile size), at the
default sizes, 1 and 0.

Building the variants, not running them, is what takes the time (isl's AST of a skewed stencil's
4x4 register tiles: seconds). The arrays' macros stay those of the first set, so the code is the
same at every set and built once (`compile_variant` keeps it); only the loops' sizes change."""

from __future__ import annotations

import pytest

from core_compiler.frontend import ParseOptions
from core_compiler.runtime import macro_defines
from core_compiler.runtime.cpu_variants import check_llvm_cpu
from tests.conftest import KERNELS, suite

THREADS = 2
TILE = 32
TIME_PARAMS = {"tsteps", "tmax"}  # kept small (at most 3), as in test_differential_opencl.py


def _scaled(sizes: dict[str, int], value: int) -> dict[str, int]:
    return {k: (min(v, 3) if k in TIME_PARAMS else value) for k, v in sizes.items()}


def _size_sets(sizes: dict[str, int]) -> list[tuple[str, dict[str, int]]]:
    odd = {k: (v if k in TIME_PARAMS else v + 7 + (TILE if v + 7 <= TILE else 0)) for k, v in sizes.items()}
    return [("default+7", odd), ("default", sizes), ("one", _scaled(sizes, 1)), ("zero", _scaled(sizes, 0))]


@pytest.mark.parametrize("kernel", suite(), ids=lambda k: str(k["file"]).removesuffix(".c"))
def test_llvm_cpu_matches_gcc(kernel: dict[str, object]) -> None:
    sizes = dict(kernel["sizes"])  # type: ignore[call-overload]
    failures = []
    sets = _size_sets(sizes)
    macros = ParseOptions(defines=macro_defines(sets[0][1], kernel["size_limits"]))  # type: ignore[arg-type]
    for label, params in sets:
        result = check_llvm_cpu(
            str(KERNELS / str(kernel["file"])), str(kernel["function"]), params, parallel=True, threads=THREADS, parse=macros,
        )  # fmt: skip
        if not result.ok:
            failures.append(f"{label} {params}:\n{result.report()}")
        if kernel["parallel"]:
            assert result.parallel_loops >= 1, f"{label}: no loop ran through GOMP_parallel"
    assert not failures, "\n".join(failures)
