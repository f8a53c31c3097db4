"""``if (n < 4) return;`` before the loops of a ``void`` function is the condition of the loops that
follow it: they are modeled, run and match for sizes on both sides of the guard. NULL checks of
array pointers are taken as false, with a remark; a ``return`` inside a loop still stops modeling."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.errors import NotCheckable
from core_compiler.frontend import ir
from core_compiler.runtime.differential import check_opencl
from tests.helpers import analyze, check_cpu, named, range_of, runs_everywhere

GUARDS = """
#include <stddef.h>
void small(int n, double *a) {
  if (n < 4) return;
  for (int i = 0; i < n; i++)
    a[i] = i;
}
void nullcheck(int n, double *a, const double *b) {
  if (a == NULL || !b || n <= 0)
    return;
  for (int i = 0; i < n; i++)
    a[i] = 2 * b[i];
}
void trailing(int n, double *a) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * a[i];
  if (n > 8)
    return;
  return;
}
void middle(int n, double *a, double *b) {
  for (int i = 0; i < n; i++)
    a[i] = 1;
  if (n > 100)
    return;
  for (int i = 0; i < n; i++)
    b[i] = a[i] + 1;
}
"""


def test_a_guard_is_the_condition_of_the_loops_after_it() -> None:
    f = analyze(GUARDS).function("small")
    assert f is not None
    (sa,) = f.scops
    assert "n >= 4" in str(sa.scop.statements[0].domain), str(sa.scop.statements[0].domain)


def test_a_return_ending_the_body_is_no_exit() -> None:
    """``if (n > 8) return; return;`` ending a body returns where the body ends anyway: the loop
    before it is modeled (StarPU's kernels end with `return;`)."""
    f = analyze(GUARDS).function("trailing")
    assert f is not None and len(f.scops) == 1
    (loop,) = f.function.body  # the loop alone: nothing after it that a run could not check
    assert isinstance(loop, ir.For), f.function.body


def test_null_checks_are_assumed_false_with_a_remark() -> None:
    f = analyze(GUARDS).function("nullcheck")
    assert f is not None and len(f.scops) == 1
    notes = named(list(f.remarks), "NotNullAssumption")
    assert [r.range for r in notes] == [range_of(GUARDS, "a == NULL"), range_of(GUARDS, "!b")]
    assert "n > 0" in str(f.scops[0].scop.statements[0].domain)


@pytest.mark.slow  # runs generated code (the fast tier leaves it out)
@pytest.mark.parametrize("function", ["small", "nullcheck", "middle", "trailing"])
def test_guarded_functions_run_and_match_on_both_sides_of_the_guard(tmp_path: Path, function: str) -> None:
    path = tmp_path / "guards.c"
    path.write_text(GUARDS)
    for n in (0, 1, 3, 4, 37, 101):
        cpu = check_cpu(str(path), function, {"n": n}, threads=2)
        assert cpu.ok, f"n={n}\n{cpu.report()}"
    gpu = check_opencl(str(path), function, {"n": 37})
    assert gpu.ok, gpu.comparison.report()


VALUE_GUARDS = """
double total(int n, const double *a) {
  if (n <= 0)
    return 0.0;
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += a[i];
  return s;
}
int positives(int n, const double *a) {
  if (!a || n == 0) return -1;
  int c = 0;
  for (int i = 0; i < n; i++)
    if (a[i] > 0.5) c++;
  return c;
}
"""


@pytest.mark.parametrize("function", ["total", "positives"])
def test_a_function_returning_a_value_early_runs_where_its_loops_do(tmp_path: Path, function: str) -> None:
    """Where its guard holds, the run says so instead of comparing what never ran."""
    path = tmp_path / "value_guards.c"
    path.write_text(VALUE_GUARDS)
    runs_everywhere(str(path), function, [{"n": 37}, {"n": 1}])
    with pytest.raises(NotCheckable, match=f"at these sizes `{function}` returns at line"):
        check_cpu(str(path), function, {"n": 0})
