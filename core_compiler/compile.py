"""`hexplore compile`: schedule, map and generate code for every SCoP of a file.

Returns generated files (name -> text) and remarks: one per kernel saying what was offloaded and
how it was mapped, one per SCoP that stayed on the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core_compiler.analysis import FileAnalysis
from core_compiler.codegen.c import COptions, generate_c
from core_compiler.codegen.cuda import generate_cuda
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.gpu import GpuProgram, Kernel, MappingOptions, map_to_gpu
from core_compiler.profitability import decide
from core_compiler.remarks import Remark, missed, passed
from core_compiler.schedule import ScheduleOptions, compute_gpu_schedule

TARGETS = ("cuda", "opencl", "c")


@dataclass(frozen=True)
class CompileResult:
    files: dict[str, str]
    remarks: tuple[Remark, ...]


def compile_file(
    fa: FileAnalysis,
    target: str,
    mapping: MappingOptions | None = None,
    schedule: ScheduleOptions | None = None,
    c_options: COptions | None = None,
    text: str | None = None,
    always_offload: bool = False,
) -> CompileResult:
    """`text` is the source `fa` was analysed from (default: the file); only the C target reads it."""
    mapping = mapping or MappingOptions()
    schedule = schedule or ScheduleOptions(parallel_reductions=True)
    if target == "c":
        return compile_c(fa, c_options or COptions(schedule=schedule), text)
    files: dict[str, str] = {}
    remarks: list[Remark] = []
    stem = Path(fa.path).stem
    for f in fa.functions:
        for sa in f.scops:
            worth = decide(sa.scop)
            remarks.append(worth.remark)
            if worth.decision == "cpu" and not always_offload:
                continue
            gpu = map_to_gpu(sa.scop, compute_gpu_schedule(sa.scop, sa.deps, schedule), mapping, sa.deps)
            name = f"{stem}_{f.function.name}" + (f"_{sa.scop.index}" if sa.scop.index else "")
            remarks += mapping_remarks(gpu)
            if target == "cuda":
                check = None if always_offload else worth.condition_c
                order = tuple(p.name for p in f.function.params)
                files.update(generate_cuda(gpu, name, check, order).files(name))
            else:
                files[f"{name}.cl"] = generate_opencl(gpu).source
    return CompileResult(files, tuple(remarks))


def compile_c(fa: FileAnalysis, options: COptions, text: str | None = None) -> CompileResult:
    """One file, ``<stem>.hexplore.c``: the input with every SCoP replaced by tiled C."""
    source = Path(fa.path).read_text(encoding="utf-8") if text is None else text
    generated = generate_c(fa, source, options)
    remarks = []
    for code in generated.scops:
        how = ""
        if options.openmp:
            n = code.parallel_loops
            how = f"; {n} loop(s) run in parallel (`#pragma omp parallel for`)" if n else "; no loop is parallel"
        message = f"this loop nest is replaced by generated C{how}"
        remarks.append(
            passed("c-codegen", "CpuCode", message, code.range, code.function, parallel_loops=code.parallel_loops)
        )
    return CompileResult({f"{Path(fa.path).stem}.hexplore.c": generated.source}, tuple(remarks))


def memory_summary(k: Kernel) -> str:
    """``; A, B in shared memory (32x32, 32x32 tiles); C in registers`` — what PPCG's promotion chose."""
    shared = [p for p in k.promotions if p.place == "shared"]
    regs = [p for p in k.promotions if p.place == "register"]
    parts = []
    if shared:
        sizes = ", ".join("x".join(map(str, p.size)) for p in shared)
        parts.append(f"{', '.join(p.array for p in shared)} in shared memory ({sizes} tiles)")
    if regs:
        parts.append(f"{', '.join(p.array for p in regs)} in registers")
    return "".join(f"; {p}" for p in parts)


def mapping_remarks(gpu: GpuProgram) -> list[Remark]:
    scop = gpu.scop
    out = []
    for k in gpu.kernels:
        if k.parallel:
            block = "x".join(map(str, reversed(k.block)))
            out.append(
                passed(
                    "gpu-mapping",
                    "Offloaded",
                    f"offloaded to the GPU as {k.name}: statements {', '.join(k.statements)}, "
                    f"{len(k.tile)} block dimension(s) of {'x'.join(map(str, k.tile))} tiles, "
                    f"block {block} threads" + memory_summary(k),
                    scop.range,
                    scop.function,
                    kernel=k.name,
                    block=list(reversed(k.block)),
                    tile=list(k.tile),
                    host_loops=len(k.host_params),
                    shared=[p.array for p in k.promotions if p.place == "shared"],
                    registers=[p.array for p in k.promotions if p.place == "register"],
                    global_memory={g.array: g.reason for g in k.global_accesses},
                )
            )
            for name in sorted(k.atomic):
                stmt = scop.statement(name)
                out.append(
                    passed(
                        "gpu-mapping",
                        "ReductionParallelized",
                        f"the reduction into `{stmt.writes[0].array}` runs in parallel in {k.name}: "
                        "threads add their values with atomic additions",
                        stmt.range,
                        scop.function,
                        kernel=k.name,
                        statement=name,
                        method="atomics",
                    )
                )
        else:
            out.append(
                missed(
                    "gpu-mapping",
                    "SequentialKernel",
                    f"{k.name} runs statements {', '.join(k.statements)} on one GPU thread: no loop "
                    "around them is parallel",
                    scop.range,
                    scop.function,
                    kernel=k.name,
                )
            )
    return out
