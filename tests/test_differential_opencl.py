"""Differential tests on PoCL: every suite kernel, mapped to OpenCL work-groups and run on the CPU,
against the original C compiled by the system compiler — at the default sizes, a size that is not a
multiple of the tile size, and sizes 1 and 0."""

from __future__ import annotations

import pytest

from core_compiler.runtime.differential import check_opencl
from tests.conftest import KERNELS, suite

TIME_PARAMS = {"tsteps", "tmax"}


def _scaled(sizes: dict[str, int], value: int) -> dict[str, int]:
    return {k: (min(v, 3) if k in TIME_PARAMS else value) for k, v in sizes.items()}


CASES = []
for k in suite():
    sizes = dict(k["sizes"])  # type: ignore[call-overload]
    for label, params in (("default", sizes), ("odd37", _scaled(sizes, 37)), ("one", _scaled(sizes, 1)), ("zero", _scaled(sizes, 0))):
        CASES.append(pytest.param(k, params, id=f"{str(k['file']).removesuffix('.c')}-{label}"))


@pytest.mark.parametrize(("kernel", "params"), CASES)
def test_opencl_matches_original(kernel: dict[str, object], params: dict[str, int]) -> None:
    result = check_opencl(str(KERNELS / str(kernel["file"])), str(kernel["function"]), params, kernel["size_limits"])  # type: ignore[arg-type]
    assert result.ok, result.comparison.report()
    assert result.kernels >= 1
