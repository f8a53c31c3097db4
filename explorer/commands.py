"""The drivers of the `hexplore` subcommands: each builds the compiler's options from what the
command line gave, runs the pipeline (`core_compiler/pipeline.py`) and says what to print.
`tui/cli.py` parses the arguments, prints what these return and chooses the exit code; nothing
here writes to a stream or reads a file.

A request the user got wrong raises `CommandError`; the CLI prints ``hexplore: error: <message>``
and exits 2.
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import islpy as isl

from core_compiler.analysis import FileAnalysis, FunctionAnalysis, analyze_file, iter_analyze_file
from core_compiler.choices import TUNE_TARGETS
from core_compiler.codegen.c import COptions
from core_compiler.codegen.cuda import generate_cuda
from core_compiler.compile import CompileResult, compile_file
from core_compiler.errors import UsageError
from core_compiler.frontend import ParseOptions
from core_compiler.passes import Trace
from core_compiler.pipeline import GpuOptions, ScopUnit, run_passes
from core_compiler.remarks import Remark, RemarkKind
from core_compiler.report import function_text, remark_text
from core_compiler.runtime import tuning
from core_compiler.runtime.run import (
    MIN_MEMORY_LIMIT,
    RunReport,
    default_params,
    param_problem,
    run_function,
    timeout_problem,
)
from core_compiler.runtime.tuning import TunedConfig
from core_compiler.transform.counting import NotCountable
from core_compiler.transform.cpu_schedule import CpuOptions
from core_compiler.transform.gpu_cost import gpu_cost, ptxas_resources, render_cost, with_registers
from core_compiler.transform.gpu_mapping import GpuProgram, MappingOptions
from core_compiler.transform.memory import DEFAULT_MAX_SHARED_BYTES, MemoryOptions
from core_compiler.transform.profitability import decide, fixed_by_context, host_call
from core_compiler.transform.sizes import SizesError, parse_sizes

if TYPE_CHECKING:  # the AD modules load only for `hexplore grad`, the tuner for `hexplore tune`
    from core_compiler.ad import Derivative
    from core_compiler.tune.driver import TuneResult
    from core_compiler.tune.search import Trial


class CommandError(UsageError):
    """The command line asks for what cannot be done (``hexplore: error: <message>``, exit 2)."""


def missing_function(path: str, function: str) -> CommandError:
    return CommandError(f"no function named '{function}' is defined in '{path}'")


def files_text(files: Mapping[str, str]) -> str:
    """Generated files one after the other, each under a ``// ===== <name>`` line."""
    return "".join(f"// ===== {name}\n{body}" for name, body in files.items())


# ------------------------------------------------------------------------------- analyze


def analyze(path: str, text: str, parse: ParseOptions, function: str | None = None) -> FileAnalysis:
    """The analysis `hexplore analyze` reports: of `function` only when given (it must exist)."""
    fa = analyze_file(path, text, parse, only=function)
    if function and not fa.functions:
        raise missing_function(path, function)
    return fa


def analyze_progressively(path: str, text: str, parse: ParseOptions) -> Iterator[str]:
    """The text report of `analyze` a piece at a time: the file's remarks, then each function's
    lines as soon as it is analysed (a file of thousands of functions shows its first ones within
    seconds). The pieces joined are `render_report(analyze(…), "text")`."""
    empty = True
    for item in iter_analyze_file(path, text, parse):
        lines = function_text(item) if isinstance(item, FunctionAnalysis) else [remark_text(r) for r in item]
        if lines:
            empty = False
            yield "\n".join(lines) + "\n"
    if empty:
        yield "\n"


def gpu_report(fa: FileAnalysis, params: Sequence[str] = (), registers: bool = False) -> str:
    """Per SCoP: the schedule tree, how its kernels are mapped, and what they cost on the GPU
    against the CPU (``hexplore analyze --gpu``). `params` (``NAME=VALUE``) are the sizes the
    cost report evaluates at, and the offload decision is taken at; `registers` runs ``nvcc
    -Xptxas -v`` on the kernels for registers, spills and occupancy (a second or more)."""
    sizes = size_params(params)
    out = []
    for f in fa.functions:
        for sa in f.scops:
            on_host = host_call(sa.scop)
            if on_host is not None:  # GPU code cannot call the program's functions: no mapping
                out.append(f"\n{sa.scop.name}: no GPU code\n{remark_text(on_host)}\n")
                continue
            trace = Trace()
            unit = run_passes(ScopUnit(sa, ""), GpuOptions().passes(), trace)
            schedule, mapping = trace.records
            out.append(f"\n{sa.scop.name}: schedule tree\n{schedule.text}")
            out.append(f"{sa.scop.name}: GPU kernels\n{mapping.text}")
            out += [remark_text(r) + "\n" for r in mapping.remarks]
            out.append(_cost_text(unit.need("gpu"), sizes, registers))
    return "".join(out)


