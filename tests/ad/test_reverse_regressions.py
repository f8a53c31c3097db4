"""Regression tests for the AD bugs of issue 26, each failing on the code before its fix:

1. reverse mode dropped every assignment under an `if` whose condition reads data (the model
   if-converts it; the adjoint had no statement for it): zero gradients, no remark;
2. a local array was declared as ``double[n] t;`` (C that does not compile), and `grad` exited 0;
3. `AdjointNoAtomics` judged each shadow update alone (``d_U[i-1][j]`` and ``d_U[i+1][j]``);
4. a modulo subscript (the adjoint of a periodic stencil) ran wrong on OpenCL: the host AST
   launched one kernel twice for the same host step;
5. the OpenCL check compared a `float` return value at double tolerance;
6. a step-2 loop or a `j < n && j < i + 3` bound that the reverse sweep runs backwards was
   refused, and so was a function that returns a value.

Gradient checks (finite differences, and forward against reverse by the dot-product test) run
on C and OpenCL (PoCL) at several sizes: non-multiples of the tile size, 1 and 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.ad import NotDifferentiable, differentiate
from core_compiler.ad import emit as ad_emit
from core_compiler.ad.check import check_gradients
from core_compiler.analysis import analyze_file
from core_compiler.runtime.differential import check_opencl
from tests.ad.kernels_list import OWN

IF_CONVERTED = [
    ("relu_if", ("x",), [{"n": 37}, {"n": 1}, {"n": 0}]),
    ("running_max", ("x",), [{"n": 5, "m": 37}, {"n": 33, "m": 2}, {"n": 1, "m": 1}, {"n": 0, "m": 0}]),
    ("guarded_update", ("A", "x"), [{"n": 7, "m": 33}, {"n": 1, "m": 1}, {"n": 0, "m": 0}]),
]
OTHERS = [
    ("local_arrays", ("x",), [{"n": 37}, {"n": 1}, {"n": 0}]),
    ("neighbours", ("U",), [{"n": 35, "m": 3}, {"n": 3, "m": 1}, {"n": 1, "m": 1}]),
    ("periodic", ("x",), [{"nmodes": 37, "m": 5}, {"nmodes": 2, "m": 3}, {"nmodes": 1, "m": 1}, {"nmodes": 0, "m": 0}]),
    ("strided", ("x", "A"), [{"n": 37}, {"n": 6}, {"n": 5}, {"n": 1}, {"n": 0}]),
    ("energy", ("x",), [{"n": 37}, {"n": 1}, {"n": 0}]),
]
CHECKS = [(name, wrt, sizes) for name, wrt, sets in IF_CONVERTED + OTHERS for sizes in sets]


def _id(case: tuple[str, tuple[str, ...], dict[str, int]]) -> str:
    name, _, sizes = case
    return name + "-" + "-".join(f"{k}{v}" for k, v in sizes.items())


def _check(case: tuple[str, tuple[str, ...], dict[str, int]], backend: str) -> None:
    name, wrt, sizes = case
    result = check_gradients(str(OWN / f"{name}.c"), name, wrt, sizes, backend=backend)
    if all(v > 1 for v in sizes.values()):
        assert result.jvp_norm > 1e-8, f"{name}: the Jacobian along u is zero; the check would be vacuous"
    assert result.ok, result.report()


@pytest.mark.slow
@pytest.mark.parametrize("case", CHECKS, ids=_id)
def test_gradients_on_c(case: tuple[str, tuple[str, ...], dict[str, int]]) -> None:
    _check(case, "c")


@pytest.mark.slow
@pytest.mark.parametrize("case", CHECKS, ids=_id)
def test_gradients_on_opencl(case: tuple[str, tuple[str, ...], dict[str, int]]) -> None:
    _check(case, "opencl")


# ----------------------------------------------------------------- 1. if-converted statements


def test_an_if_on_data_has_its_adjoint() -> None:
    d = differentiate(str(OWN / "relu_if.c"), "relu_if", ("x",))
    sweep = d.source.split("reverse sweep")[1]
    assert "d_x[i] += d_y[i] * (x[i] > 1.0 ? 0.0 : 1.0) * 0.5;" in sweep  # the `else`
    assert "d_x[i] += d_y[i] * ((x[i] > 1.0 ? 1.0 : 0.0) * x[i] + (x[i] > 1.0 ? 1.0 : 0.0) * x[i]);" in sweep
    assert any(r.name == "DerivativeIsScop" for r in d.remarks)


def test_the_condition_reads_the_taped_value_of_what_the_if_assigns() -> None:
    d = differentiate(str(OWN / "running_max.c"), "running_max", ("x",))
    assert [t.value for t in d.tapes] == ["r[i]"]
    assert "x[i][j] > tape_S1_r[i][j] ? 1.0 : 0.0" in d.source


def test_a_statement_the_reverse_sweep_cannot_map_is_refused_with_a_remark(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old behaviour (the `if` as written, its assignments without a statement of the model)
    is now a refusal, never a silently zero adjoint."""
    monkeypatch.setattr(ad_emit, "model_body", lambda stmts, scop: stmts)
    with pytest.raises(NotDifferentiable, match="use --mode forward") as err:
        differentiate(str(OWN / "relu_if.c"), "relu_if", ("x",))
    notes = [r for r in err.value.remarks if r.name == "NotInReverseSweep"]
    assert [r.range.line for r in notes] == [8, 10]
    assert differentiate(str(OWN / "relu_if.c"), "relu_if", ("x",), mode="forward")


