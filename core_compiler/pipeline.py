"""The pipeline, declared once: every pass with its name and options, the registry, the named
pipelines, and the drivers every face and check calls.

    analysis  frontend -> scop-detect -> polyhedral-model[k] -> dependences[k]   (analysis.py)
    gpu       schedule[k] -> gpu-mapping[k] -> codegen-cuda[k], codegen-opencl[k], ptx[k]
    cpu       schedule[k] (CPU options) -> llvm-ir[k]
    editor    what the editor and the TUI step through: the gpu pipeline with llvm-ir[k] of the
              GPU schedule, and `ad`, the reverse-mode derivative of the function
    ad        the derivative, which re-enters at `analysis`

A back-end pass reads a `ScopUnit` and returns it with one more field filled in, so the passes of
a pipeline chain without glue. The defaults of every option live in the pass's fields (and in
`GpuOptions` for the two GPU passes together); nothing else restates them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import islpy as isl

from core_compiler.analysis import (
    BuildModel,
    ComputeDependences,
    DetectScops,
    FileAnalysis,
    Frontend,
    FunctionAnalysis,
    ScopAnalysis,
    analyze_file,
)
from core_compiler.codegen.cuda import CudaFiles, generate_cuda
from core_compiler.codegen.opencl import (
    DeviceProgram,
    generate_opencl,
    layout_remarks,
    vector_remarks,
)
from core_compiler.cuda.check import CheckKernel
from core_compiler.passes import Pass, PassRecord, Trace, failed
from core_compiler.remarks import Remark
from core_compiler.source_map import SourceMap
from core_compiler.transform.cpu_schedule import CpuOptions
from core_compiler.transform.gpu_cost import offload_decision
from core_compiler.transform.gpu_mapping import GpuProgram, MappingOptions, map_to_gpu
from core_compiler.transform.gpu_remarks import mapping_remarks, render_mapping
from core_compiler.transform.schedule import (
    ScheduleOptions,
    compute_gpu_schedule,
    render_tree,
    schedule_gave_up,
)

# The GPU's schedule lets loops that only carry `+=` reductions run in parallel (the mapping then
# makes those updates atomic); the CPU's does not.
GPU_SCHEDULE = ScheduleOptions(parallel_reductions=True, maximize_coincidence=True)
CPU_SCHEDULE = ScheduleOptions()


@dataclass(frozen=True, eq=False)
class ScopUnit:
    """One SCoP as the back-end passes fill it in: each reads earlier fields and sets its own."""

    analysis: ScopAnalysis
    stem: str  # names the generated code: ``<function>_<k>``
    schedule: isl.Schedule | None = None
    gpu: GpuProgram | None = None
    cuda: CudaFiles | None = None
    opencl: DeviceProgram | None = None
    llvm_ir: str | None = None
    ptx: str | None = None
    llvm_map: SourceMap | None = None  # the statements' lines in `llvm_ir`
    ptx_map: SourceMap | None = None  # and in `ptx`

    @staticmethod
    def of(fn: FunctionAnalysis, sa: ScopAnalysis) -> ScopUnit:
        return ScopUnit(sa, f"{fn.function.name}_{sa.scop.index}")

    def need(self, name: str) -> Any:
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"pass ordering: `{name}` is not computed yet")
        return value


# ------------------------------------------------------------------------------- back-end passes


# The schedule, the GPU mapping and its PTX are pure functions of their SCoP and options, and cost
# seconds (2mm's register-tiled mapping most of its back end): each is kept with its analysis
# (per object: it goes when the analysis does), so compiling one analysis for CUDA, OpenCL and
# PTX, or the editor's decisions, placements and views of it, schedule and map it once.
_DECIDED: weakref.WeakKeyDictionary[ScopAnalysis, dict[object, Any]] = weakref.WeakKeyDictionary()


def _kept(sa: ScopAnalysis, key: object, compute: Callable[[], Any], of: object = None) -> Any:
    """`compute()`, once per `sa` and `key` (the options' repr: `MappingOptions.sizes` is a dict)
    and, where given, per input object `of` (a pass's input that is not this memo's own output:
    a schedule or mapping made elsewhere computes afresh)."""
    memo = _DECIDED.setdefault(sa, {})
    kept = memo.get((key, id(of)))
    if kept is None or kept[0] is not of:
        kept = memo[key, id(of)] = (of, compute())
    return kept[1]


@dataclass(frozen=True)
class Schedule:
    name: ClassVar[str] = "schedule"
    options: ScheduleOptions = GPU_SCHEDULE

    def run(self, u: ScopUnit) -> tuple[ScopUnit, list[Remark]]:
        sa = u.analysis
        schedule = _kept(sa, ("schedule", repr(self.options)), lambda: compute_gpu_schedule(sa.scop, sa.deps, self.options))
        return replace(u, schedule=schedule), schedule_gave_up(sa.scop)

    def render(self, u: ScopUnit) -> str:
        return render_tree(u.need("schedule"))


@dataclass(frozen=True)
class MapToGpu:
    name: ClassVar[str] = "gpu-mapping"
    options: MappingOptions = field(default_factory=MappingOptions)

    def run(self, u: ScopUnit) -> tuple[ScopUnit, list[Remark]]:
        sa, schedule = u.analysis, u.need("schedule")
        gpu = _kept(sa, ("gpu", repr(self.options)), lambda: map_to_gpu(sa.scop, schedule, self.options, sa.deps), schedule)
        return replace(u, gpu=gpu), [offload_decision(gpu).remark, *mapping_remarks(gpu)]

    def render(self, u: ScopUnit) -> str:
        return render_mapping(u.need("gpu"))


@dataclass(frozen=True)
class CudaCodegen:
    """PPCG's layout: kernels, their header and the host code. `offload_if` is the profitability
    model's run-time condition (the host code falls back to the CPU when it is false); `order` is
    the host function's parameter order (the original function's); `host_name` names the host
    function of a SCoP that is not its function's whole body (`generate_cuda`)."""

    name: ClassVar[str] = "codegen-cuda"
    language: ClassVar[str] = "cuda-cpp"
    offload_if: str | None = None
    order: tuple[str, ...] = ()
    host_name: str | None = None

    def run(self, u: ScopUnit) -> tuple[ScopUnit, list[Remark]]:
        return replace(u, cuda=generate_cuda(u.need("gpu"), u.stem, self.offload_if, self.order, self.host_name)), []

    def render(self, u: ScopUnit) -> str:
        return self.source_map_of(u)[0]

    @staticmethod
    def source_map_of(u: ScopUnit) -> tuple[str, SourceMap]:
        cuda: CudaFiles = u.need("cuda")
        return cuda.listing()


