"""OpenCL vector width (PPOpenCL's, issue 30): each thread's contiguous run of points printed with
`vloadN`/`vstoreN` and a scalar remainder, run on PoCL against the original at sizes 0, 1, 37 and
a multiple of the width and tile; the remarks say what was vectorized and why not."""

from __future__ import annotations

import json

import pytest

from core_compiler.codegen.opencl import generate_opencl, vector_remarks
from core_compiler.pipeline import GpuOptions, gpu_program
from core_compiler.runtime.differential import check_opencl, device_case
from core_compiler.transform.gpu_mapping import MappingOptions
from core_compiler.transform.memory import MemoryOptions
from core_compiler.transform.sizes import parse_sizes
from core_compiler.tune.space import opencl_space
from tests.conftest import KERNELS

SUITE = {k["file"]: k for k in json.loads((KERNELS / "suite.json").read_text())}
TIME_PARAMS = {"tsteps", "tmax"}
# file -> PPCG sizes whose innermost thread member gets 8 points per thread
SIZES = {
    "gemm.c": "{kernel[i]->tile[8,32,16];kernel[i]->block[4,8]}",
    "2mm.c": "{kernel[i]->tile[8,32,16];kernel[i]->block[4,8]}",
    "syrk.c": "{kernel[i]->tile[8,32,16];kernel[i]->block[4,8]}",
    "jacobi_2d.c": "{kernel[i]->tile[8,32];kernel[i]->block[4,8]}",
    "heat_3d.c": "{kernel[i]->tile[4,4,16];kernel[i]->block[2,4,4]}",
}


def _options(file: str, width: int, shared: bool = False) -> GpuOptions:
    memory = MemoryOptions(shared=shared, private=False)
    return GpuOptions(mapping=MappingOptions(sizes=parse_sizes(SIZES[file]), memory=memory, vector=width))


def _params(file: str, value: int) -> dict[str, int]:
    return {k: (min(v, 3) if k in TIME_PARAMS else value) for k, v in SUITE[file]["sizes"].items()}


def _check(file: str, width: int, value: int, shared: bool = False) -> None:
    k = SUITE[file]
    result = check_opencl(
        str(KERNELS / file), k["function"], _params(file, value), k["size_limits"], _options(file, width, shared)
    )
    assert result.ok, result.comparison.report()
    assert result.kernels >= 1


def _program(file: str, width: int, shared: bool = False):  # type: ignore[no-untyped-def]
    k = SUITE[file]
    case = device_case(
        str(KERNELS / file), k["function"], _params(file, 37), k["size_limits"], _options(file, width, shared)
    )
    return case.program


@pytest.mark.slow  # PoCL runs (10 s): make test, not test-fast
def test_gemm_vector_loads_and_remainder_match() -> None:
    program = _program("gemm.c", 4)
    assert "vload4(0, &B[" in program.source and "vstore4(" in program.source
    assert [r.message() for r in program.vector_runs] == [
        "vector width 4 on the j loop in kernel0: reads of C[i][j..j+3], B[k][j..j+3] are contiguous; "
        "writes of C[i][j..j+3] are contiguous"
    ]
    assert [(r.name, r.message) for r in vector_remarks(program)] == [("VectorLoads", program.vector_runs[0].message())]
    for value in (0, 37):  # all four sizes and the other kernels: the long tier
        _check("gemm.c", 4, value)


@pytest.mark.long
@pytest.mark.parametrize("width", [2, 4])
@pytest.mark.parametrize("file", sorted(SIZES))
@pytest.mark.parametrize("shared", [False, True])
def test_vector_width_matches(file: str, width: int, shared: bool) -> None:
    for value in (0, 1, 37, 64):
        _check(file, width, value, shared)


@pytest.mark.long
def test_no_vector_where_runs_are_shorter_than_the_width() -> None:
    # tile 32 over 16 threads: 2 points each, too few for width 4; the mapping stays cyclic
    k = SUITE["gemm.c"]
    gpu = GpuOptions(
        mapping=MappingOptions(sizes=parse_sizes("{kernel[i]->tile[8,32,16];kernel[i]->block[16,4]}"), vector=4)
    )
    case = device_case(str(KERNELS / "gemm.c"), k["function"], _params("gemm.c", 37), k["size_limits"], gpu)
    program = generate_opencl(gpu_program(case.values.scop, gpu))
    assert "vload" not in program.source and not program.vector_runs


@pytest.mark.long
def test_no_vector_loads_where_a_read_is_not_contiguous_along_the_run() -> None:
    program = _program("syrk.c", 4)  # C[i][j] += alpha * A[i][k] * A[j][k]: A[j][k] strides along j
    assert "vload" not in program.source
    said = vector_remarks(program)
    assert [r.name for r in said] == ["NoVectorLoads"] and "the reads of A are not contiguous" in said[0].message


def test_space_vector_width_needs_runs_and_drops_registers() -> None:
    space = opencl_space(3, 2)
    explicit = space.default.with_(mapping="explicit", tile1=32, block1=4, vector=4)
    assert space.normal(explicit)["vector"] == 4 and space.normal(explicit)["private"] is False
    assert "vector width 4" in space.label(space.normal(explicit))
    assert space.normal(explicit.with_(block1=16))["vector"] == 1  # 2 points per thread
    assert space.normal(space.default.with_(vector=2))["vector"] == 1  # hexplore's own mapping