def test_a_min_in_a_subscript_keeps_its_adjoint(tmp_path: Path) -> None:
    """The model reads ``x[MIN(i + 1, n - 1)]`` as two reads, a statement node of its own."""
    src = tmp_path / "clamp.c"
    src.write_text("#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
                   "void clamp(int n, double x[n], double y[n])\n{\n"
                   "  for (int i = 0; i < n; i++)\n    y[i] = x[i] * x[MIN(i + 1, n - 1)];\n}\n")  # fmt: skip
    d = differentiate(str(src), "clamp", ("x",))
    assert d.source.split("reverse sweep")[1].count("d_x[") == 3  # x[i], x[i + 1], x[n - 1]
    for sizes in ({"n": 9}, {"n": 1}):
        result = check_gradients(str(src), "clamp", ("x",), sizes, backend="c")
        assert result.ok, result.report()


# ------------------------------------------------------------------------- 2. local arrays


def test_local_arrays_are_declared_as_c_declares_them() -> None:
    d = differentiate(str(OWN / "local_arrays.c"), "local_arrays", ("x",))
    assert "double t[n];" in d.source and "double u[2];" in d.source
    assert "double d_t[n];" in d.source and "double d_u[2];" in d.source  # zeroed by loops
    assert "d_t[hx_z0] = 0.0;" in d.source and "[n] " not in d.source.replace("[n] = ", "")
    assert any(r.name == "DerivativeIsScop" for r in d.remarks)
    fwd = differentiate(str(OWN / "local_arrays.c"), "local_arrays", ("x",), mode="forward")
    assert "double d_t[n];" in fwd.source and "double d_u[2];" in fwd.source


