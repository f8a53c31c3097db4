"""PTX from LLVM's NVPTX backend for every suite kernel, assembled by ``ptxas -arch=sm_90``; the
block/thread id mapping of `codegen/cuda.py`; and the shared-memory, barrier and atomic helpers
on their own."""

from __future__ import annotations

import re

import llvmlite.ir as ir
import pytest

from core_compiler.llvm import c_types as ct
from core_compiler.llvm.kernel_body import atomic_add, barrier, shared_array
from core_compiler.llvm.nvptx import emit_ptx, lower_gpu, ptxas_path, run_ptxas
from core_compiler.llvm.target import NVPTX_TRIPLE
from core_compiler.pipeline import gpu_program
from core_compiler.runtime.cpu_variants import prepare
from tests.conftest import KERNELS, suite

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) is not installed")


def _gpu(kernel: dict[str, object]):  # type: ignore[no-untyped-def]
    case = prepare(str(KERNELS / str(kernel["file"])), str(kernel["function"]), kernel["sizes"], kernel["size_limits"])  # type: ignore[arg-type]
    return gpu_program(case.analysis)  # with atomics where reductions run in parallel


# The fast tier assembles every eighth kernel's PTX, `make test` every other one (conftest's
# SAMPLED), `make test-long` all (the register-tiled ones take 6-15 s each: their GPU mapping)
PTX_CASES = [pytest.param(k, id=str(k["file"]).removesuffix(".c"), marks=() if n % 8 == 0 else pytest.mark.slow)
             for n, k in enumerate(suite())]


@needs_ptxas
@pytest.mark.parametrize("kernel", PTX_CASES)
def test_ptx_assembles(kernel: dict[str, object]) -> None:
    gpu = _gpu(kernel)
    module = lower_gpu(gpu)
    for k in gpu.kernels:
        assert f".entry {k.name}(" in module.ptx
    result = run_ptxas(module.ptx)
    assert result.ok, result.output


def test_block_and_thread_ids_as_in_cuda() -> None:
    """2-D gemm kernel: b0 = blockIdx.y + o0, b1 = blockIdx.x + o1, t0 = threadIdx.y, t1 = .x."""
    gpu = _gpu(next(k for k in suite() if k["file"] == "gemm.c"))
    (k,) = gpu.kernels
    assert (k.n_block_dims, k.n_thread_dims) == (2, 2)
    text = lower_gpu(gpu).ir
    assert '%"b0" = add i32 %"ctaid.y", %"o0"' in text
    assert '%"b1" = add i32 %"ctaid.x", %"o1"' in text
    assert '%"tid.y" = call i32 @"llvm.nvvm.read.ptx.sreg.tid.y"()' in text
    assert re.search(r"^!nvvm.annotations = !\{ ![0-9]+ \}$", text, re.M)  # numbered after the debug info
    assert '@"kernel0", !"kernel", i32 1 }' in text
    assert 'define ptx_kernel void @"kernel0"' in text


def _shared_module() -> str:
    """A kernel staging one element per thread in shared memory, with a barrier in between, and
    adding the neighbour's value into global memory atomically."""
    m = ir.Module("shared_test")
    m.triple = NVPTX_TRIPLE
    f64, i32 = ir.DoubleType(), ir.IntType(32)
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.PointerType()]), "stage")
    fn.calling_convention = "ptx_kernel"
    m.add_named_metadata("nvvm.annotations", [fn, "kernel", ir.Constant(i32, 1)])
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tile = shared_array(m, "tile", "double", 128)
    tid = b.call(ir.Function(m, ir.FunctionType(i32, []), "llvm.nvvm.read.ptx.sreg.tid.x"), [])
    x = b.load(b.gep(fn.args[0], [tid], source_etype=f64), typ=f64)
    b.store(x, b.gep(tile, [tid], source_etype=f64))
    barrier(b)
    other = b.and_(b.add(tid, ir.Constant(i32, 1)), ir.Constant(i32, 127))
    y = b.load(b.gep(tile, [other], source_etype=f64), typ=f64)
    atomic_add(b, b.gep(fn.args[1], [tid], source_etype=f64), ct.CValue(y, "double"))
    b.ret_void()
    return str(m)


@needs_ptxas
def test_barrier_and_shared_array_assemble() -> None:
    ptx = emit_ptx(_shared_module())
    assert ".shared .align 16 .b8 tile[1024]" in ptx
    assert "bar.sync" in ptx or "barrier.sync" in ptx
    assert "atom.global.add.f64" in ptx or "red.global.add.f64" in ptx
    result = run_ptxas(ptx)
    assert result.ok, result.output
