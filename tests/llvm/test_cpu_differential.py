"""The LLVM CPU backend against gcc: every suite kernel, in source order and in hexplore's tiled,
OpenMP-parallel order, JIT-compiled at O3 and run on the inputs the gcc-compiled original gets —
at the default sizes, 37 (not a multiple of the tile size), 1 and 0, as the OpenCL check does.

One test per kernel runs the four size sets, so that a kernel whose code does not depend on the
sizes (VLA parameters) is compiled once (`jit_compile` caches by module)."""

from __future__ import annotations

import pytest

from core_compiler.runtime.cpu_llvm import check_llvm_cpu
from tests.conftest import KERNELS, suite

THREADS = 2
TIME_PARAMS = {"tsteps", "tmax"}  # kept small (at most 3), as in test_differential_opencl.py


def _scaled(sizes: dict[str, int], value: int) -> dict[str, int]:
    return {k: (min(v, 3) if k in TIME_PARAMS else value) for k, v in sizes.items()}


def _size_sets(sizes: dict[str, int]) -> list[tuple[str, dict[str, int]]]:
    return [("default", sizes), ("odd37", _scaled(sizes, 37)), ("one", _scaled(sizes, 1)), ("zero", _scaled(sizes, 0))]


@pytest.mark.parametrize("kernel", suite(), ids=lambda k: str(k["file"]).removesuffix(".c"))
def test_llvm_cpu_matches_gcc(kernel: dict[str, object]) -> None:
    sizes = dict(kernel["sizes"])  # type: ignore[call-overload]
    failures = []
    for label, params in _size_sets(sizes):
        result = check_llvm_cpu(
            str(KERNELS / str(kernel["file"])), str(kernel["function"]), params,
            kernel["size_limits"], parallel=True, threads=THREADS,  # type: ignore[arg-type]
        )  # fmt: skip
        if not result.ok:
            failures.append(f"{label} {params}:\n{result.report()}")
        if kernel["parallel"]:
            assert result.parallel_loops >= 1, f"{label}: no loop ran through GOMP_parallel"
    assert not failures, "\n".join(failures)