def test_derivative_code_that_does_not_compile_is_an_error_exit(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from tui.cli import main

    monkeypatch.setattr(ad_emit.Context, "declaration", lambda self, typ, name: f"{typ} {name}")  # the old text
    with pytest.raises(NotDifferentiable, match="does not compile"):
        differentiate(str(OWN / "local_arrays.c"), "local_arrays", ("x",))
    code = main(["grad", str(OWN / "local_arrays.c"), "--function", "local_arrays", "--wrt", "x"])
    assert code == 1 and "does not compile" in capsys.readouterr().err


# --------------------------------------------------------------- 3. atomics from dependences


def test_no_atomics_is_judged_on_all_updates_of_the_adjoint() -> None:
    d = differentiate(str(OWN / "neighbours.c"), "neighbours", ("U",))
    assert not [r for r in d.remarks if r.name == "AdjointNoAtomics"]
    (note,) = [r for r in d.remarks if r.name == "AdjointReduction"]
    assert note.args["atomics"] == ["d_U[i - 1][j]", "d_U[i + 1][j]"]
    assert "reduction over loop(s) `i` (" in note.message and "`j`" not in note.message
    # what the adjoint's own dependences say: its reverse-sweep `i` loop is not parallel, `j` is
    fa = analyze_file(str(OWN / "neighbours.c"), d.translation_unit, only=d.core)
    loops = fa.functions[0].scops[0].deps.loops
    assert sorted((lp.loop.var, lp.parallel) for lp in loops) == [("i", False), ("i", True), ("j", True), ("j", True)]


def test_updates_of_different_statements_share_elements() -> None:
    d = differentiate(str(OWN / "tanh_layer.c"), "tanh_layer", ("W", "x"))
    racy = [r for r in d.remarks if r.name == "AdjointReduction"]
    assert racy and "`d_x[j]` is a reduction over loop(s) `i`" in racy[0].message


# ---------------------------------------------------------------- 4. modulo subscripts on OpenCL


@pytest.mark.slow
@pytest.mark.parametrize("sizes", [{"nmodes": 37, "m": 5}, {"nmodes": 1, "m": 1}])
def test_the_periodic_adjoint_runs_right_on_opencl(tmp_path: Path, sizes: dict[str, int]) -> None:
    """The adjoint's C alone, as any loop nest: `S0[i] -> [i]` and `S1[i] -> [0]` on the host
    launched the kernel at step 0 twice (every statement of that step ran twice)."""
    d = differentiate(str(OWN / "periodic.c"), "periodic", ("x",))
    src = tmp_path / "periodic_grad.c"
    src.write_text(d.translation_unit)
    result = check_opencl(str(src), "periodic_grad", sizes)
    assert result.comparison.ok, result.comparison.report()


# ------------------------------------------------------------ 5. float return values on OpenCL


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 33])
def test_a_float_return_value_is_compared_as_a_float(tmp_path: Path, n: int) -> None:
    """C rounds ``s * 0.1f`` in float; the check evaluates the return expression from the
    device's `s`: the last bit may differ, well within float's tolerance, not double's."""
    src = tmp_path / "fret.c"
    src.write_text(
        "float scaled_sum(int n, float x[n], float y[n])\n{\n  float s = 0.0f;\n"
        "  for (int i = 0; i < n; i++) {\n    y[i] = x[i] * 0.7f;\n    s += x[i] / 3.0f;\n  }\n"
        "  return s * 0.1f + 1.0f / 3.0f;\n}\n"
    )
    result = check_opencl(str(src), "scaled_sum", {"n": n})
    (ret,) = [a for a in result.comparison.arrays if a.name == "return"]
    assert ret.rtol == 1e-4 and result.comparison.ok, result.comparison.report()


# ------------------------------------------------------------------ 6. loops run backwards


def test_step_two_and_two_bounds_run_backwards() -> None:
    d = differentiate(str(OWN / "strided.c"), "strided", ("x", "A"))
    sweep = d.source.split("reverse sweep")[1]
    assert "for (int j = (n < i + 3 ? n : i + 3) - 1; j >= i; j--)" in sweep
    assert "for (int i = 2 + 2 * ((n - 1 - 2) / 2); i >= 2 && i < n; i -= 2)" in sweep
    assert [t.sizes for t in d.tapes] == [("n",)]  # the box of `i += 2`, no `mod` in the size
    assert any(r.name == "DerivativeIsScop" for r in d.remarks)


# ------------------------------------------------------------- 6. what a function returns


def test_the_final_return_is_an_output() -> None:
    d = differentiate(str(OWN / "energy.c"), "energy", ("x",), ("return",))
    assert d.activity.of == ("hx_return",) and d.shadows == ("x", "g", "hx_return")
    assert "void energy_grad(int n, double x[n], double g[n], double hx_return[1], double d_x[restrict n], " \
        "double d_g[restrict n], double d_hx_return[restrict 1])" in d.source
    assert "hx_return[0] = 0.5 * e;" in d.source and "d_e += d_hx_return[0] * 0.5;" in d.source
    both = differentiate(str(OWN / "energy.c"), "energy", ("x",), mode="forward")
    assert both.activity.of == ("g", "hx_return") and "d_hx_return[0] = 0.5 * d_e;" in both.source


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["c", "opencl"])
def test_the_gradient_of_the_return_value_alone(backend: str) -> None:
    for sizes in ({"n": 13}, {"n": 1}):
        result = check_gradients(str(OWN / "energy.c"), "energy", ("x",), sizes, of=("return",), backend=backend)
        assert result.jvp_norm > 1e-8 and result.ok, result.report()


