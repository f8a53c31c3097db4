"""A ``while`` loop that counts (``i = 0; while (i < n) { ...; i++; }``) is read as the ``for`` loop it
is, with a remark on its header; one whose step is not a constant, that may skip its step with
``continue``, or whose counter is read after it stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import analyze, named, range_of, runs_everywhere

WHILES = """
void scale(int n, double *a) {
  int i = 0;
  while (i < n) {
    a[i] = a[i] * 2.0;
    i++;
  }
}
void nested(int n, int m, double A[n][m]) {
  int i, j;
  i = 0;
  while (i < n) {
    j = m - 1;
    while (j >= 0) {
      A[i][j] += i - j;
      j = j - 1;
    }
    i += 1;
  }
}
"""

REFUSED = """
void doubling(int n, double *a) {
  int i = 1;
  while (i < n) {
    a[i] = 1;
    i = 2 * i;
  }
}
void skips(int n, double *a) {
  int i = 0;
  while (i < n) {
    if (i == 3) continue;
    a[i] = 1;
    i++;
  }
}
void read_after(int n, double *a) {
  int i = 0;
  while (i < n) {
    a[i] = 1;
    i++;
  }
  a[0] = i;
}
"""


def test_counting_while_loops_are_for_loops() -> None:
    fa = analyze(WHILES)
    for f in fa.functions:
        assert len(f.scops) == 1, (f.function.name, [r.message for r in f.remarks])
    notes = named(list(fa.function("nested").remarks), "WhileAsFor")  # type: ignore[union-attr]
    assert [r.range for r in notes] == [range_of(WHILES, "while (i < n)", nth=1), range_of(WHILES, "while (j >= 0)")]
    assert "from `m - 1` by -1" in notes[1].message


@pytest.mark.parametrize("function", ["doubling", "skips", "read_after"])
def test_other_while_loops_stay_refused(function: str) -> None:
    f = analyze(REFUSED).function(function)
    assert f is not None and not f.scops
    assert not (named(list(f.remarks), "WhileAsFor") and function != "read_after")


@pytest.mark.slow  # runs generated code (the fast tier leaves it out)
@pytest.mark.parametrize("function", ["scale", "nested"])
def test_while_loops_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "whiles.c"
    path.write_text(WHILES)
    runs_everywhere(str(path), function, [{"n": 9, "m": 7}, {"n": 1, "m": 1}, {"n": 0, "m": 3}])


def test_a_counting_loop_inside_one_that_is_not_gets_one_remark() -> None:
    src = """
void f(int n, double *a) {
  int i = 1;
  while (i < n) {
    int j = 0;
    while (j < 4) { a[j] = i; j++; }
    i = i * 2;
  }
}
"""
    f = analyze(src).function("f")
    assert f is not None
    assert [r.range for r in named(list(f.remarks), "WhileAsFor")] == [range_of(src, "while (j < 4)")]
