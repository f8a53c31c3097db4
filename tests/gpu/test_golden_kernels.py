"""Golden schedule trees and generated kernels (update with `pytest --update-golden`, review the
diff). Generated code is deterministic: a change here is a change users see."""

from __future__ import annotations

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.codegen.cuda import generate_cuda
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.pipeline import GpuOptions, ScopUnit, gpu_program, run_passes
from core_compiler.transform.schedule import render_tree
from tests.conftest import KERNELS
from tests.helpers import suite_analysis

GOLDEN = ["gemm", "2mm", "jacobi_2d", "atax", "dot_norm", "seidel_2d"]


def _gpu(name: str, options: GpuOptions | None = None):  # type: ignore[no-untyped-def]
    import json

    entry = next(k for k in json.loads((KERNELS / "suite.json").read_text()) if k["file"] == f"{name}.c")
    fa = suite_analysis(entry["file"], entry["function"])
    sa = fa.functions[0].scops[0]
    unit = run_passes(ScopUnit(sa, name), (options or GpuOptions()).passes())
    return unit.schedule, unit.gpu


@pytest.mark.parametrize("name", GOLDEN)
def test_schedule_tree_and_kernels_golden(name: str, golden) -> None:  # type: ignore[no-untyped-def]
    schedule, gpu = _gpu(name)
    golden(f"kernels/{name}.tree.txt", render_tree(schedule))
    golden(f"kernels/{name}.cl", generate_opencl(gpu).source)
    golden(f"kernels/{name}_kernel.cu", generate_cuda(gpu, name).kernel_cu)


def test_matmul_tiles_as_in_the_ppcg_paper() -> None:
    from core_compiler.transform.gpu_mapping import MappingOptions
    from core_compiler.transform.memory import MemoryOptions

    # PPCG's defaults: its tiles, its blocks, one shared copy of each array
    ppcg = MappingOptions(sizes={None: {"tile": (32, 32, 32), "block": (32, 16)}}, memory=MemoryOptions(double_buffer=False))
    _, gpu = _gpu("gemm", GpuOptions(mapping=ppcg))
    (k,) = gpu.kernels
    places = {p.array: (p.place, p.size) for p in k.promotions}
    assert places == {"A": ("shared", (32, 32)), "B": ("shared", (32, 32)), "C": ("register", (2, 1))}
    text = generate_cuda(gpu, "gemm").kernel_cu
    assert "__shared__ double shared_A[32][32];" in text and "double private_C[2][1];" in text
    assert text.count("__syncthreads();") >= 2


def test_no_shared_memory_option_keeps_arrays_global() -> None:
    from core_compiler.transform.gpu_mapping import MappingOptions
    from core_compiler.transform.memory import MemoryOptions

    fa = analyze_file(str(KERNELS / "gemm.c"), only="kernel_gemm")
    sa = fa.functions[0].scops[0]
    gpu = gpu_program(sa, GpuOptions(mapping=MappingOptions(memory=MemoryOptions(shared=False, private=False))))
    (k,) = gpu.kernels
    assert not k.promotions and {g.array for g in k.global_accesses} == {"A", "B", "C"}
    small = gpu_program(sa, GpuOptions(mapping=MappingOptions(memory=MemoryOptions(max_shared_bytes=9000))))
    assert [p.array for p in small.kernels[0].promotions if p.place == "shared"] == ["A"]


def test_analyze_gpu_shows_schedule_kernels_and_placement(capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import main

    assert main(["analyze", str(KERNELS / "gemm.c"), "--function", "kernel_gemm", "--gpu"]) == 0
    out = capsys.readouterr().out
    assert "kernel_gemm#scop0: schedule tree\ndomain" in out
    assert "A: shared 32x16 (reused within a tile)" in out and "C: register 4x4" in out
    assert "[Passed:Offloaded]" in out and "[Analysis:RuntimeOffloadCheck]" in out


@pytest.mark.parametrize("name", ["gemm", "jacobi_2d", "atax", "seidel_2d"])
def test_more_tiles_than_blocks_map_modulo_the_grid(name: str) -> None:
    """PPCG's `grid` sizes: with 2 blocks per dimension each block takes every other tile."""
    import json

    from core_compiler.runtime.differential import check_opencl
    from core_compiler.transform.gpu_mapping import MappingOptions
    from core_compiler.transform.sizes import parse_sizes

    entry = next(k for k in json.loads((KERNELS / "suite.json").read_text()) if k["file"] == f"{name}.c")
    mapping = MappingOptions(tile_size=8, sizes=parse_sizes("{kernel[i]->grid[2,2]}"))
    for params in (entry["sizes"], {p: 2 if p in ("tsteps", "tmax") else 37 for p in entry["sizes"]}):
        result = check_opencl(str(KERNELS / entry["file"]), entry["function"], params, entry["size_limits"], gpu=GpuOptions(mapping=mapping))
        assert result.ok, result.comparison.report()