@dataclass(frozen=True)
class OpenclCodegen:
    """OpenCL C kernels; `layout` "transposed" reads strided read-only arrays from transposed
    copies (`codegen/layouts.py`)."""

    name: ClassVar[str] = "codegen-opencl"
    language: ClassVar[str] = "opencl"
    layout: str = "default"

    def run(self, u: ScopUnit) -> tuple[ScopUnit, list[Remark]]:
        program = generate_opencl(u.need("gpu"), self.layout)
        return replace(u, opencl=program), [*vector_remarks(program), *layout_remarks(program)]

    def render(self, u: ScopUnit) -> str:
        return u.need("opencl").source  # type: ignore[no-any-return]

    @staticmethod
    def source_map_of(u: ScopUnit) -> tuple[str, SourceMap]:
        program: DeviceProgram = u.need("opencl")
        return program.source, program.source_map


@dataclass(frozen=True)
class CpuLlvmIr:
    """The CPU code of the unit's schedule (tiled, parallel loops outlined to libgomp)."""

    name: ClassVar[str] = "llvm-ir"
    language: ClassVar[str] = "llvm"
    options: CpuOptions = field(default_factory=CpuOptions)

    def run(self, u: ScopUnit) -> tuple[ScopUnit, list[Remark]]:
        from core_compiler.llvm.cpu_lowering import (  # llvmlite loads only when asked
            lower_cpu,
            optimized_ast,
        )

        scop = u.analysis.scop
        ast = optimized_ast(scop, u.need("schedule"), self.options)
        module = lower_cpu(scop, ast, f"{scop.function}_opt")
        return replace(u, llvm_ir=module.ir, llvm_map=module.source_map), []

    def render(self, u: ScopUnit) -> str:
        return u.need("llvm_ir")  # type: ignore[no-any-return]

    @staticmethod
    def source_map_of(u: ScopUnit) -> tuple[str, SourceMap]:
        return u.need("llvm_ir"), u.need("llvm_map")


