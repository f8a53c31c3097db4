"""Gradient checks on real compiled code: central finite differences along random directions and
the dot-product test <J u, w> = <u, Jᵀ w>, forward and reverse mode, on C and on OpenCL (PoCL)."""

from __future__ import annotations

import pytest

from core_compiler.ad.check import check_gradients
from tests.ad.kernels_list import CASES, Case, case_id

# OpenCL on every kernel is in the `slow` set; these run by default (cold PoCL caches are slow).
OPENCL_DEFAULT = {"kernel_trisolv", "norm2", "iterate"}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gradients_on_c(case: Case) -> None:
    path, function, wrt, sizes, limits = case
    result = check_gradients(path, function, wrt, sizes, size_limits=limits, backend="c")
    assert result.jvp_norm > 1e-8, f"{function}: the Jacobian along u is zero; the check would be vacuous"
    assert result.ok, result.report()


@pytest.mark.parametrize(
    "case",
    [c if c[1] in OPENCL_DEFAULT else pytest.param(c, marks=pytest.mark.slow) for c in CASES],
    ids=case_id,
)
def test_gradients_on_opencl(case: Case) -> None:
    path, function, wrt, sizes, limits = case
    result = check_gradients(path, function, wrt, sizes, size_limits=limits, backend="opencl")
    assert result.kernels[0] >= 1 and result.kernels[1] >= 1, "the derivatives were not mapped to kernels"
    assert result.ok, result.report()
