"""`hexplore compile`: schedule, map and generate code for every SCoP of a file.

Returns generated files (name -> text) and remarks: one per kernel saying what was offloaded and
how it was mapped, one per SCoP that stayed on the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core_compiler.analysis import FileAnalysis
from core_compiler.codegen.cuda import generate_cuda
from core_compiler.codegen.opencl import generate_opencl
from core_compiler.gpu import GpuProgram, MappingOptions, map_to_gpu
from core_compiler.remarks import Remark, missed, passed
from core_compiler.schedule import ScheduleOptions, compute_schedule

TARGETS = ("cuda", "opencl")


@dataclass(frozen=True)
class CompileResult:
    files: dict[str, str]
    remarks: tuple[Remark, ...]


def compile_file(
    fa: FileAnalysis,
    target: str,
    mapping: MappingOptions | None = None,
    schedule: ScheduleOptions | None = None,
) -> CompileResult:
    mapping = mapping or MappingOptions()
    schedule = schedule or ScheduleOptions()
    files: dict[str, str] = {}
    remarks: list[Remark] = []
    stem = Path(fa.path).stem
    for f in fa.functions:
        for sa in f.scops:
            gpu = map_to_gpu(sa.scop, compute_schedule(sa.scop, sa.deps, schedule), mapping)
            name = f"{stem}_{f.function.name}" + (f"_{sa.scop.index}" if sa.scop.index else "")
            remarks += mapping_remarks(gpu)
            if target == "cuda":
                files.update(generate_cuda(gpu, name).files(name))
            else:
                files[f"{name}.cl"] = generate_opencl(gpu).source
    return CompileResult(files, tuple(remarks))


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
                    f"block {block} threads",
                    scop.range,
                    scop.function,
                    kernel=k.name,
                    block=list(reversed(k.block)),
                    tile=list(k.tile),
                    host_loops=len(k.host_params),
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
