"""Dependences and parallelism checked exactly against answers worked out by hand."""

from __future__ import annotations

import islpy as isl

from tests.helpers import analyze

MATMUL = """
void matmul(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk], double B[nk][nj]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      C[i][j] = 0;
      for (int k = 0; k < nk; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
}
"""


def _union(deps, kind: str) -> isl.UnionMap:  # type: ignore[no-untyped-def]
    return deps.union((kind,))


def test_matmul_flow_dependences_exact() -> None:
    (sa,) = analyze(MATMUL).functions[0].scops
    ctx = sa.scop.ctx
    expected = isl.UnionMap.read_from_str(
        ctx,
        "[ni, nj, nk] -> { S0[i, j] -> S1[i, j, 0] : 0 <= i < ni and 0 <= j < nj and nk > 0;"
        " S1[i, j, k] -> S1[i, j, k + 1] : 0 <= i < ni and 0 <= j < nj and 0 <= k < nk - 1 }",
    )
    assert _union(sa.deps, "flow").is_equal(expected)


def test_matmul_parallel_loops_and_reduction() -> None:
    (sa,) = analyze(MATMUL).functions[0].scops
    by_var = {lp.loop.var: lp for lp in sa.deps.loops}
    assert by_var["i"].parallel and by_var["j"].parallel
    k = by_var["k"]
    assert not k.parallel and k.reduction
    assert {(c.kind, c.source, c.sink, c.distance) for c in k.carried} >= {("flow", "S1", "S1", (0, 0, 1))}
    (red,) = sa.deps.reductions
    assert (red.statement, red.op, red.array) == ("S1", "+", "C")


def test_jacobi_1d_time_loop_carries_flow_distance_one() -> None:
    src = """
void jacobi(int tsteps, int n, double A[n], double B[n]) {
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++) B[i] = (A[i-1] + A[i] + A[i+1]) / 3.0;
    for (int i = 1; i < n - 1; i++) A[i] = B[i];
  }
}"""
    (sa,) = analyze(src).functions[0].scops
    t, i1, i2 = sa.deps.loops
    assert not t.parallel and not t.reduction
    assert any(c.kind == "flow" and c.distance == (1,) for c in t.carried)
    assert i1.parallel and i2.parallel


def test_seidel_inner_loops_carry_dependences() -> None:
    src = """
void seidel(int n, double A[n][n]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      A[i][j] = (A[i-1][j] + A[i][j-1] + A[i][j] + A[i][j+1] + A[i+1][j]) / 5.0;
}"""
    (sa,) = analyze(src).functions[0].scops
    i, j = sa.deps.loops
    assert not i.parallel and not j.parallel
    assert {c.distance for c in i.carried if c.kind == "flow"} == {(1,)}
    assert {c.distance for c in j.carried if c.kind == "flow"} == {(0, 1)}


def test_local_scalar_is_private_to_its_iteration() -> None:
    src = """
void mv(int n, double A[n][n], double x[n], double y[n]) {
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      s += A[i][j] * x[j];
    y[i] = s;
  }
}"""
    (sa,) = analyze(src).functions[0].scops
    i, j = sa.deps.loops
    assert i.parallel, [c.describe() for c in i.carried]
    assert j.reduction


def test_negative_step_and_triangular_bounds() -> None:
    src = """
void back(int n, double x[n], double L[n][n]) {
  for (int i = n - 1; i >= 0; i--)
    for (int j = i + 1; j < n; j++)
      x[i] -= L[i][j] * x[j];
}"""
    (sa,) = analyze(src).functions[0].scops
    dom = sa.scop.statements[0].domain
    assert dom.is_equal(isl.Set.read_from_str(sa.scop.ctx, "[n] -> { S0[i, j] : 0 <= i < n and i < j < n }"))
    i, _j = sa.deps.loops
    assert not i.parallel  # x[j] written by a later-executed i... carried by i
    assert all(d >= 0 for c in i.carried for d in c.distance[:1])


def test_strided_loop_domain() -> None:
    src = "void f(int n, double x[n]) { for (int i = 1; i < n; i += 3) x[i] = 0; }"
    (sa,) = analyze(src).functions[0].scops
    dom = sa.scop.statements[0].domain
    pts: list[int] = []
    fixed = dom.intersect_params(isl.Set.read_from_str(sa.scop.ctx, "[n] -> { : n = 11 }"))
    fixed.foreach_point(lambda p: pts.append(p.get_coordinate_val(isl.dim_type.set, 0).to_python()))
    assert sorted(pts) == [1, 4, 7, 10]


def test_if_else_split_domains() -> None:
    src = """
void f(int n, double x[n]) {
  for (int i = 0; i < n; i++)
    if (2 * i < n) x[i] = 1.0; else x[i] = 2.0;
}"""
    (sa,) = analyze(src).functions[0].scops
    s0, s1 = sa.scop.statements
    ctx = sa.scop.ctx
    assert s0.domain.is_equal(isl.Set.read_from_str(ctx, "[n] -> { S0[i] : 0 <= i < n and 2i < n }"))
    assert s1.domain.is_equal(isl.Set.read_from_str(ctx, "[n] -> { S1[i] : 0 <= i < n and 2i >= n }"))
