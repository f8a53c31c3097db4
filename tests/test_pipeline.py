"""The pipeline as data: registered passes with their options as fields, named pipelines, one
driver that records every pass (its SCoP and options as fields) and calls back between passes."""

from __future__ import annotations

import dataclasses

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.passes import PassRecord
from core_compiler.pipeline import (
    PIPELINES,
    REGISTRY,
    GpuOptions,
    MapToGpu,
    ScopUnit,
    backend,
    gpu_program,
    run_passes,
)
from core_compiler.transform.gpu_mapping import MappingOptions
from tests.conftest import KERNELS

MATMUL = """
void matmul(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
}
"""

REJECTED = """
void gather(int n, int *idx, double *a, double *b) {
  for (int i = 0; i < n; i++)
    a[i] = b[idx[i]];
}
"""


def _fn(text: str, name: str):  # type: ignore[no-untyped-def]
    return analyze_file(f"{name}.c", text).function(name)


def test_every_pass_is_a_frozen_dataclass_registered_under_its_name() -> None:
    for name, cls in REGISTRY.items():
        assert cls.name == name
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    for pipeline, make in PIPELINES.items():
        for p in make():
            assert REGISTRY[p.name] is type(p), (pipeline, p.name)


def test_the_trace_is_the_declared_pipelines_in_order() -> None:
    fn = _fn(MATMUL, "matmul")
    assert [p.name for p in fn.trace] == [p.name for p in PIPELINES["analysis"]()]
    assert [p.scop for p in fn.trace] == [None, None, 0, 0]
    records = backend(fn, source=("matmul.c", MATMUL)).records
    assert [r.name for r in records] == ["ad", *(p.name for p in PIPELINES["editor"]())]
    assert [r.label for r in records][1:3] == ["schedule[0]", "gpu-mapping[0]"]


def test_a_pass_records_its_options_as_fields() -> None:
    fn = _fn(MATMUL, "matmul")
    options = GpuOptions(mapping=MappingOptions(tile_size=16))
    mapping = next(r for r in backend(fn, options).records if r.name == "gpu-mapping")
    assert "tile_size=16" in dict(mapping.options)["options"]
    assert "tiles 16x16" in mapping.text


def test_the_driver_calls_back_after_each_pass() -> None:
    fn = _fn(MATMUL, "matmul")
    seen: list[PassRecord] = []
    result = backend(fn, on_pass=seen.append)
    assert tuple(seen) == result.records


def test_detection_remarks_are_in_the_trace() -> None:
    fn = _fn(REJECTED, "gather")
    detect = next(r for r in fn.trace if r.name == "scop-detect")
    assert "IndirectAccess" in {r.name for r in detect.remarks}


def test_a_failing_pass_is_recorded_and_stops_its_scop(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: MapToGpu, unit: ScopUnit) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(MapToGpu, "run", broken)
    records = backend(_fn(MATMUL, "matmul")).records
    assert [r.label for r in records] == ["schedule[0]", "backend-error[0]"]
    assert "RuntimeError: boom" in records[-1].text


def test_gpu_program_is_the_schedule_and_mapping_passes() -> None:
    fa = analyze_file(str(KERNELS / "gemm.c"), only="kernel_gemm")
    (sa,) = fa.functions[0].scops
    by_driver = run_passes(ScopUnit(sa, ""), GpuOptions().passes()).need("gpu")
    direct = gpu_program(sa)
    assert [k.statements for k in direct.kernels] == [k.statements for k in by_driver.kernels]
    assert [p.array for p in direct.kernels[0].promotions] == ["A", "B", "C"]


def test_one_analysis_is_scheduled_and_mapped_once_per_options() -> None:
    """`pipeline._kept`: the GPU passes of one analysis run once per options (compile for CUDA,
    then OpenCL, then the PTX pass map it once); a schedule made elsewhere maps afresh; the
    memo goes with the analysis."""
    import gc

    from core_compiler.pipeline import _DECIDED, Schedule

    (sa,) = _fn(MATMUL, "matmul").scops
    first = run_passes(ScopUnit(sa, "a"), (*GpuOptions().passes(), REGISTRY["ptx"]()))
    again = run_passes(ScopUnit(sa, "b"), GpuOptions().passes())
    assert again.need("schedule") is first.need("schedule") and again.need("gpu") is first.need("gpu")
    other = run_passes(ScopUnit(sa, ""), GpuOptions(mapping=MappingOptions(tile_size=16)).passes())
    assert other.need("gpu") is not first.need("gpu") and other.need("gpu").kernels[0].tile != first.need("gpu").kernels[0].tile
    fresh = Schedule().run(ScopUnit(sa, ""))[0]
    elsewhere = dataclasses.replace(fresh, schedule=fresh.need("schedule").copy())  # the same tree, another object
    assert MapToGpu().run(elsewhere)[0].need("gpu") is not first.need("gpu")
    del sa, first, again, other, fresh, elsewhere
    gc.collect()
    assert not [s for s in _DECIDED if s.scop.function == "matmul"]
