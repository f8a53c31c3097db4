"""Local pointers into an array (``double *row = A + i * m;``) are read as subscripts of the array, so
the nests that use them are modeled, run and match; pointers that move, escape or are computed
from something that changes stay local pointers, refused as possible aliasing."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.runtime.differential import check_opencl
from tests.helpers import analyze, check_cpu, named, range_of

ALIASED = """
void row_add(int n, int m, double *A, const double *v) {
  for (int i = 0; i < n; i++) {
    double *row = A + i * m;
    for (int j = 0; j < m; j++)
      row[j] += v[j];
  }
}
void row_of_2d(int n, int m, double A[n][m], double B[n][m]) {
  for (int i = 0; i < n; i++) {
    double *a = A[i];
    const double *b = &B[i][0];
    for (int j = 1; j < m; j++)
      a[j] = b[j] - b[j - 1];
  }
}
void planes(int c, int h, int w, const float *in, float *out) {
  for (int k = 0; k < c; k++) {
    const float *plane = in + k * h * w;
    for (int y = 0; y < h; y++) {
      const float *src = plane + y * w;
      float *dst = &out[(k * h + y) * w];
      for (int x = 0; x < w; x++)
        dst[x] = 0.5f * src[x];
    }
  }
}
void deref(int n, int m, const double *A, double *y) {
  for (int i = 0; i < n; i++) {
    double *out = &y[i];
    *out = 0.0;
    for (int j = 0; j < m; j++)
      *out += A[i * m + j];
  }
}
void c89(int n, int m, double *a, const double *b) {
  int i, j;
  double *pa;
  const double *pb;
  for (i = 0; i < n; i++) {
    pa = a + i * m;
    pb = &b[i * m];
    for (j = 0; j < m; j++)
      pa[j] = pb[j] * 2;
  }
}
void shifted(int n, const double *a, double *b) {
  double *dst = b + 1;
  for (int i = 0; i < n - 1; i++)
    dst[i] = a[i] + a[i + 1];
}
"""

NOT_ALIASED = """
void bumped(int n, double *a) {
  double *p = a;
  for (int i = 0; i < n; i++) {
    p[0] = 1.0;
    p++;
  }
}
void offset_changes(int n, double *a) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    double *p = a + k;
    k = i;
    p[i] = 2.0;
  }
}
void used_before_set(int n, double *a) {
  double *p = a;
  for (int i = 0; i < n; i++) {
    p[0] = 1.0;
    p = a + i;
  }
}
void used_after_block(int n, double *a) {
  double *p;
  for (int i = 0; i < n; i++) {
    p = a + i;
    p[0] = 1.0;
  }
  p[0] = 2.0;
}
void set_twice(int n, double *a) {
  double *p;
  for (int i = 0; i < n; i++) {
    p = a + i;
    p[0] = 1.0;
    p = a + 2 * i;
    p[0] = 2.0;
  }
}
void escapes(int n, double *a, void use(double *)) {
  for (int i = 0; i < n; i++) {
    double *p = a + i;
    use(p);
    p[0] = 3.0;
  }
}
"""

SIZES = ({"n": 7, "m": 5, "c": 3, "h": 4, "w": 6}, {"n": 1, "m": 1, "c": 1, "h": 1, "w": 1},
         {"n": 0, "m": 3, "c": 0, "h": 2, "w": 0})  # fmt: skip


def test_pointers_into_arrays_are_subscripts_of_the_arrays() -> None:
    fa = analyze(ALIASED)
    for f in fa.functions:
        assert len(f.scops) == 1, (f.function.name, [r.message for r in f.remarks])
        assert not named(list(f.remarks), "PossibleAliasing"), f.function.name
    (sa,) = fa.function("planes").scops  # type: ignore[union-attr]
    (write,) = sa.scop.statements[0].writes
    assert "out[" in str(write.relation) and "dst" not in str(write.relation)
    (read,) = sa.scop.statements[0].reads
    assert "in[" in str(read.relation), str(read.relation)


def test_each_pointer_gets_a_remark_at_its_declaration() -> None:
    fa = analyze(ALIASED)
    notes = named(fa.function("row_add").remarks, "PointerIntoArray")  # type: ignore[union-attr, arg-type]
    assert [r.range for r in notes] == [range_of(ALIASED, "double *row = A + i * m")]
    assert "`A + i * m`" in notes[0].message and "`A`" in notes[0].message
    nested = named(fa.function("planes").remarks, "PointerIntoArray")  # type: ignore[union-attr, arg-type]
    assert len(nested) == 3


@pytest.mark.slow  # runs generated code (the fast tier leaves it out)
@pytest.mark.parametrize("function", ["row_add", "row_of_2d", "planes", "deref", "c89", "shifted"])
def test_aliased_nests_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "aliased.c"
    path.write_text(ALIASED)
    for sizes in SIZES:
        cpu = check_cpu(str(path), function, sizes, threads=2)
        assert cpu.ok, f"{sizes}\n{cpu.report()}"
    gpu = check_opencl(str(path), function, SIZES[0])
    assert gpu.ok, gpu.comparison.report()


@pytest.mark.parametrize("function", ["bumped", "offset_changes", "used_before_set", "used_after_block", "set_twice", "escapes"])
def test_moving_or_escaping_pointers_stay_local_pointers(function: str) -> None:
    f = analyze(NOT_ALIASED).function(function)
    assert f is not None
    assert not named(list(f.remarks), "PointerIntoArray")
    assert named(list(f.remarks), "PossibleAliasing") or not f.scops, [r.message for r in f.remarks]


TO_SCALARS = """
int g;
void to_global(int n) {
  int *p = &g;
  for (int i = 0; i < n; i++)
    *p = i;
}
void to_local(int n, int *out) {
  int s = 0;
  int *p = &s;
  for (int i = 0; i < n; i++)
    p[0] += i;
  out[0] = s;
}
void set_later(int n, int *a) {
  int *p;
  p = &g;
  for (int i = 0; i < n; i++)
    a[i] = *p;
}
"""


@pytest.mark.parametrize("function", ["to_global", "to_local", "set_later"])
def test_pointers_to_scalars_are_no_aliases(function: str) -> None:
    """`int *p = &g; … *p = i;` (csmith writes it everywhere) once crashed the front end: the
    address of a scalar was taken as an array element with no subscripts (issue 31)."""
    f = analyze(TO_SCALARS).function(function)
    assert f is not None
    assert not named(list(f.remarks), "PointerIntoArray")
    assert not named(list(f.remarks), "InternalError"), [r.message for r in f.remarks]
