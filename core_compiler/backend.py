"""The back-end passes of one function, computed on demand for the explorer and the UIs:
``schedule[k]``, ``gpu-mapping[k]``, ``codegen-cuda[k]``, ``codegen-opencl[k]``, ``llvm-ir[k]``
(the CPU code of the optimized schedule) and ``ptx[k]`` for each SCoP ``k``.

They are not part of `analyze` (which runs on every keystroke): a UI asks for them when the user
opens a view. A pass that fails records its error as its artifact, and the later passes of that
SCoP are skipped, so a view always has something to say.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core_compiler.analysis import FunctionAnalysis, ScopAnalysis
from core_compiler.codegen.cuda import generate_cuda
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.compile import mapping_remarks
from core_compiler.gpu import GpuProgram, MappingOptions, map_to_gpu
from core_compiler.passes import PassRecord, Trace
from core_compiler.profitability import decide
from core_compiler.remarks import Remark
from core_compiler.schedule import ScheduleOptions, compute_gpu_schedule, render_tree


@dataclass(frozen=True)
class BackendOptions:
    mapping: MappingOptions = field(default_factory=MappingOptions)
    schedule: ScheduleOptions = field(default_factory=lambda: ScheduleOptions(parallel_reductions=True))


def backend_trace(
    fn: FunctionAnalysis, options: BackendOptions | None = None, source: tuple[str, str] | None = None
) -> tuple[PassRecord, ...]:
    """`source` (path, whole file text) adds the `ad` pass: the reverse-mode derivative."""
    options = options or BackendOptions()
    trace = Trace()
    if source is not None and fn.scops:
        trace.run("ad", lambda: _derivative(fn, *source), str)
    for sa in fn.scops:
        try:
            _scop_passes(trace, fn, sa, options)
        except Exception as e:  # a bug in a back end must not take the view down: say it
            name = f"backend-error[{sa.scop.index}]"
            trace.records.append(PassRecord(name, f"hexplore failed here: {type(e).__name__}: {e}\n", (), 0.0))
    return trace.freeze()


def _scop_passes(trace: Trace, fn: FunctionAnalysis, sa: ScopAnalysis, options: BackendOptions) -> None:
    k = sa.scop.index
    schedule, _ = trace.run(
        f"schedule[{k}]", lambda: (compute_gpu_schedule(sa.scop, sa.deps, options.schedule), []), render_tree
    )

    def mapping() -> tuple[GpuProgram, list]:  # type: ignore[type-arg]
        gpu = map_to_gpu(sa.scop, schedule, options.mapping, sa.deps)
        return gpu, [decide(sa.scop).remark, *mapping_remarks(gpu)]

    gpu, _ = trace.run(f"gpu-mapping[{k}]", mapping, render_mapping)
    stem = f"{fn.function.name}_{k}"
    trace.run(f"codegen-cuda[{k}]", lambda: (generate_cuda(gpu, stem), []), lambda c: c.kernel_cu + "\n" + c.host_cu)
    trace.run(f"codegen-opencl[{k}]", lambda: (generate_opencl(gpu).source, []), str)
    trace.run(f"llvm-ir[{k}]", lambda: (_cpu_ir(sa, schedule), []), str)
    trace.run(f"ptx[{k}]", lambda: (_ptx(gpu), []), str)


def _derivative(fn: FunctionAnalysis, path: str, text: str) -> tuple[str, list[Remark]]:
    """The gradient of everything the function writes with respect to its floating-point
    parameters (what `hexplore grad FILE --function F --wrt <all>` prints), or why not."""
    from core_compiler.ad import NotDifferentiable, differentiate
    from core_compiler.ad.differentiate import float_param

    wrt = tuple(p.name for p in fn.function.params if float_param(p))
    try:
        d = differentiate(path, fn.function.name, wrt, text=text)
    except NotDifferentiable as e:
        return f"not differentiated: {e}\n", list(e.remarks)
    return d.source, list(d.remarks)


def _cpu_ir(sa: ScopAnalysis, schedule: object) -> str:
    from core_compiler.llvm.cpu import lower_cpu, optimized_ast  # llvmlite loads only when asked

    return lower_cpu(sa.scop, optimized_ast(sa.scop, schedule), f"{sa.scop.function}_opt").ir  # type: ignore[arg-type]


def _ptx(gpu: GpuProgram) -> str:
    from core_compiler.llvm.nvptx import lower_gpu

    return lower_gpu(gpu).ptx


def render_mapping(gpu: GpuProgram) -> str:
    """One paragraph per kernel: what runs where, how it is tiled and where its arrays live."""
    lines = []
    for k in gpu.kernels:
        if not k.parallel:
            lines.append(f"{k.name}: {', '.join(k.statements)} on one GPU thread (no parallel loop)")
            continue
        lines.append(f"{k.name}: {', '.join(k.statements)}")
        lines.append(f"  tiles {'x'.join(map(str, k.shape.tile))}, blocks over {k.n_block_dims} dim(s), block {'x'.join(map(str, reversed(k.block)))} threads")
        lines.append(f"  host loops: {len(k.host_params)}; mapped members: {'; '.join(k.band_members)}")
        for p in k.promotions:
            lines.append(f"  {p.array}: {p.place} {'x'.join(map(str, p.size))} ({p.reason})")
        for g in k.global_accesses:
            lines.append(f"  {g.array}: global ({g.reason})")
        for s in sorted(k.atomic):
            lines.append(f"  {s}: reduction with atomic additions")
    return "\n".join(lines) + "\n"
