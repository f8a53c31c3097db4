"""Double-buffered shared copies (issue 27: gemm's kernel was 5.2x cuBLAS on an H100, its loads
of each k-tile exposed). Where a block walks its tiles in a sequential loop and only reads its
shared copies, the copy of tile T + 1 runs in T's step into the other buffer (``(T / tile) & 1``),
with one barrier per step; CUDA issues it as ``cp.async`` (`HX_ASYNC_COPY`), which lands while the
step computes, and waits before the barrier. Checked against the original on PoCL (work-groups
and barriers; asked for: PoCL's own runs copy once, `differential.POCL`), through the CUDA CPU shim
(which lands each asynchronous copy only at the wait), and by ptxas."""

from __future__ import annotations

import functools
import re

import pytest

from core_compiler.codegen.cuda import generate_cuda
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.llvm.nvptx import lower_gpu, ptxas_path, run_ptxas
from core_compiler.pipeline import GpuOptions, gpu_program
from core_compiler.runtime.differential import check_opencl
from core_compiler.transform.gpu_mapping import GpuProgram, MappingOptions
from core_compiler.transform.memory import MemoryOptions
from tests.conftest import KERNELS
from tests.cuda_cpu import harness
from tests.helpers import only_scop

GEMM = str(KERNELS / "gemm.c")
MATVEC = str(KERNELS / "matvec.c")


@functools.cache
def _gpu(path: str, function: str, **memory: object) -> GpuProgram:
    return gpu_program(only_scop(path, function), GpuOptions(mapping=MappingOptions(memory=MemoryOptions(**memory))))  # type: ignore[arg-type]


def _kernel_text(gpu: GpuProgram) -> str:
    return generate_cuda(gpu, "gemm").kernel_cu


def test_gemm_copies_the_next_k_tile_while_it_computes() -> None:
    gpu = _gpu(GEMM, "kernel_gemm")
    (k,) = gpu.kernels
    assert k.buffers == 2
    text = _kernel_text(gpu)
    assert "__shared__ double shared_A[2][32][16];" in text and "__shared__ double shared_B[2][16][64];" in text
    # every copy is of the tile after the step's own, into that tile's buffer
    copies = re.findall(r"HX_ASYNC_COPY\((shared_\w)\[\(\(\((.*?)\)\) / 16\) & 1\]", text)
    assert copies and {tile for _, tile in copies} == {"T2 + 16"}, copies
    # the step before the first tile copies it; the loop over k-tiles has one barrier per step
    assert "int T2 = (-16);" in text
    loop = text[text.index("for (int c3 = 16; c3 < nk; c3 += 16)") :]
    assert loop.count("__syncthreads();") == 1
    # and waits for its copies before each barrier
    lines = text.splitlines()
    barriers = [n for n, line in enumerate(lines) if line.strip() == "__syncthreads();"]
    assert len(barriers) == 3 and all(lines[n - 1].strip() == "HX_ASYNC_WAIT();" for n in barriers)
    # reads of the tile being computed go to the buffer of its own step
    assert "shared_B[(((T2)) / 16) & 1]" in text or "shared_B[(((0)) / 16) & 1]" in text


@pytest.mark.slow
def test_single_buffer_where_asked_or_where_two_do_not_fit() -> None:
    for memory in ({"double_buffer": False}, {"max_shared_bytes": 20000}):  # one copy: 12288 bytes
        gpu = _gpu(GEMM, "kernel_gemm", **memory)
        (k,) = gpu.kernels
        text = _kernel_text(gpu)
        assert k.buffers == 1 and "__shared__ double shared_A[32][16];" in text, memory
        assert "HX_ASYNC" not in text and text.count("__syncthreads();") == 4, memory


def test_opencl_and_ptx_double_buffer_with_plain_copies() -> None:
    gpu = _gpu(GEMM, "kernel_gemm")
    cl = generate_opencl(gpu).source
    assert "__local double shared_A[2][32][16];" in cl and "HX_ASYNC" not in cl
    assert cl.count("barrier(CLK_LOCAL_MEM_FENCE);") == 3
    module = lower_gpu(gpu)
    assert "kernel0_$_shared_A[8192];" in module.ptx and "kernel0_$_shared_B[16384];" in module.ptx  # two 32x16, 16x64
    if ptxas_path() is not None:
        assert run_ptxas(module.ptx).ok


GEMM_SIZES = [  # ni, nj, nk: no tile multiples and four k-tiles; 1 and 0 (also in test_differential_opencl)
    {"ni": 37, "nj": 41, "nk": 61},
    pytest.param({"ni": 1, "nj": 1, "nk": 1}, marks=pytest.mark.long),
    pytest.param({"ni": 5, "nj": 3, "nk": 0}, marks=pytest.mark.long),
]


@pytest.mark.parametrize("params", GEMM_SIZES, ids=["37x41x61", "1x1x1", "5x3x0"])
def test_gemm_double_buffered_matches_on_pocl(params: dict[str, int]) -> None:
    result = check_opencl(GEMM, "kernel_gemm", params, {"ni": "NI", "nj": "NJ", "nk": "NK"}, gpu=GpuOptions())
    assert result.ok, result.comparison.report()
    assert result.kernels == 1


@pytest.mark.slow
@pytest.mark.parametrize("params", [{"n": 37, "m": 70}, {"n": 64, "m": 33}, {"n": 1, "m": 1}], ids=str)
def test_matvec_double_buffered_matches_on_pocl(params: dict[str, int]) -> None:
    """One block dimension, and the tile loop over the columns double-buffered."""
    assert _gpu(MATVEC, "kernel_matvec").kernels[0].buffers == 2
    result = check_opencl(MATVEC, "kernel_matvec", params, None, gpu=GpuOptions())
    assert result.ok, result.comparison.report()


@pytest.mark.long  # `make test` runs gemm's double-buffered CUDA through the shim at 37 (test_cuda_cpu.py)
def test_gemm_cuda_with_asynchronous_copies_matches_on_the_cpu() -> None:
    """hexplore's CUDA C through the CPU shim, whose cp.async lands each copy only at the wait:
    a copy read before its wait, or never waited for, fails here."""
    why = harness.unavailable()
    if why:
        pytest.skip(f"the CUDA CPU shim cannot build here: {why}")
    cases = [
        harness.prepare(GEMM, "kernel_gemm", p, size_limits={"ni": "NI", "nj": "NJ", "nk": "NK"}, name="x".join(map(str, p.values())))
        for p in ({"ni": 37, "nj": 41, "nk": 33}, {"ni": 40, "nj": 50, "nk": 30})
    ]
    results = harness.run_cases(iter(cases), batch=2)
    assert len(results) == 2 and all(r.ok for r in results.values()), {n: r.report() for n, r in results.items()}