def size_params(params: Sequence[str]) -> dict[str, int]:
    """``--param NAME=VALUE`` (integers)."""
    try:
        return {k.strip(): int(v) for k, v in (p.split("=", 1) for p in params)}
    except ValueError:
        raise CommandError("--param takes NAME=INTEGER") from None


def _cost_text(gpu: GpuProgram, sizes: Mapping[str, int], registers: bool) -> str:
    scop = gpu.scop
    try:
        cost = gpu_cost(gpu)
    except (isl.Error, NotCountable) as e:
        return f"{scop.name}: GPU cost not counted ({e})\n"
    note = ""
    if registers:
        files = generate_cuda(gpu, "hx")
        try:
            cost = with_registers(cost, ptxas_resources(files.kernel_cu, files.kernel_hu, "hx"))
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            note = f"  registers: ptxas did not run ({str(e).splitlines()[0] if str(e) else type(e).__name__})\n"
    known = {**fixed_by_context(scop), **{p: v for p, v in sizes.items() if p in scop.params}}
    text = render_cost(cost, known) + note
    if set(scop.params) <= set(known) and sizes:
        text += remark_text(decide(scop, values=known, cost=cost).remark) + "\n"
    return text


# ------------------------------------------------------------------------------- compile


@dataclass(frozen=True)
class CompileSettings:
    """`hexplore compile`'s options as the command line gives them, with its defaults."""

    target: str = "cuda"  # one of `core_compiler.choices.TARGETS`
    tile_size: int = 32
    sizes: str | None = None  # PPCG syntax: "{kernel[0]->tile[32,32];kernel[0]->block[32,8]}"
    always_offload: bool = False  # GPU code even where the profitability model says CPU
    shared_memory: bool = True
    private_memory: bool = True
    max_shared_memory: int = DEFAULT_MAX_SHARED_BYTES  # per block
    double_buffer: bool = True  # two shared copies where a block walks its tiles (`gpu_mapping._buffers`)
    openmp: bool = False  # target c: `#pragma omp parallel for` on parallel loops


# What stops `compile`: the file could not be read as C (clang's errors, or the front end failed).
ERROR_REMARKS = ("SyntaxError", "FrontendCrashed", "FrontendBudgetExceeded", "InternalError")


@dataclass(frozen=True)
class Compiled:
    """`hexplore compile`'s outcome: `errors` (nothing generated), else the files and remarks, and
    `nothing` (why no file was generated, with the detection's `reasons`) when there are none."""

    result: CompileResult
    errors: tuple[Remark, ...] = ()
    nothing: str = ""
    reasons: tuple[Remark, ...] = ()


# `#pragma hexplore` lines compile could not obey: said whatever else it prints
_DIRECTIVE_PROBLEMS = frozenset({"MalformedDirective", "DirectiveNotOnLoopNest"})


