"""Loop-invariant elements kept in registers (`core_compiler.transform.invariant`, `llvm/ast_lower.py`).

- The AST build finds the element a loop reaches at one address: nussinov's ``table[i][i + d]``
  in its ``k`` loop (read and written), trisolv's ``x[j]`` in the ``i`` loop (read only), and
  nothing where another access of the array may reach the same element (``A[i] += A[k]``).
- The LLVM code holds the element in a stack slot that becomes a register, and gives the loop an
  interleave hint when it accumulates into it.
- The results stay those of gcc's build of the original, also where the loop has no iteration at
  the element's position (``k < i`` at ``i = 0``) and where a parallel loop inside would read the
  element from memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import islpy as isl
import pytest

from core_compiler.llvm.cpu_lowering import lower_cpu, original_ast
from core_compiler.runtime.cpu_variants import prepare
from core_compiler.transform.invariant import InvariantElement, LoopFacts
from tests.conftest import KERNELS
from tests.helpers import check_cpu

_T: Any = isl.ast_node_type


def _facts(node: isl.AstNode) -> list[tuple[str, LoopFacts]]:
    """(iterator, facts) of every ``for`` node, in AST order."""
    kind = node.get_type()
    if kind == _T.for_:
        it = node.for_get_iterator().id_get_id().get_name()
        return [(it, node.get_annotation().get_user()), *_facts(node.for_get_body())]
    if kind == _T.block:
        lst = node.block_get_children()
        return [x for k in range(lst.n_ast_node()) for x in _facts(lst.get_at(k))]
    if kind == _T.if_:
        return _facts(node.if_get_then_node()) + (_facts(node.if_get_else_node()) if node.if_has_else_node() else [])
    if kind == _T.mark:
        return _facts(node.mark_get_node())
    return []


def _source_order(path: str, function: str, sizes: dict[str, int]) -> list[tuple[str, LoopFacts]]:
    case = prepare(path, function, sizes, {})
    return _facts(original_ast(case.analysis.scop, case.analysis.deps.union()))


def _texts(e: InvariantElement) -> list[str]:
    return sorted(info.text for _, info in e.accesses)


def test_nussinov_accumulator_is_invariant_in_the_k_loop() -> None:
    loops = _source_order(str(KERNELS / "nussinov.c"), "kernel_nussinov", {"n": 20})
    assert [len(f.invariant) for _, f in loops] == [0, 0, 1], loops  # d, i, k
    (element,) = loops[-1][1].invariant
    assert element.array == "table" and element.written
    assert [x.to_C_str() for x in element.index] == ["c3", "c1 + c3"]  # table[i][i + d]
    assert _texts(element) == ["table[i][i + d]"] * 2  # the read and the write


def test_trisolv_reads_x_j_throughout_the_i_loop() -> None:
    loops = _source_order(str(KERNELS / "trisolv.c"), "kernel_trisolv", {"n": 20})
    (element,) = loops[-1][1].invariant
    assert element.array == "x" and not element.written and _texts(element) == ["x[j]"]


SOLVE = """
void solve(int n, double A[n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < i; k++)
      A[i] += B[i][k] * A[k];
}
"""

ALIASED = """
void aliased(int n, double A[n]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++)
      A[i] += A[k];
}
"""

INNER_PARALLEL = """
void inner_parallel(int t, int n, double s[1], double A[n]) {
  for (int r = 0; r < t; r++) {
    s[0] = s[0] * 0.5 + 1.0;
    for (int i = 0; i < n; i++)
      A[i] += s[0];
  }
}
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.c"
    path.write_text(text)
    return str(path)


def test_an_element_another_access_may_reach_is_not_promoted(tmp_path: Path) -> None:
    loops = _source_order(_write(tmp_path, "aliased", ALIASED), "aliased", {"n": 8})
    assert all(not f.invariant for _, f in loops), loops  # A[k] is A[i] when k == i


def test_solve_keeps_a_i_in_a_register(tmp_path: Path) -> None:
    path = _write(tmp_path, "solve", SOLVE)
    loops = _source_order(path, "solve", {"n": 8})
    (element,) = loops[-1][1].invariant
    assert element.written and _texts(element) == ["A[i]"]  # `+=`: one access, read and written
    case = prepare(path, "solve", {"n": 8}, {})
    scop = case.analysis.scop
    ir = lower_cpu(scop, original_ast(scop, case.analysis.deps.union()), "solve", parallel=False).ir
    assert '"A.reg" = alloca double' in ir
    assert '!"llvm.loop.interleave.count", i32 4' in ir


@pytest.mark.parametrize("n", [0, 1, 2, 33])
def test_solve_matches_gcc(tmp_path: Path, n: int) -> None:
    result = check_cpu(_write(tmp_path, "solve", SOLVE), "solve", {"n": n})
    assert result.ok, result.report()


@pytest.mark.parametrize(("t", "n"), [(0, 5), (1, 1), (3, 37)])
def test_a_parallel_loop_inside_reads_the_element_from_memory(tmp_path: Path, t: int, n: int) -> None:
    result = check_cpu(_write(tmp_path, "inner", INNER_PARALLEL), "inner_parallel", {"t": t, "n": n})
    assert result.ok, result.report()
