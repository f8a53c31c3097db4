"""`hexplore compile`: schedule, map and generate code for every SCoP of a file.

Returns generated files (name -> text) and remarks: one per kernel saying what was offloaded and
how it was mapped, one per SCoP that stayed on the host.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core_compiler.analysis import FileAnalysis
from core_compiler.codegen.c import COptions, generate_c
from core_compiler.codegen.cuda import host_header, host_parameter
from core_compiler.pipeline import CudaCodegen, GpuOptions, OpenclCodegen, ScopUnit, run_passes
from core_compiler.remarks import Remark, passed
from core_compiler.source_map import SourceMap
from core_compiler.transform.gpu_cost import offload_decision
from core_compiler.transform.gpu_remarks import mapping_remarks
from core_compiler.transform.profitability import decide

TARGETS = ("cuda", "opencl", "c")


@dataclass(frozen=True)
class CompileResult:
    files: dict[str, str]
    remarks: tuple[Remark, ...]
    source_maps: dict[str, SourceMap] = field(default_factory=dict)  # file -> its statements' lines


def compile_file(
    fa: FileAnalysis,
    target: str,
    options: GpuOptions | None = None,
    c_options: COptions | None = None,
    text: str | None = None,
    always_offload: bool = False,
) -> CompileResult:
    """`text` is the source `fa` was analysed from (default: the file); only the C target reads it."""
    options = options or GpuOptions()
    if target == "c":
        return compile_c(fa, c_options or COptions(), text)
    files: dict[str, str] = {}
    maps: dict[str, SourceMap] = {}
    remarks: list[Remark] = []
    stem = Path(fa.path).stem
    for f in fa.functions:
        for sa in f.scops:
            name = f"{stem}_{f.function.name}" + (f"_{sa.scop.index}" if sa.scop.index else "")
            worth, mapped = decide(sa.scop), None
            if worth.decision != "cpu":  # enough work: the cost model weighs the GPU code against the CPU
                mapped = run_passes(ScopUnit(sa, name), options.passes())
                worth = offload_decision(mapped.need("gpu"))
            remarks.append(worth.remark)
            if worth.decision == "cpu" and not always_offload:
                continue
            codegen: CudaCodegen | OpenclCodegen = OpenclCodegen()
            if target == "cuda":
                check = None if always_offload else worth.condition_c
                codegen = CudaCodegen(check, tuple(host_parameter(p) for p in f.function.params))  # the original's ABI
            unit = run_passes(mapped, (codegen,)) if mapped else run_passes(ScopUnit(sa, name), (*options.passes(), codegen))
            remarks += mapping_remarks(unit.need("gpu"))
            if target == "cuda":
                files.update(unit.need("cuda").files(name))
                maps.update(unit.need("cuda").source_maps(name))
                files[f"{name}_host.h"] = host_header(f.function, unit.need("cuda").host_params, name)
                maps[f"{name}_host.h"] = SourceMap()
            else:
                files[f"{name}.cl"] = unit.need("opencl").source
                maps[f"{name}.cl"] = unit.need("opencl").source_map
    return CompileResult(files, tuple(remarks), maps)


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
    name = f"{Path(fa.path).stem}.hexplore.c"
    return CompileResult({name: generated.source}, tuple(remarks), {name: generated.source_map})