def test_a_literal_standing_for_a_variable_is_printed_as_its_value() -> None:
    """A front-end rewrite that replaces `j` by its value leaves the literal with `j`'s range;
    only a name that is not a variable is a macro to print back (`a[i + j]` was printed, with
    `j` undeclared in the reverse sweep or, worse, declared with another value)."""
    from core_compiler.ad.cprint import CPrinter, SourceText
    from core_compiler.frontend import ir
    from core_compiler.source import SourceRange

    text = "int j = 1; double a[N];\n"
    one = ir.IntLit(1, SourceRange("f.c", 1, 5, 1, 6))  # over `j`
    size = ir.IntLit(8, SourceRange("f.c", 1, 21, 1, 22))  # over `N`
    printer = CPrinter(SourceText("f.c", text), frozenset({"j"}))
    assert (printer.expr(one), printer.expr(size)) == ("1", "N")


def test_the_adjoint_of_a_guarded_read_is_guarded(tmp_path: Path) -> None:
    """``x[MAX(i - 2, 0)]`` reads ``x[i - 2]`` only where ``i - 2 > 0``: its increment too (it
    wrote ``d_x[-2]`` and crashed the fuzzer's seed 29); a MAX loop start reverses in parentheses."""
    src = tmp_path / "lag.c"
    src.write_text("#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
                   "void lag(int n, double x[n], double y[n])\n{\n  for (int i = 0; i < n; i++)\n"
                   "    for (int j = MAX(1, i - 2); j < n; j++)\n      y[j] = y[j] * 0.5 + x[MAX(i - 2, 0)];\n}\n")  # fmt: skip
    d = differentiate(str(src), "lag", ("x",))
    assert "if (i - 2 > 0) d_x[i - 2] +=" in d.source and "if (!(i - 2 > 0)) d_x[0] +=" in d.source
    assert any(r.name == "DerivativeIsScop" for r in d.remarks)
    for sizes in ({"n": 9}, {"n": 1}):
        result = check_gradients(str(src), "lag", ("x",), sizes, backend="c")
        assert result.ok, result.report()


GUARD_CASES = [("guarded_choice", n) for n in (37, 6, 2, 1, 0)] + [("both_sides", n) for n in (37, 1, 0)]


@pytest.mark.parametrize(("name", "n"), GUARD_CASES, ids=[f"{k}-n{n}" for k, n in GUARD_CASES])
def test_the_guard_of_an_increment_reads_what_the_forward_sweep_read(name: str, n: int) -> None:
    """The guard of an increment is its read's `?:` conditions, and in `guarded_choice` one reads
    ``x[i]``, which a later iteration overwrites: the guard read the final value while the partials
    read the tape (dot-product test 0.34 at n = 37). In `both_sides`, ``x[i]`` read on both sides of
    ``i > 0 ? .. : ..`` had one increment under ``i > 0`` (0.30); now one per side. Each failed
    before its fix (fuzzer seed 261)."""
    d = differentiate(str(OWN / f"{name}.c"), name, ("x",))
    guards = {"guarded_choice": ["if (tape_S0_x[i] > 1.0 && i > 0) d_x[i - 1] +="],
              "both_sides": ["if (i > 0) d_x[i] +=", "if (!(i > 0)) d_x[i] +="]}[name]  # fmt: skip
    assert all(g in d.source for g in guards), d.source
    result = check_gradients(str(OWN / f"{name}.c"), name, ("x",), {"n": n}, backend="c")
    if n > 1:
        assert result.jvp_norm > 1e-8, "the Jacobian along u is zero; the check would be vacuous"
    assert result.ok, result.report()