def compile_source(
    path: str, text: str, parse: ParseOptions, function: str | None, settings: CompileSettings
) -> Compiled:
    """`hexplore compile`: the generated files (name -> text) and a remark per decision; the
    file's errors instead where it has some (nothing is generated then)."""
    if settings.openmp and settings.target != "c":
        raise CommandError("--openmp needs --target c")
    try:
        sizes = parse_sizes(settings.sizes) if settings.sizes else {}
    except SizesError as e:
        raise CommandError(str(e)) from e
    fa = analyze_file(path, text, parse, only=function)
    if function and not fa.functions:
        raise missing_function(path, function)
    errors = tuple(r for r in fa.all_remarks() if r.name in ERROR_REMARKS)
    if errors:
        return Compiled(CompileResult({}, ()), errors)
    memory = MemoryOptions(settings.shared_memory, settings.private_memory, settings.max_shared_memory, double_buffer=settings.double_buffer)
    mapping = MappingOptions(tile_size=settings.tile_size, sizes=sizes, memory=memory)
    c_options = COptions(CpuOptions(tile_size=settings.tile_size), openmp=settings.openmp)
    tuned = _tuned_config(path, fa, parse, settings)
    layout = "default"
    if tuned is not None:
        mapping, c_options = _with_tuned(tuned[0], mapping, c_options)
        layout = tuned[0].layout
    result = compile_file(fa, settings.target, GpuOptions(mapping=mapping, layout=layout), c_options=c_options, text=text,
                          always_offload=settings.always_offload)  # fmt: skip
    if tuned is not None:
        result = replace(result, remarks=(tuned[1], *result.remarks))
    where = f"`{fa.functions[0].function.name}`" if len(fa.functions) == 1 else fa.path
    if not any(f.scops for f in fa.functions):  # the C target would print the file as it is
        reasons = tuple(r for r in fa.all_remarks() if r.kind is RemarkKind.MISSED and r.pass_name == "scop-detect")
        why = f"nothing to generate: {where} has no loop nest hexplore models"
        return Compiled(result, nothing=why + (" (the reasons above)" if reasons else ""), reasons=reasons)
    unread = tuple(r for r in fa.all_remarks() if r.name in _DIRECTIVE_PROBLEMS)  # the user's own lines
    if not result.files:
        anyway = "--always-offload generates GPU code anyway"
        if any(r.name == "KeptOnCpuByDirective" for r in result.remarks):  # the user's own `#pragma hexplore cpu`
            anyway = "`#pragma hexplore cpu` keeps a nest there whatever the options; --always-offload offloads the others"
        return Compiled(result, nothing=(
            f"nothing to generate: every loop nest of {where} stays on the CPU (the remarks above say "
            f"why; {anyway}, --target c tiled C)"), reasons=unread)  # fmt: skip
    return Compiled(result, reasons=unread)


def _tuned_config(path: str, fa: FileAnalysis, parse: ParseOptions, settings: CompileSettings) -> tuple[TunedConfig, Remark] | None:
    """What `hexplore tune` recorded for the one function with loop nests of `fa` and this target
    (`runtime/tuning.py`), and the remark that says so; None where nothing is recorded, or the
    command line chose the sizes or the memory itself (its choice stands)."""
    if (settings.tile_size, settings.sizes, settings.shared_memory, settings.private_memory) != (32, None, True, True):
        return None
    target = {"opencl": "opencl", "c": "c", "cuda": "opencl"}.get(settings.target)
    modeled = [f for f in fa.functions if f.scops]
    if target is None or len(modeled) != 1:
        return None
    fn = modeled[0].function
    try:
        config = tuning.load_config(tuning.config_key(path, fn.name, target, None, parse))
    except OSError:
        return None
    if config is None:
        return None
    line = config.line()
    if settings.target == "cuda":
        config, line = for_cuda(config)
    args = {"configuration": config.label, "seconds": config.seconds, "default seconds": config.default_s, "device": config.device}
    return config, Remark(RemarkKind.PASSED, "tune", "TunedConfiguration", line, fn.range, fn.name, args)


def for_cuda(config: TunedConfig) -> tuple[TunedConfig, str]:
    """An OpenCL record read by ``compile --target cuda`` (issue 30): the tile and block sizes and
    the memory choices carry over (the same mapping, within CUDA's 1024 threads a block); the
    vector width does not (on a GPU neighbouring threads read neighbouring elements, which
    contiguous runs per thread would undo), nor the transposed layout (the CUDA printer has no
    transposed copies). Said in the remark's line."""
    line = f"{config.line()}; read from the OpenCL tuning: its tile and block sizes and memory choices carry over to CUDA"
    if config.vector > 1:
        line += f", its vector width {config.vector} does not (CUDA threads keep reading neighbouring elements)"
    if config.layout != "default":
        line += f", its {config.layout} layout does not (CUDA reads the arrays as they are)"
    return replace(config, vector=1, layout="default"), line


