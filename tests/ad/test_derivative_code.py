"""Golden derivative code, remarks, rejections, the `grad` command and the JAX-style API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core_compiler.ad import NotDifferentiable, differentiate
from core_compiler.ad.api import Kernel, grad, jvp, vjp
from core_compiler.frontend import ParseOptions
from tests.ad.kernels_list import OWN, ROOT, SUITE

GOLDEN_CASES = [
    ("gemm_grad.c", SUITE / "gemm.c", "kernel_gemm", ("A", "B"), "reverse"),
    ("gemm_jvp.c", SUITE / "gemm.c", "kernel_gemm", ("A", "B", "alpha"), "forward"),
    ("iterate_grad.c", OWN / "iterate.c", "iterate", ("x",), "reverse"),
    ("softmax_grad.c", SUITE / "softmax.c", "kernel_softmax", ("X",), "reverse"),
    ("trisolv_grad.c", SUITE / "trisolv.c", "kernel_trisolv", ("L", "b"), "reverse"),
]


@pytest.mark.parametrize("case", GOLDEN_CASES, ids=lambda c: c[0])
def test_golden_derivative_code(case, golden) -> None:  # type: ignore[no-untyped-def]
    name, path, function, wrt, mode = case
    d = differentiate(str(path), function, wrt, mode=mode)
    golden(f"ad/{name}", d.source)
    assert any(r.name == "DerivativeIsScop" for r in d.remarks), [r.message for r in d.remarks]


def _names(d, kind: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.name for r in d.remarks if r.name == kind]


def test_activity_leaves_inactive_arrays_without_adjoints() -> None:
    d = differentiate(str(SUITE / "gemm.c"), "kernel_gemm", ("A",), ("C",))
    assert d.activity.active == frozenset({"A", "C"})
    assert "d_B" not in d.source and "d_A[i][k] +=" in d.source
    assert any("inactive" in r.message and "`B`" in r.message for r in d.remarks)


def test_tape_versus_direct_read_versus_recompute() -> None:
    taped = differentiate(str(OWN / "iterate.c"), "iterate", ("x",))
    assert [t.name for t in taped.tapes] == ["tape_S0_x"] and _names(taped, "Taped")
    assert taped.core == "iterate_grad_core"
    direct = differentiate(str(SUITE / "gemm.c"), "kernel_gemm", ("A", "B"))
    assert not direct.tapes  # A and B are never overwritten: read directly in the reverse sweep
    recomputed = differentiate(str(OWN / "recompute.c"), "recompute", ("A", "B"))
    assert not recomputed.tapes and _names(recomputed, "Recomputed")


def test_reduction_or_plain_increment_from_access_relations() -> None:
    d = differentiate(str(OWN / "tanh_layer.c"), "tanh_layer", ("W", "x"))
    racy = [r for r in d.remarks if r.name == "AdjointReduction"]
    assert racy and "`d_x[j]` is a reduction over loop(s) `i`" in racy[0].message
    assert "`d_W[i][j]`" in racy[0].message and "no atomics" in racy[0].message


def test_non_differentiable_operation_is_a_remark_with_its_range(tmp_path: Path) -> None:
    src = tmp_path / "flr.c"
    src.write_text(
        "#include <math.h>\n"
        "void flr(int n, double x[n], double y[n])\n{\n"
        "  for (int i = 0; i < n; i++)\n"
        "    y[i] = floor(x[i]) + x[i];\n}\n"
    )
    d = differentiate(str(src), "flr", ("x",))
    (note,) = [r for r in d.remarks if r.name == "NonDifferentiable"]
    assert (note.range.line, note.range.col) == (5, 12) and "floor" in note.message
    assert "d_x[i] += d_y[i];" in d.source


def test_function_that_is_not_a_scop_is_refused_with_ranges(tmp_path: Path) -> None:
    src = tmp_path / "ind.c"
    src.write_text("void ind(int n, int idx[n], double x[n], double y[n])\n{\n"
                   "  for (int i = 0; i < n; i++)\n    y[i] = x[idx[i]];\n}\n")  # fmt: skip
    with pytest.raises(NotDifferentiable) as err:
        differentiate(str(src), "ind", ("x",))
    assert err.value.remarks and err.value.remarks[0].range.line == 4


def test_wrt_must_name_a_floating_point_parameter() -> None:
    with pytest.raises(NotDifferentiable, match="`n` is not a floating-point parameter"):
        differentiate(str(OWN / "dot.c"), "dot", ("n",))


def test_macro_sizes_stay_macros_in_the_derivative() -> None:
    d = differentiate(str(SUITE / "gemm.c"), "kernel_gemm", ("A",), parse_options=ParseOptions(defines=("NI=5",)))
    assert "DATA_TYPE d_A[restrict NI][NK]" in d.source


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.slow  # the CLI in a subprocess, and a run
def test_cli_grad_prints_code_and_checks() -> None:
    p = _cli("grad", str(OWN / "mathmix.c"), "--function", "mathmix", "--wrt", "x,w", "--mode", "forward",
             "--check", "--param", "n=10")  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert "void mathmix_jvp(" in p.stdout and "d_y[i] = " in p.stdout
    assert p.stdout.count(": ok") == 2  # C and OpenCL
    assert "[Analysis:Activity]" in p.stderr


@pytest.mark.slow  # the CLI in a subprocess, two checks
def test_cli_grad_check_defaults_the_sizes_as_run_does() -> None:
    p = _cli("grad", str(OWN / "dot.c"), "--function", "dot", "--wrt", "x", "--check")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "check sizes: n=64\n" in p.stdout and p.stdout.count("(n=64): ") == 2 and p.stdout.count(": ok") == 2


@pytest.mark.slow  # the CLI in subprocesses
def test_cli_grad_errors() -> None:
    bad = _cli("grad", str(OWN / "dot.c"), "--function", "dot", "--wrt", "q")
    assert bad.returncode == 1 and "`q` is not a floating-point parameter" in bad.stderr
    cuda = _cli("grad", str(OWN / "dot.c"), "--function", "dot", "--wrt", "x", "--target", "cuda")
    assert cuda.returncode == 0 and "__global__" in cuda.stdout


def test_api_jvp_vjp_grad_match_the_analytic_gradient() -> None:
    k = Kernel(str(OWN / "norm2.c"), "norm2")
    x = np.array([1.0, 2.0, 2.0, 4.0])
    args = {"n": 4, "x": x, "r": np.zeros(1)}
    norm = np.linalg.norm(x)
    assert k(args)["r"][0] == pytest.approx(norm)
    out, tangent = jvp(k, args, {"x": np.ones(4)})
    assert out["r"][0] == pytest.approx(norm) and tangent["r"][0] == pytest.approx(x.sum() / norm)
    _, pullback = vjp(k, args, ("x",))
    np.testing.assert_allclose(pullback({"r": np.array([2.0])})["x"], 2 * x / norm, rtol=1e-12)
    np.testing.assert_allclose(grad(k, ("x",), "r")(args)["x"], x / norm, rtol=1e-12)


def test_api_scalar_parameter_gradient() -> None:
    k = Kernel(str(SUITE / "gemm.c"), "kernel_gemm", defines=("NI=3", "NJ=4", "NK=5"))
    rng = np.random.default_rng(1)
    A, B, C = rng.random((3, 5)), rng.random((5, 4)), rng.random((3, 4))
    args = {"ni": 3, "nj": 4, "nk": 5, "alpha": 1.5, "beta": 0.5, "C": C, "A": A, "B": B}
    g = grad(k, ("alpha", "A"), "C")(args)
    assert g["alpha"] == pytest.approx(float((A @ B).sum()))
    np.testing.assert_allclose(g["A"], 1.5 * np.ones((3, 4)) @ B.T, rtol=1e-12)


def test_forward_mode_reads_only_what_the_selected_side_reads() -> None:
    """`y[i] = i > 0 ? x[i] * x[i - 1] : 2.0 * x[i]`: the tangent was
    ``(i > 0 ? 1.0 : 0.0) * x[i] * d_x[i - 1] + …``, which at i = 0 reads ``d_x[-1]`` and ``x[-1]``
    and is NaN where those are (a gradient check failed now and then in `make test`). Each product
    by such a factor is now under the `?:`."""
    source = differentiate(str(OWN / "both_sides.c"), "both_sides", ("x",), mode="forward").source
    assert "(i > 0 ? x[i] * d_x[i - 1] : 0.0)" in source
    assert "? 1.0 : 0.0) *" not in source and "? 0.0 : 1.0) *" not in source
