"""File-scope variables: global arrays, pointers and the sizes a function reads are its inputs,
modeled like parameters; `const` tables (global or local) pass their own values; a nest that
writes a global scalar is refused with a remark on the write."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from core_compiler.ad import NotDifferentiable, differentiate
from core_compiler.frontend import ir
from core_compiler.runtime.reference import wrapper_source
from core_compiler.runtime.signature import compute_layout
from tests.helpers import analyze, named, range_of, runs_everywhere

SOURCE = """\
#ifndef N
#define N 40
#endif
double A[N][N], B[N][N];
static const double w[3] = {0.25, 0.5, 0.25};

void smooth(int n)
{
  for (int i = 1; i < n - 1; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = w[0] * A[i - 1][j] + w[1] * A[i][j] + w[2] * A[i + 1][j];
}

int rows = 10;
double *x, *y;
void axpy(double a)
{
  for (int i = 0; i < rows; i++)
    y[i] = a * x[i] + y[i];
}

static const int perm[2][4] = {{3, 2, 1, 0}, {0, 1}};
void gather(int n, int out[n][4], const int in[n][4])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 4; j++)
      out[i][j] = in[i][j] * perm[i % 2][j] + perm[1][1];
}

void conv(int n, double out[n], const double in[n + 4])
{
  const double k[5] = {0.1, 0.2, 0.4, 0.2, 0.1};
  for (int i = 0; i < n; i++) {
    out[i] = 0;
    for (int t = 0; t < 5; t++)
      out[i] += k[t] * in[i + t];
  }
}

const int LEN = 50;
const double SCALE = 0.5;
void scale(double *a)
{
  for (int i = 0; i < LEN; i++)
    a[i] *= SCALE;
}

double total;
void accumulate(int n, const double *v)
{
  for (int i = 0; i < n; i++)
    total += v[i];
}
"""


def _function(name: str) -> ir.Function:
    return next(f.function for f in analyze(SOURCE).functions if f.function.name == name)


def test_the_globals_a_function_uses_are_its_inputs() -> None:
    smooth, axpy = _function("smooth"), _function("axpy")
    assert [g.name for g in smooth.globals] == ["B", "w", "A"]
    assert [p.name for p in smooth.inputs] == ["n", "B", "w", "A"]
    assert sorted(g.name for g in axpy.globals) == ["rows", "x", "y"]
    assert smooth.param("w") is not None and smooth.param("w").constant  # type: ignore[union-attr]
    assert smooth.param("w").values == (0.25, 0.5, 0.25)  # type: ignore[union-attr]
    assert not smooth.param("A").constant  # type: ignore[union-attr]


def test_a_table_passes_its_values_with_what_the_braces_leave_out_as_zero() -> None:
    perm = _function("gather").param("perm")
    assert perm is not None and perm.values == (3, 2, 1, 0, 0, 1, 0, 0)
    local = _function("conv").param("k")  # a local `const` table is an input too
    assert local is not None and local.values == (0.1, 0.2, 0.4, 0.2, 0.1)


def test_global_arrays_are_modeled_without_an_aliasing_assumption() -> None:
    f = next(f for f in analyze(SOURCE).functions if f.function.name == "smooth")
    assert len(f.scops) == 1 and not named(list(f.remarks), "NoAliasAssumption")
    assert {a.name for a in f.scops[0].scop.arrays} == {"A", "B", "w"}
    pointers = next(f for f in analyze(SOURCE).functions if f.function.name == "axpy")
    assert pointers.scops and pointers.scops[0].scop.params == ("rows",)
    assert named(list(pointers.remarks), "NoAliasAssumption")  # two global pointers may overlap


def test_a_nest_that_writes_a_global_scalar_is_refused_at_the_write() -> None:
    f = next(f for f in analyze(SOURCE).functions if f.function.name == "accumulate")
    (remark,) = named(list(f.remarks), "GlobalScalar")
    write = range_of(SOURCE, "total += v[i]")
    assert remark.range == replace(write, end_col=write.col + len("total"))
    assert "writes the global variable `total`" in remark.message and not f.scops


def test_the_reference_sets_the_globals_before_the_call_and_reads_arrays_back() -> None:
    layout = compute_layout(_function("smooth"), {"n": 5})
    assert [(s.name, s.glob) for s in layout.slots] == [("n", ""), ("B", "array"), ("w", "table"), ("A", "array")]
    text = wrapper_source("t.c", layout)
    assert "smooth(*(int *)args[0]);" in text
    assert "__builtin_memcpy(A, args[3], sizeof A);" in text
    assert "__builtin_memcpy(args[1], B, sizeof B);" in text
    assert "w," not in text and "args[2]" not in text  # a table is read, never set
    constants = compute_layout(_function("scale"), {"LEN": 3})  # a `const` keeps its value, and is not set
    assert {s.name: (s.glob, getattr(s, "value", None)) for s in constants.slots} == {
        "a": ("", None), "LEN": ("constant", 50), "SCALE": ("constant", 0.5)
    }
    assert "LEN =" not in wrapper_source("t.c", constants)
    pointers = wrapper_source("t.c", compute_layout(_function("axpy"), {"rows": 3}))
    assert "rows = *(int *)args[" in pointers and "x = args[" in pointers


@pytest.mark.parametrize("function", ["smooth", "axpy", "gather", "conv", "scale"])
def test_functions_that_use_globals_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "globals.c"
    path.write_text(SOURCE)
    runs_everywhere(str(path), function, [{"n": n, "rows": n} for n in (37, 33, 1, 0)])


def test_derivatives_with_respect_to_a_global_ask_for_a_parameter(tmp_path: Path) -> None:
    path = tmp_path / "globals.c"
    path.write_text(SOURCE)
    with pytest.raises(NotDifferentiable, match="`A` is a global variable; derivatives are taken with respect to parameters"):
        differentiate(str(path), "smooth", ("A",))
