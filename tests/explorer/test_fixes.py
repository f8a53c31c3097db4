"""The editor's source rewrites (`explorer/fixes.py`): `restrict` where hexplore assumes no
aliasing, and the loop interchange, made on the text as an editor makes them."""

from __future__ import annotations

from explorer.fixes import apply_edits, interchange_at, restrict_fix, schedule_rewrites_at
from explorer.workspace import Workspace

POINTERS = """\
void f(int n, double *a, const double * b, double C[n][n], double D[restrict n][n], float *restrict e, double (*P)[n], double Q[])
{
  for (int i = 0; i < n; i++)
    a[i] = b[i] + C[i][0] + D[i][0] + e[i] + P[i][0] + Q[i];
}
"""


def _analysis(text: str):  # type: ignore[no-untyped-def]
    ws = Workspace(use_compile_commands=False)
    ws.open("file:///tmp/hexplore-fixes/f.c", text)
    return ws.analyze("file:///tmp/hexplore-fixes/f.c")


def test_restrict_goes_where_c_puts_it_for_each_unrestricted_parameter() -> None:
    analysis = _analysis(POINTERS)
    (fr,) = analysis.functions
    (remark,) = [r for r in fr.remarks if r.name == "NoAliasAssumption"]
    fix = restrict_fix(fr, remark, POINTERS)
    assert fix is not None
    assert fix.title == "add `restrict` to `C`, `P`, `Q`, `a`, `b`"
    assert apply_edits(POINTERS, fix.edits).split("\n")[0] == (
        "void f(int n, double *restrict a, const double * restrict b, double C[restrict n][n], "
        "double D[restrict n][n], float *restrict e, double (*restrict P)[n], double Q[restrict])"
    )
    fixed = _analysis(apply_edits(POINTERS, fix.edits))  # the fix removes the assumption
    assert not [r for r in fixed.functions[0].remarks if r.name == "NoAliasAssumption"]
    other = next(r for r in fr.remarks if r.name != "NoAliasAssumption")
    assert restrict_fix(fr, other, POINTERS) is None


def test_interchange_at_a_header_swaps_the_headers() -> None:
    text = "void t(int n, double *restrict x, double A[restrict n][n])\n{\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n      A[i][j] = x[j];\n}\n"
    analysis = _analysis(text)
    swap = interchange_at(analysis, 3, 3)
    assert swap is not None and swap.legal and swap.title == "interchange loops `i` and `j`"
    assert apply_edits(text, swap.edits).split("\n")[2:4] == ["  for (int j = 0; j < n; j++)", "    for (int i = 0; i < n; i++)"]
    assert interchange_at(analysis, 4, 5) is None  # `j` has no loop inside
    assert interchange_at(analysis, 5, 7) is None  # not on a header


def test_schedule_rewrites_at_a_header_tile_jam_fuse_distribute() -> None:
    text = (
        "void t(int n, double *restrict x, double *restrict y, double A[restrict n][n])\n{\n"
        "  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n      A[i][j] = x[j];\n"
        "  for (int i = 0; i < n; i++) {\n    x[i] = 2.0 * y[i];\n    y[i] = 3.0;\n  }\n"
        "  for (int k = 0; k < n; k++)\n    y[k] += x[k];\n}\n"
    )
    analysis = _analysis(text)
    found = {r.title: r for r in schedule_rewrites_at(analysis, 3, 3)}
    assert list(found) == [
        "tile loops `i`, `j` by 16x16", "tile loops `i`, `j` by 32x32", "tile loops `i`, `j` by 64x64",
        "unroll `i` by 2 and jam into `j`", "unroll `i` by 4 and jam into `j`",
        "fuse loop `i` with the next loop `i`",
    ]  # fmt: skip
    fuse_first = found.pop("fuse loop `i` with the next loop `i`")
    assert not fuse_first.legal and not fuse_first.edits and fuse_first.reason == (
        "`x[j]` is read by the first loop in iteration i+1 and overwritten as `x[i]` by the second in iteration i: "
        "fused, the loop would run the write first"
    )
    assert all(r.legal and r.edits for r in found.values())
    tiled = apply_edits(text, found["tile loops `i`, `j` by 16x16"].edits).split("\n")
    assert tiled[2:4] == ["  for (int i_t = 0; i_t < n; i_t += 16)", "    for (int j_t = 0; j_t < n; j_t += 16)"]
    second = {r.title: r for r in schedule_rewrites_at(analysis, 6, 3)}
    # y[i] = 3.0 overwrites what x[i] = 2.0 * y[i] read: two loops, in that order
    assert apply_edits(text, second["distribute loop `i` over its statements (2 loops)"].edits).split("\n")[5:11] == [
        "  for (int i = 0; i < n; i++) {", "    x[i] = 2.0 * y[i];", "  }",
        "  for (int i = 0; i < n; i++) {", "    y[i] = 3.0;", "  }",
    ]  # fmt: skip
    fuse = second["fuse loop `i` with the next loop `k`"]
    assert fuse.legal
    assert schedule_rewrites_at(analysis, 5, 7) == []  # not on a header