def _with_tuned(config: TunedConfig, mapping: MappingOptions, c_options: COptions) -> tuple[MappingOptions, COptions]:
    """The options with a tuned configuration's choices (`_tuned_config`)."""
    if config.target == "c":
        tiles = tuple(int(t) for t in config.sizes.split(","))
        cpu = replace(c_options.cpu, tile_size=tiles[0], tile_sizes=tiles) if tiles != (0,) else replace(c_options.cpu, tile_size=0)
        return mapping, replace(c_options, cpu=cpu)
    memory = replace(mapping.memory, shared=config.shared, private=config.private)
    sizes = parse_sizes(config.sizes) if config.sizes else {}
    return replace(mapping, sizes=sizes, memory=memory, vector=config.vector), c_options


# ------------------------------------------------------------------------------- tune




@dataclass(frozen=True)
class TuneSettings:
    """`hexplore tune`'s options (`core_compiler/tune/`)."""

    target: str = "cpu"
    budget_s: float = 60.0  # the search's wall time (Ray's start not included)
    address: str | None = None  # ray://host:port: an existing Ray cluster
    jobs: int = 0  # candidates at once; 0: the cores
    seed: int = 0
    engine: str = "auto"  # "auto" (Ray if installed, else a process pool), "ray", "pool", "local"
    one_thread: bool = False  # cpu: tune for one core


def tune(plan: RunPlan, settings: TuneSettings, on_trial: Callable[[Trial, int], None] | None = None) -> TuneResult:
    """Search `plan`'s function at its sizes for `settings.target`; the best configuration that
    matches the original goes to the tuning cache, where `compile` and `run` read it."""
    from core_compiler.tune.driver import TuneOptions
    from core_compiler.tune.driver import tune as tune_task
    from core_compiler.tune.measure import Task

    if settings.target not in TUNE_TARGETS:
        raise CommandError(f"tune --target must be one of {', '.join(TUNE_TARGETS)}")
    if settings.budget_s <= 0 or not math.isfinite(settings.budget_s):
        raise CommandError("--budget expects a positive number of seconds")
    if settings.address and not settings.address.startswith(("ray://", "auto")) and ":" not in settings.address:
        raise CommandError(f"--address expects ray://HOST:PORT, got '{settings.address}'")
    task = Task.of(plan.path, plan.function, settings.target, plan.sizes, plan.parse, 1 if settings.one_thread else 0)
    options = TuneOptions(settings.budget_s, settings.seed, settings.engine, settings.jobs, settings.address, settings.one_thread)
    try:
        return tune_task(task, options, on_trial)
    except (ImportError, ConnectionError) as e:  # no ray; a cluster that cannot be reached
        raise CommandError(str(e)) from e
    except UsageError as e:  # not checkable, does not fit its arrays, ...
        raise CommandError(f"{plan.function}: {e}") from e


# ------------------------------------------------------------------------------- run


@dataclass(frozen=True)
class RunPlan:
    """What `hexplore run` runs: one function at these sizes, and the warnings to give first."""

    path: str
    function: str
    parse: ParseOptions
    sizes: dict[str, int]
    warnings: tuple[str, ...]


def function_to_run(path: str, text: str, parse: ParseOptions) -> str:
    """The one function of the file with a modeled loop nest, for `run` without ``--function``."""
    fa = analyze_file(path, text, parse)
    modeled = [f.function.name for f in fa.functions if f.scops]
    if len(modeled) == 1:
        return modeled[0]
    if not modeled:
        raise CommandError(f"{path} has no function with a loop nest hexplore models: nothing to run")
    raise CommandError(f"run needs --function NAME: {path} has loop nests in {', '.join(modeled)}")


def plan_run(path: str, text: str, parse: ParseOptions, function: str, params: Sequence[str]) -> RunPlan:
    """Sizes from ``--param NAME=VALUE``; the others `DEFAULT_SIZE`, halved while the loops would
    run past an array of fixed size. A parameter the function does not have is a warning."""
    sizes, warnings = function_sizes(path, text, parse, function, params)
    return RunPlan(path, function, parse, sizes, warnings)


