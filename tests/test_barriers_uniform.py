"""Architecture invariant: barriers are uniform. A parallel kernel's barriers sit in its outer
(per-block) AST, whose loops and conditions never read a thread id, so every thread of a block
reaches the same barriers (a barrier under a thread-dependent condition deadlocks on a GPU)."""

from __future__ import annotations

from collections.abc import Iterator

import islpy as isl
import pytest

from core_compiler.pipeline import gpu_program
from tests.conftest import suite
from tests.helpers import suite_analysis

_T = isl.ast_node_type


def _ids(e: isl.AstExpr) -> Iterator[str]:
    kind = e.get_type()
    if kind == isl.ast_expr_type.id:
        yield e.id_get_id().get_name()
    elif kind == isl.ast_expr_type.op:
        for k in range(e.op_get_n_arg()):
            yield from _ids(e.op_get_arg(k))


def _control(node: isl.AstNode) -> Iterator[str]:
    """The names read by the loops and conditions of an AST (not by its user nodes)."""
    kind = node.get_type()
    if kind == _T.block:
        children = node.block_get_children()
        for k in range(children.n_ast_node()):
            yield from _control(children.get_at(k))
    elif kind == _T.for_:
        for e in (node.for_get_init(), node.for_get_cond(), node.for_get_inc()):
            yield from _ids(e)
        yield from _control(node.for_get_body())
    elif kind == _T.if_:
        yield from _ids(node.if_get_cond())
        yield from _control(node.if_get_then_node())
        if node.if_has_else_node():
            yield from _control(node.if_get_else_node())
    elif kind == _T.mark:
        yield from _control(node.mark_get_node())


def _barrier_kernels(kernel: dict[str, object]):  # type: ignore[no-untyped-def]
    fa = suite_analysis(str(kernel["file"]), str(kernel["function"]))
    for sa in fa.functions[0].scops:
        gpu = gpu_program(sa)
        for k in gpu.kernels:
            if k.parallel and any(p.ast is None for p in k.phases.values()):
                yield gpu, k


@pytest.mark.parametrize("kernel", suite(), ids=lambda k: str(k["file"]).removesuffix(".c"))
def test_no_barrier_depends_on_a_thread_id(kernel: dict[str, object]) -> None:
    for gpu, k in _barrier_kernels(kernel):
        threads = set(gpu.names.seq("t", k.n_thread_dims))
        assert not threads & set(_control(k.ast)), f"{k.name}: a thread id in the per-block AST"


def test_the_check_sees_thread_ids() -> None:
    """The walker reads loop bounds and conditions: a thread-dependent `if` is found."""
    ctx = isl.Context()
    build = isl.AstBuild.from_context(isl.Set.read_from_str(ctx, "[t0] -> { : 0 <= t0 < 32 }"))
    node = build.node_from_schedule_map(isl.UnionMap.read_from_str(ctx, "[t0] -> { S[i] -> [i] : 0 <= i < t0 }"))
    assert "t0" in set(_control(node))
    gemm = next(k for k in suite() if k["file"] == "gemm.c")
    assert list(_barrier_kernels(gemm)), "gemm's kernel copies tiles to shared memory between barriers"