@dataclass(frozen=True)
class Ptx:
    name: ClassVar[str] = "ptx"
    language: ClassVar[str] = "ptx"

    def run(self, u: ScopUnit) -> tuple[ScopUnit, list[Remark]]:
        from core_compiler.llvm.nvptx import lower_gpu

        gpu = u.need("gpu")
        module = _kept(u.analysis, "ptx", lambda: lower_gpu(gpu), gpu)
        return replace(u, ptx=module.ptx, ptx_map=module.source_map), []

    def render(self, u: ScopUnit) -> str:
        return u.need("ptx")  # type: ignore[no-any-return]

    @staticmethod
    def source_map_of(u: ScopUnit) -> tuple[str, SourceMap]:
        return u.need("ptx"), u.need("ptx_map")


# ------------------------------------------------------------------------------- function passes


@dataclass(frozen=True)
class FunctionSource:
    analysis: FunctionAnalysis
    path: str
    text: str  # the whole file


@dataclass(frozen=True)
class Differentiate:
    """The gradient of everything the function writes with respect to its floating-point
    parameters (what `hexplore grad FILE --function F --wrt <all>` prints), or why not."""

    name: ClassVar[str] = "ad"
    language: ClassVar[str] = "c"

    def run(self, src: FunctionSource) -> tuple[str, list[Remark]]:
        from core_compiler.ad import NotDifferentiable, differentiate
        from core_compiler.ad.differentiate import float_param

        fn = src.analysis.function
        wrt = tuple(p.name for p in fn.params if float_param(p))
        try:
            d = differentiate(src.path, fn.name, wrt, text=src.text)
        except NotDifferentiable as e:
            return f"not differentiated: {e}\n", list(e.remarks)
        return d.source, list(d.remarks)

    def render(self, text: str) -> str:
        return text


# ------------------------------------------------------------------------------- registry


REGISTRY: dict[str, type] = {
    p.name: p
    for p in (
        Frontend,
        DetectScops,
        CheckKernel,
        BuildModel,
        ComputeDependences,
        Schedule,
        MapToGpu,
        CudaCodegen,
        OpenclCodegen,
        CpuLlvmIr,
        Ptx,
        Differentiate,
    )
}


def artifact_language(name: str) -> str:
    """The editor language id of a pass's artifact (``codegen-cuda`` -> ``cuda-cpp``)."""
    return getattr(REGISTRY.get(name), "language", "plaintext")


def artifact_source_map(name: str, unit: ScopUnit) -> tuple[str, SourceMap]:
    """The artifact of the code-generating pass `name` for `unit` (its `render`) and which of its
    lines execute which statement (`core_compiler/source_map.py`)."""
    of = getattr(REGISTRY.get(name), "source_map_of", None)
    if of is None:
        raise ValueError(f"`{name}` generates no code")
    return of(unit)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class GpuOptions:
    """The options of the two passes that decide a GPU mapping, together, and the OpenCL data
    layout (`OpenclCodegen.layout`: "default" | "transposed"), which the mapping does not read."""

    schedule: ScheduleOptions = GPU_SCHEDULE
    mapping: MappingOptions = field(default_factory=MappingOptions)
    layout: str = "default"

    def passes(self) -> tuple[Schedule, MapToGpu]:
        return Schedule(self.schedule), MapToGpu(self.mapping)