def function_sizes(
    path: str, text: str, parse: ParseOptions, function: str, params: Sequence[str]
) -> tuple[dict[str, int], tuple[str, ...]]:
    """A value for every integer size parameter of `function` (`run` and `grad --check` alike):
    ``--param NAME=VALUE`` where given, else `DEFAULT_SIZE` halved to fit fixed-size arrays; and
    a warning per given name the function does not have."""
    fa = analyze_file(path, text, parse, only=function)
    if not fa.functions:
        raise missing_function(path, function)
    try:
        given = dict(_param(p) for p in params)
    except ValueError as e:
        raise CommandError(str(e)) from e
    fn = fa.functions[0]
    if why := param_problem(fn.function, given):
        raise CommandError(f"--param {why}")
    sizes = default_params(fn, given)
    known = ", ".join(sizes) or "none"
    warnings = tuple(
        f"`{function}` has no integer parameter `{name}` (it has: {known}); --param {name}=... is ignored"
        for name in sorted(set(given) - set(sizes))
    )
    return sizes, warnings


def _param(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value.lstrip("-").isdigit():
        raise ValueError(f"--param expects NAME=INTEGER, got '{text}'")
    return name, int(value)


def run(plan: RunPlan, device: str, timeout_s: float, repeat: int, memory_limit_bytes: int | None = None) -> RunReport:
    """The original and hexplore's code on `device`, `repeat` times in one worker process, its
    memory capped at `memory_limit_bytes` (None: `run.default_memory_limit`, 0: no cap)."""
    return run_function(plan.path, plan.function, device, plan.sizes, timeout_s, max(repeat, 1), plan.parse,
                        memory_limit_bytes=memory_limit_bytes)  # fmt: skip


CUDA_SUFFIXES = (".cu", ".cuh")


def is_cuda(path: str) -> bool:
    return path.endswith(CUDA_SUFFIXES)


def run_cuda(path: str, text: str, function: str | None, params: Sequence[str], device: str,
             timeout_s: float) -> tuple[str, bool]:  # fmt: skip
    """`hexplore run FILE.cu`: the host function `function` (its kernels' CPU translation, on all
    cores and on one thread, compared) in a worker process with a time limit; the report and
    whether the two runs matched."""
    from core_compiler.cuda.host import check_host
    from core_compiler.runtime.worker import run_in_worker

    if device != "cpu":
        raise CommandError(f"a CUDA file runs on the CPU here (--device cpu): its kernels on `{device}` are not supported yet")
    if function is None:
        raise CommandError(f"run needs --function HOST for {path}: the host function whose kernel launches to run")
    try:
        sizes = dict(_param(p) for p in params)
    except ValueError as e:
        raise CommandError(str(e)) from e
    outcome = run_in_worker(check_host, (path, text, function, sizes), timeout_s=timeout_s)
    if outcome.error is not None:
        raise CommandError(f"{function}: {outcome.error.message}")
    report = outcome.value
    assert report is not None
    return report.text(), report.match


def run_timeout(text: str) -> float:
    """``--timeout S``: a positive, finite number of seconds (`run.MAX_TIMEOUT_S` at most)."""
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"--timeout expects a number of seconds, got '{text}'") from None
    if why := timeout_problem(value):
        raise CommandError(f"--timeout: {why}")
    return value


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def memory_size(text: str) -> int:
    """``--memory-limit``: bytes, or a number with K, M, G or T (binary units: ``8G``); 0 is no limit."""
    number, unit = text.strip().upper().removesuffix("B").removesuffix("I"), ""
    if number and number[-1] in _UNITS:
        number, unit = number[:-1], number[-1]
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or value * _UNITS[unit] >= 1 << 63:
        raise CommandError(f"--memory-limit expects a size such as 8G, 512M or 0 (no limit), got '{text}'")
    size = int(value * _UNITS[unit])
    if 0 < size < MIN_MEMORY_LIMIT:
        floor = MIN_MEMORY_LIMIT >> 30
        raise CommandError(f"--memory-limit must be 0 (no limit) or at least {floor}G: the compilers a run starts reserve that much")
    return size


