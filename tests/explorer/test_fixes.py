"""The editor's source rewrites (`explorer/fixes.py`): `restrict` where hexplore assumes no
aliasing, and the loop interchange, made on the text as an editor makes them."""

from __future__ import annotations

from explorer.fixes import apply_edits, interchange_at, restrict_fix
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
