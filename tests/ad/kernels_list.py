"""The kernels the gradient tests and the benchmark run: (file, function, wrt, sizes, size macros)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "kernels"
OWN = ROOT / "tests" / "ad" / "kernels"

Case = tuple[str, str, tuple[str, ...], dict[str, int], dict[str, str | None]]


def _suite(function: str, wrt: tuple[str, ...], sizes: dict[str, int]) -> Case:
    entry = next(k for k in json.loads((SUITE / "suite.json").read_text()) if k["function"] == function)
    return (str(SUITE / entry["file"]), function, wrt, sizes, entry.get("size_limits") or {})


def _own(name: str, wrt: tuple[str, ...], sizes: dict[str, int]) -> Case:
    return (str(OWN / f"{name}.c"), name, wrt, sizes, {})


CASES: list[Case] = [
    _suite("kernel_gemm", ("A", "B", "alpha"), {"ni": 7, "nj": 8, "nk": 9}),
    _suite("kernel_2mm", ("A", "B", "C"), {"ni": 5, "nj": 6, "nk": 7, "nl": 8}),
    _suite("kernel_matvec", ("A", "x"), {"n": 7, "m": 9}),
    _suite("kernel_atax", ("A", "x"), {"m": 6, "n": 8}),
    _suite("kernel_jacobi_1d", ("A", "B"), {"tsteps": 4, "n": 12}),
    _suite("kernel_jacobi_2d", ("A", "B"), {"tsteps": 3, "n": 8}),
    _suite("kernel_seidel_2d", ("A",), {"tsteps": 3, "n": 8}),
    _suite("kernel_trisolv", ("L", "b"), {"n": 9}),
    _suite("kernel_dot_norm", ("x", "y"), {"n": 11}),
    _suite("kernel_correlation", ("data",), {"m": 6, "n": 9}),
    _suite("kernel_covariance", ("data",), {"m": 6, "n": 9}),
    _suite("kernel_softmax", ("X",), {"n": 5, "m": 7}),
    _suite("kernel_lu", ("A",), {"n": 7}),
    _own("dot", ("x", "y"), {"n": 13}),
    _own("norm2", ("x",), {"n": 13}),
    _own("logsumexp", ("X",), {"n": 4, "m": 6}),
    _own("tanh_layer", ("W", "x", "b"), {"n": 5, "m": 7}),
    _own("piecewise", ("x", "w"), {"n": 16}),
    _own("mathmix", ("x", "w"), {"n": 16}),
    _own("iterate", ("x", "c"), {"tsteps": 5, "n": 9}),
    _own("recompute", ("A", "B"), {"n": 4, "m": 5}),
]


def case_id(case: Case) -> str:
    return case[1]