def run_text(r: RunReport) -> str:
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    if r.optimized_s == 0.0 and r.message:
        return f"{r.function} on {r.device} ({params}): {r.message}"
    verdict = "results match" if r.match else f"RESULTS DIFFER\n{r.message}"
    runs = f", fastest of {r.runs} runs" if r.runs > 1 else ""
    return (
        f"{r.function} on {r.device} ({params}{runs})\n"
        f"  original (cc -O2)       {r.reference_s * 1e3:10.3f} ms\n"
        f"  hexplore                {r.optimized_s * 1e3:10.3f} ms   speedup {r.speedup:.2f}x\n"
        f"  {transfer_text(r)}\n"
        f"  {verdict} (max abs error {r.max_abs_error:.3g})"
        + (f"\n  ran the {r.variant} code" + (f": {r.note}" if r.note else "") if r.variant else "")
        + (f"\n  {r.note}" if r.note and not r.variant else "")
    )


def transfer_text(r: RunReport) -> str:
    """What moved between host and device, e.g. "moved 24.0 MB (first run), 8.0 MB per later
    run: read-only arrays stayed on the device"."""
    if r.device == "cpu":
        return "no transfers: the code runs in host memory"
    first = f"moved {byte_size(r.bytes_transferred)}"
    later = r.bytes_transferred_repeat
    if later is None:
        return f"{first} between host and device"
    text = f"{first} (first run), {byte_size(later)} per later run"
    if later < r.bytes_transferred:
        return f"{text}: read-only arrays stayed on the device"
    return f"{text}: every array copied in is also written, so it moves again"


def byte_size(n: int) -> str:
    """``512 bytes``, ``43.8 kB``, ``24.0 MB``, ``1.5 GB`` (decimal units)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


# ------------------------------------------------------------------------------- grad


@dataclass(frozen=True)
class GradRequest:
    path: str
    text: str
    parse: ParseOptions
    function: str
    wrt: tuple[str, ...]  # differentiate with respect to these parameters
    of: tuple[str, ...] | None  # these outputs (None: every floating-point array it writes)
    mode: str = "reverse"  # or "forward"


def grad_request(
    path: str, text: str, parse: ParseOptions, function: str, wrt: str, of: str | None, mode: str
) -> GradRequest:
    """From the command line's lists: ``--wrt "A, x"`` is ``("A", "x")``."""
    return GradRequest(path, text, parse, function, _names(wrt), _names(of) if of else None, mode)


def _names(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split(",") if w.strip())


@dataclass(frozen=True)
class Gradient:
    """The derivative's remarks, and the derivative or (`error`) why there is none."""

    remarks: tuple[Remark, ...]
    derivative: Derivative | None
    error: str = ""


def gradient(req: GradRequest) -> Gradient:
    from core_compiler.ad import NotDifferentiable, differentiate

    try:
        d = differentiate(req.path, req.function, req.wrt, req.of, req.mode, text=req.text, parse_options=req.parse)
    except NotDifferentiable as e:
        return Gradient(tuple(e.remarks), None, str(e))
    return Gradient(tuple(d.remarks), d)


def derivative_code(req: GradRequest, d: Derivative, target: str) -> str:
    """`target` c: the derivative C itself; cuda or opencl: the derivative mapped to the GPU."""
    if target == "c":
        return d.source
    fa = analyze_file(req.path, d.translation_unit, req.parse, only=d.core)
    return files_text(compile_file(fa, target, text=d.translation_unit, always_offload=True).files)


def grad_params(req: GradRequest, params: Sequence[str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """The sizes `hexplore grad --check` runs at: ``--param NAME=VALUE``, the others defaulted as
    `hexplore run` defaults them (`function_sizes`); and the warnings to give."""
    return function_sizes(req.path, req.text, req.parse, req.function, params)


@dataclass(frozen=True)
class GradCheck:
    line: str  # what to print
    failed: bool


def gradient_checks(req: GradRequest, params: Mapping[str, int]) -> Iterator[GradCheck]:
    """Finite-difference and dot-product tests of the C and the OpenCL derivative, each as it
    finishes. A check that cannot run fails on C (the derivative itself), not on OpenCL."""
    from core_compiler.ad import NotDifferentiable
    from core_compiler.ad.check import check_gradients

    for backend in ("c", "opencl"):
        try:
            result = check_gradients(req.path, req.function, req.wrt, params, of=req.of, backend=backend,
                                     text=req.text, parse=req.parse)  # fmt: skip
        except (NotDifferentiable, UsageError) as e:
            yield GradCheck(f"check [{backend}]: not run: {e}", backend == "c")
            continue
        yield GradCheck(f"check: {result.report()}", not result.ok)
