"""The optimized CPU code really runs on libgomp's threads.

A parallel gemm's IR calls ``GOMP_parallel`` on its outlined tile loop, and the call survives O3.
To see the threads, the same gemm is lowered with one extra user-node handler (the extension point
`lower_cpu(users=...)`): after ``S0(i, j)`` it stores ``omp_get_thread_num()`` into a global
``thread_ids[i]``; with two OpenMP threads both ids show up, each on whole 32-row tiles.
"""

from __future__ import annotations

import ctypes

import islpy as isl
import llvmlite.ir as ir
import numpy as np

from core_compiler.llvm import c_types as ct
from core_compiler.llvm.ast_lower import AstLowering, UserHandler, statement_handler
from core_compiler.llvm.cpu_lowering import CpuModule, lower_cpu, optimized_ast
from core_compiler.llvm.jit import jit_compile, set_threads
from core_compiler.llvm.math_calls import declare
from core_compiler.llvm.statements import Scope
from core_compiler.runtime.compare import compare_arrays
from core_compiler.runtime.cpu_variants import CpuCase, check_llvm_cpu, prepare, run_jit
from core_compiler.runtime.differential import reference_outputs
from core_compiler.runtime.reference import run_reference
from core_compiler.transform.schedule import compute_schedule
from tests.conftest import KERNELS

GEMM = str(KERNELS / "gemm.c")
ROWS = 64  # two 32-row tiles of the parallel loop
SIZES = {"ni": ROWS, "nj": 48, "nk": 16}
LIMITS = {"ni": "NI", "nj": "NJ", "nk": "NK"}
I32 = ir.IntType(32)


def _gemm(name: str, users: dict[str, UserHandler] | None = None) -> tuple[CpuCase, CpuModule]:
    case = prepare(GEMM, "kernel_gemm", SIZES, LIMITS)
    scop = case.analysis.scop
    ast = optimized_ast(scop, compute_schedule(scop, case.analysis.deps))
    return case, lower_cpu(scop, ast, name, parallel=True, users=users)


def test_gemm_ir_calls_gomp_parallel() -> None:
    _, module = _gemm("gemm_par")
    assert module.parallel_loops == 1
    calls = [ln for ln in module.ir.splitlines() if 'call void @"GOMP_parallel"(' in ln]
    assert len(calls) == 1 and '@"gemm_par.omp0"' in calls[0], calls
    assert 'call i32 @"omp_get_thread_num"()' in module.ir
    assert "call void @GOMP_parallel(" in jit_compile(module).optimized_ir  # still there after O3


def _record_thread(low: AstLowering, name: str, args: list[isl.AstExpr], scope: Scope) -> None:
    """``S0(i, j)``, then ``thread_ids[i] = omp_get_thread_num()``."""
    statement_handler(low, name, args, scope)
    b = low.builder
    ids = b.module.globals.get("thread_ids")
    if ids is None:
        ty = ir.ArrayType(I32, ROWS)
        ids = ir.GlobalVariable(b.module, ty, name="thread_ids")
        ids.initializer = ir.Constant(ty, [-1] * ROWS)
        ct.opaque(ids)
    tid = b.call(declare(b.module, "omp_get_thread_num", I32, []), [])
    row = low.expr(args[0], scope)
    b.store(tid, b.gep(ids, [ir.Constant(ir.IntType(64), 0), row], source_etype=ir.ArrayType(I32, ROWS)))


def test_two_threads_share_the_parallel_gemm() -> None:
    case, module = _gemm("gemm_thread_ids", users={"S0": _record_thread})
    jit = jit_compile(module)
    set_threads(2)
    arrays, _ = run_jit(jit, case)
    address = jit.engine.get_global_value_address("thread_ids")
    ids = np.ctypeslib.as_array((ctypes.c_int32 * ROWS).from_address(address)).copy()
    assert sorted(set(ids.tolist())) == [0, 1], ids  # both threads ran, every row was reached
    assert (ids[:32] == ids[0]).all() and (ids[32:] == ids[32]).all(), ids  # a tile per thread
    expected = run_reference(GEMM, case.layout, case.inputs)
    assert compare_arrays(reference_outputs(expected), case.outputs(arrays)).ok  # recording did not change the result


def test_parallel_gemm_matches_gcc_on_1_and_3_threads() -> None:
    for threads in (1, 3):  # one, and more threads than CI's two cores
        result = check_llvm_cpu(GEMM, "kernel_gemm", SIZES, LIMITS, parallel=True, threads=threads)
        assert result.ok, result.report()
        assert result.parallel_loops == (1 if threads > 1 else 0)  # on one thread, built without
