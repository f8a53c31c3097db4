"""The OpenCL data layout choice (PPOpenCL's, issue 30): strided reads of a read-only array from a
transposed copy made by a kernel launched first, run on PoCL against the original at sizes 0, 1,
37 and 64; refused where the nest writes the array; a choice of the tuning space, recorded and
read back by `compile`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.codegen.opencl import generate_opencl, layout_remarks
from core_compiler.pipeline import GpuOptions, gpu_program
from core_compiler.runtime import tuning
from core_compiler.runtime.differential import check_opencl, device_case
from core_compiler.transform.gpu_mapping import MappingOptions
from core_compiler.transform.memory import MemoryOptions
from core_compiler.transform.sizes import parse_sizes
from core_compiler.tune.space import opencl_space
from tests.conftest import KERNELS

SUITE = {k["file"]: k for k in json.loads((KERNELS / "suite.json").read_text())}
TRANSPOSED = GpuOptions(layout="transposed")
# mvt's x1[i] += A[i][j] * y1[j]; x2[i] += A[j][i] * y2[j]: i on x, A[i][j] strided
MATVEC = """void k(int n, double A[n][n], double x[n], double y[n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      x[i] = x[i] + A[i][j] * y[j];
}
"""


def _check(file: str, value: int, gpu: GpuOptions = TRANSPOSED) -> None:
    k = SUITE[file]
    params = {p: value for p in k["sizes"]}
    result = check_opencl(str(KERNELS / file), k["function"], params, k["size_limits"], gpu)
    assert result.ok, result.comparison.report()


def _program(file: str, gpu: GpuOptions = TRANSPOSED):  # type: ignore[no-untyped-def]
    k = SUITE[file]
    case = device_case(str(KERNELS / file), k["function"], {p: 37 for p in k["sizes"]}, k["size_limits"], gpu)
    return case.program


@pytest.mark.slow  # PoCL runs (6 s): make test, not test-fast
def test_mvt_reads_a_transposed_copy_and_matches() -> None:
    program = _program("mvt.c")
    assert "__kernel void make_transposed_A(" in program.source
    assert "transposed_A[((c0)) * (n) + (T0 + t0)]" in program.source  # A[i][j], i = T0 + t0 on x
    assert "A[((c0)) * (n) + (T0 + t0)]" in program.source  # A[j][i]: already contiguous, left alone
    (said,) = layout_remarks(program)
    assert said.name == "TransposedLayout" and "A[i][j] in kernel1 (S0), along i" in said.message
    assert "elements n apart in A, 1 apart in the copy" in said.message
    for value in (0, 1, 37, 64):
        _check("mvt.c", value)


@pytest.mark.long
@pytest.mark.parametrize("file", ["syrk.c", "atax.c", "bicg.c", "gemver.c", "syr2k.c", "gesummv.c"])
@pytest.mark.parametrize("memory", ["default", "global", "tiles"])
def test_transposed_layout_matches(file: str, memory: str) -> None:
    mapping = {
        "default": MappingOptions(),
        "global": MappingOptions(memory=MemoryOptions(shared=False, private=False)),
        "tiles": MappingOptions(sizes=parse_sizes("{kernel[i]->tile[16,8,8];kernel[i]->block[8,4]}")),
    }[memory]
    for value in (0, 1, 37, 64):
        _check(file, value, GpuOptions(mapping=mapping, layout="transposed"))


def test_an_array_the_nest_writes_is_not_transposed(tmp_path: Path) -> None:
    source = tmp_path / "w.c"
    source.write_text("void w(int n, double A[n][n], double x[n]) {\n  for (int i = 0; i < n; i++)\n"
                      "    for (int j = 0; j < n; j++)\n      A[j][i] = A[j][i] + x[i];\n}\n")  # fmt: skip
    (fn,) = analyze_file(str(source)).functions
    program = generate_opencl(gpu_program(fn.scops[0]), "transposed")
    assert not program.transposes and "transposed_" not in program.source
    (said,) = layout_remarks(program)
    assert said.name == "NoTransposedLayout" and "A: the loop nest writes it" in said.message, said.message


def test_space_offers_the_layout_only_where_it_applies() -> None:
    assert opencl_space(2, 2).choices[-1].values == ("default",)
    space = opencl_space(2, 2, transposable=True)
    transposed = space.normal(space.default.with_(layout="transposed"))
    assert transposed["layout"] == "transposed" and space.label(transposed) == "hexplore's mapping, transposed layout"
    assert space.size() == 2 * opencl_space(2, 2).size()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HEXPLORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HEXPLORE_TUNING", "on")
    source = tmp_path / "k.c"
    source.write_text(MATVEC)
    return source


def test_compile_reads_the_recorded_layout(cache: Path) -> None:
    from explorer.commands import CompileSettings, compile_source

    config = tuning.TunedConfig("opencl", "", True, True, "hexplore's mapping, transposed layout", 0.01, 0.02, 2, 2,
                                "pocl", 1, "transposed")  # fmt: skip
    key = tuning.config_key(str(cache), "k", "opencl", None, None)
    tuning.store_config(key, config)
    assert tuning.load_config(key) == config
    out = compile_source(str(cache), cache.read_text(), None, "k", CompileSettings(target="opencl", always_offload=True))
    assert any(r.name == "TunedConfiguration" and "transposed layout" in r.message for r in out.result.remarks)
    said = [r.message for r in out.result.remarks if r.name == "TransposedLayout"]
    assert said and "A[i][j] in kernel0 (S0), along i" in said[0], said
    code = "".join(out.result.files.values())
    assert "make_transposed_A" in code and "transposed_A[" in code, code
    cuda = compile_source(str(cache), cache.read_text(), None, "k", CompileSettings(target="cuda", always_offload=True))
    said = [r.message for r in cuda.result.remarks if r.name == "TunedConfiguration"]
    assert said and "transposed layout does not" in said[0] and "transposed_A" not in "".join(cuda.result.files.values())
