"""`hexplore compile`: schedule, map and generate code for every SCoP of a file.

Returns generated files (name -> text) and remarks: one per kernel saying what was offloaded and
how it was mapped, one per SCoP that stayed on the host. A function that is more than its one SCoP
keeps its source in ``<stem>_host.c``, each offloaded SCoP a call (`codegen/host_calls.py`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from core_compiler.analysis import FileAnalysis, FunctionAnalysis, ScopAnalysis
from core_compiler.codegen.c import COptions, KeptScop, generate_c
from core_compiler.codegen.cuda import host_header, host_parameter
from core_compiler.codegen.host_calls import (
    HOST_FILE,
    HostCall,
    called,
    host_calls_file,
    host_function_name,
    scop_call,
    scop_header,
    split_problem,
    takes_whole,
    whole_function,
)
from core_compiler.frontend.ir import Directive
from core_compiler.passes import Trace
from core_compiler.pipeline import CudaCodegen, GpuOptions, OpenclCodegen, ScopUnit, run_passes
from core_compiler.remarks import Remark, missed, passed
from core_compiler.source_map import SourceMap
from core_compiler.transform.directives import (
    directed_sizes,
    gpu_refusal,
    kept_by,
    nest_directive,
    no_parallel_loop,
    offloaded_by,
)
from core_compiler.transform.gpu_cost import offload_decision
from core_compiler.transform.gpu_remarks import mapping_remarks
from core_compiler.transform.profitability import Profitability, decide
from core_compiler.transform.schedule import schedule_gave_up


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
    """`text` is the source `fa` was analysed from (default: the file); the C target reads it, and
    the CUDA target where a function is more than its one SCoP (`codegen/host_calls.py`)."""
    options = options or GpuOptions()
    if target == "c":
        return compile_c(fa, c_options or COptions(), text)
    out = _Output(fa.path, text if text is not None else _LazyText(fa.path))
    for f in fa.functions:
        split = target == "cuda" and not takes_whole(f)
        for sa in f.scops:
            _compile_scop(out, f, sa, target, options, always_offload, split)
    calls = [c for c in out.calls if c.header]  # SCoPs replaced by calls: the source is rewritten
    if calls:
        name = f"{out.stem}{HOST_FILE}"
        out.files[name] = host_calls_file(out.source(), out.calls)
        out.maps[name] = SourceMap()
    return CompileResult(out.files, tuple(out.remarks), out.maps)


@dataclass(frozen=True)
class _LazyText:
    """The source file, read when a function is more than its SCoP."""

    path: str

    def read(self) -> str:
        return Path(self.path).read_text(encoding="utf-8")


@dataclass
class _Output:
    """What `compile_file` gathers, SCoP by SCoP."""

    path: str
    text: str | _LazyText
    files: dict[str, str] = field(default_factory=dict)
    maps: dict[str, SourceMap] = field(default_factory=dict)  # file -> its statements' lines
    remarks: list[Remark] = field(default_factory=list)
    calls: list[HostCall] = field(default_factory=list)  # what `<stem>_host.c` replaces

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    def source(self) -> str:
        if isinstance(self.text, _LazyText):
            self.text = self.text.read()
        return self.text

    @functools.cached_property
    def taken(self) -> frozenset[str]:
        """The identifiers of the source, which generated names avoid."""
        return frozenset(re.findall(r"[A-Za-z_]\w*", self.source()))


def _compile_scop(
    out: _Output, f: FunctionAnalysis, sa: ScopAnalysis, target: str, options: GpuOptions, always: bool, split: bool
) -> None:
    """One SCoP's files and remarks; `split`: its function is more than it (a host function of its
    own, called from the rewritten source)."""
    problem = split_problem(f, sa, out.path, out.source()) if split else None
    if problem is not None:
        out.remarks.append(problem)
        return
    name = f"{out.stem}_{f.function.name}" + (f"_{sa.scop.index}" if sa.scop.index else "")
    directive = nest_directive(f.function, sa.scop.loops)
    worth, mapped, options = _decision(out, sa, name, options, directive)
    out.remarks.append(worth.remark)
    if worth.remark.name == "OffloadedByDirective":
        always = True  # no run-time check either
    elif worth.decision == "cpu" and (not always or worth.remark.name in ("HostCall", "KeptOnCpuByDirective")):
        return
    codegen: CudaCodegen | OpenclCodegen = OpenclCodegen(options.layout)
    host_name = host_function_name(sa, out.taken) if split else None
    if target == "cuda":
        check = None if always else worth.condition_c
        order = () if split else tuple(host_parameter(p) for p in f.function.params)  # the original's ABI
        codegen = CudaCodegen(check, order, host_name)
    trace = Trace()
    unit = run_passes(mapped, (codegen,), trace) if mapped else run_passes(ScopUnit(sa, name), (*options.passes(), codegen), trace)
    out.remarks += [*schedule_gave_up(sa.scop), *mapping_remarks(unit.need("gpu"))]
    if target != "cuda":  # and what the OpenCL printer chose: vector loads, a transposed layout
        out.remarks += [r for record in trace.records if record.name == OpenclCodegen.name for r in record.remarks]
        out.files[f"{name}.cl"] = unit.need("opencl").source
        out.maps[f"{name}.cl"] = unit.need("opencl").source_map
        return
    cuda = unit.need("cuda")
    out.files.update(cuda.files(name))
    out.maps.update(cuda.source_maps(name))
    out.maps[f"{name}_host.h"] = SourceMap()
    if host_name is None:
        out.files[f"{name}_host.h"] = host_header(f.function, cuda.host_params, name)
        if Path(f.function.range.file).resolve() == Path(out.path).resolve():  # in the text rewritten
            out.calls.append(whole_function(f, name))
        return
    out.files[f"{name}_host.h"] = scop_header(host_name, cuda.host_params, name, sa.scop.name)
    out.calls.append(scop_call(f, sa, host_name, cuda.host_params, name, out.source()))
    out.remarks.append(called(sa, host_name, name, out.stem))


def _decision(
    out: _Output, sa: ScopAnalysis, name: str, options: GpuOptions, directive: Directive | None
) -> tuple[Profitability, ScopUnit | None, GpuOptions]:
    """Where the nest runs, its mapping where one was made, and the options it was made with:
    the profitability model's, or a ``#pragma hexplore`` line's where it is legal
    (`transform/directives.py`; a refusal is said in `out`)."""
    worth, mapped = decide(sa.scop), None
    if directive is not None and directive.kind == "cpu":
        return kept_by(worth, directive), None, options
    refusal = gpu_refusal(sa.scop, directive) if directive is not None else None
    if directive is not None and refusal is None:
        options = replace(options, mapping=replace(options.mapping, sizes=directed_sizes(directive, options.mapping.sizes)))
        mapped = run_passes(ScopUnit(sa, name), options.passes())
        kernels = mapped.need("gpu").kernels
        if any(k.parallel for k in kernels):
            return offloaded_by(worth, directive, [(k.name, k.block[::-1] if k.parallel else ()) for k in kernels]), mapped, options
        refusal = no_parallel_loop(sa.scop, directive)
    if refusal is not None:
        out.remarks.append(refusal)
    if worth.decision != "cpu":  # enough work: the cost model weighs the GPU code against the CPU
        mapped = mapped or run_passes(ScopUnit(sa, name), options.passes())
        worth = offload_decision(mapped.need("gpu"))
    return worth, mapped, options


def _kept_as_written(k: KeptScop) -> Remark:
    message = (
        "hexplore gave up generating C for this loop nest: the polyhedral library exceeded its budget "
        f"of {k.budget:,} operations tiling or writing out its loops (the nest is too large for it); "
        "the loops stay as written"
    )
    return missed("c-codegen", "CpuCodeBudgetExceeded", message, k.range, k.function, detail=k.detail)


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
    remarks += [_kept_as_written(k) for k in generated.kept]
    remarks += [r for f in fa.functions for sa in f.scops for r in schedule_gave_up(sa.scop, "c-codegen")]
    name = f"{Path(fa.path).stem}.hexplore.c"
    return CompileResult({name: generated.source}, tuple(remarks), {name: generated.source_map})