def gpu_passes(options: GpuOptions | None = None) -> tuple[Pass[ScopUnit, ScopUnit], ...]:
    options = options or GpuOptions()
    return (*options.passes(), CudaCodegen(), OpenclCodegen(options.layout), Ptx())


def cpu_passes(schedule: ScheduleOptions = CPU_SCHEDULE, cpu: CpuOptions | None = None) -> tuple[Pass[ScopUnit, ScopUnit], ...]:
    return Schedule(schedule), CpuLlvmIr(cpu or CpuOptions())


def editor_passes(options: GpuOptions | None = None) -> tuple[Pass[ScopUnit, ScopUnit], ...]:
    options = options or GpuOptions()
    return (*options.passes(), CudaCodegen(), OpenclCodegen(options.layout), CpuLlvmIr(), Ptx())


PIPELINES: dict[str, Callable[[], Sequence[Any]]] = {
    "analysis": lambda: (Frontend(), DetectScops(), BuildModel(), ComputeDependences()),
    "cuda-kernel": lambda: (Frontend(), CheckKernel()),  # a `__global__` kernel instead of `analysis`
    "gpu": gpu_passes,
    "cpu": cpu_passes,
    "editor": editor_passes,
    "ad": lambda: (Differentiate(),),
}


# ------------------------------------------------------------------------------- drivers


def run_passes(unit: ScopUnit, passes: Sequence[Pass[ScopUnit, ScopUnit]], trace: Trace | None = None) -> ScopUnit:
    """The one driver of back-end passes: each pass's output is the next one's input."""
    trace = trace if trace is not None else Trace()
    for p in passes:
        unit, _ = trace.run(p, unit, unit.analysis.scop.index)
    return unit


def gpu_program(sa: ScopAnalysis, options: GpuOptions | None = None) -> GpuProgram:
    """Schedule `sa` for the GPU and map it: what `compile`, `run --device`, the checks and the
    editor's hovers all start from."""
    unit = run_passes(ScopUnit(sa, ""), (options or GpuOptions()).passes())
    return unit.need("gpu")  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Backend:
    records: tuple[PassRecord, ...]
    units: tuple[ScopUnit, ...]  # as far as each SCoP's passes got


def backend(
    fn: FunctionAnalysis,
    options: GpuOptions | None = None,
    source: tuple[str, str] | None = None,
    on_pass: Callable[[PassRecord], None] | None = None,
) -> Backend:
    """The editor pipeline of every SCoP of `fn`, and the `ad` pass when `source` (path, whole
    file text) is given. A pass that fails records its error as its artifact and the later passes
    of that SCoP are skipped, so a view always has something to say."""
    trace = Trace(on_pass=on_pass)
    if source is not None and fn.scops:
        trace.run(Differentiate(), FunctionSource(fn, *source))
    units = []
    for sa in fn.scops:
        unit = ScopUnit.of(fn, sa)
        for p in editor_passes(options):
            try:
                unit, _ = trace.run(p, unit, sa.scop.index)
            except Exception as e:  # a bug in a back end must not take the view down: say it
                trace.add(failed("backend-error", sa.scop.index, e))
                break
        units.append(unit)
    return Backend(trace.freeze(), tuple(units))


def backend_trace(
    fn: FunctionAnalysis, options: GpuOptions | None = None, source: tuple[str, str] | None = None
) -> tuple[PassRecord, ...]:
    return backend(fn, options, source).records


__all__ = [
    "CPU_SCHEDULE",
    "GPU_SCHEDULE",
    "PIPELINES",
    "REGISTRY",
    "Backend",
    "FileAnalysis",
    "GpuOptions",
    "ScopUnit",
    "analyze_file",
    "artifact_language",
    "artifact_source_map",
    "backend",
    "backend_trace",
    "gpu_program",
    "run_passes",
]
