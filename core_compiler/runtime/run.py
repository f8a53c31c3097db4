"""Running a function: its original and optimized code on the same inputs, compared and timed.

The one run every face uses: `hexplore run`, the TUI's Run tab and the editor's ``hexplore/run``
all call `run_function` (through `explorer.running`) and get a `RunReport`. Devices: ``cpu`` (the
original compiled by the system C compiler as the reference; hexplore's optimized schedule
JIT-compiled by LLVM, parallel loops through libgomp; a function of several loop nests, the C
target's code for the whole function built by the C compiler: `whole_c.py`), ``opencl`` (the generated kernels on the
OpenCL device, PoCL on the CPU here) and ``cuda`` (LLVM's PTX for the kernels through pycuda,
the ``[gpu]`` extra, on an NVIDIA GPU). The runs happen in a worker process with a time limit
(`worker.run_in_worker`), so a crash or an endless loop in generated code is reported, never
inherited; repeated runs share the worker and, on a device, its buffers::

    sizes = default_params(fa, {"n": 100})          # the others DEFAULT_SIZE, halved to fit
    report = run_function(path, "kernel_gemm", "opencl", sizes)
    report.status    # "ok" | "mismatch" | "not-checkable" | "error" | "timeout" | "crashed" | "cancelled"

``text`` runs a document's unsaved text (written to a scratch directory in the worker, its own
directory searched first for headers); ``cancel`` is polled while the worker runs.

Limits: ``timeout_s`` per run (a positive, finite number of seconds, at most `MAX_TIMEOUT_S`) and
``memory_limit_bytes`` for the worker's address space (`default_memory_limit`: half the
machine's memory, at least 4 GiB; not on ``cuda``, whose driver reserves address space far past
any such cap); a run that needs more says so in words. `param_problem` says why a size does not
fit its C type (``--param n=1e20`` for an ``int n``) before anything runs.

On ``cpu`` the race of schedule variants takes at most a third of the time limit (at most 60 s,
`budget.TimeLimit`), so the run answers with the fastest variant it found (``search``,
``variants_tried`` of ``variants_total``); its winner goes to the tuning cache (`tuning.py`),
and the next run of the same code at the same sizes on this machine runs it without a race
(``tuned``, its note "tuned: untiled+jam2, 1.43x over the default (tiled), cached: ...").
"""

from __future__ import annotations

import ctypes
import math
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core_compiler.choices import DEFAULT_SIZE, DEVICES
from core_compiler.errors import NotCheckable, NotOneNest, UsageError
from core_compiler.frontend import ParseOptions, ir
from core_compiler.runtime.budget import TimeLimit
from core_compiler.runtime.capped import NoVariantInTime
from core_compiler.runtime.compare import Comparison
from core_compiler.runtime.footprint import default_sizes
from core_compiler.runtime.worker import WorkerError, run_in_worker

if TYPE_CHECKING:
    from core_compiler.analysis import FunctionAnalysis
    from core_compiler.pipeline import GpuOptions
    from core_compiler.runtime.cpu_variants import LlvmCpuResult
    from core_compiler.runtime.device import DeviceRuntime

DEFAULT_DEVICE = "cpu"
DEFAULT_TIMEOUT_S = 120.0  # per run
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # a week: longer is a mistake (and past what the OS waits for)
MIN_MEMORY_LIMIT = 4 << 30  # the worker's interpreter, LLVM and PoCL reserve ~1 GiB of address space
WHOLE_FUNCTION = "C target's whole-function"  # `RunReport.variant` of a function run whole (`whole_c.py`)
NOT_CHECKABLE = "not checkable: "  # how the message of a run that could not be checked begins
STATUSES = ("ok", "mismatch", "not-checkable", "error", "timeout", "crashed", "cancelled")
_WORKER_STATUS = {"timeout": "timeout", "signal": "crashed", "exit": "crashed", "cancelled": "cancelled"}


@dataclass(frozen=True)
class ArrayReport:
    name: str  # an array, or "return" for what the function returns
    ok: bool
    message: str
    max_abs_error: float


@dataclass(frozen=True)
class RunReport:
    function: str
    device: str
    params: dict[str, int]
    reference_s: float  # the fastest of the runs
    optimized_s: float  # likewise
    speedup: float
    match: bool  # every run matched
    max_abs_error: float
    bytes_transferred: int  # host <-> device, by the first run
    message: str  # what went wrong, or "" when the run completed and matched
    bytes_transferred_repeat: int | None = None  # by each later run; None: one run, or no device
    runs: int = 1
    variant: str = ""  # cpu: the code that ran (one of `cpu_llvm.VARIANTS`), chosen by timing
    note: str = ""  # cpu: how it was chosen, where worth saying (TunedVariant, RaceStopped), and why it
    # is not tiled or on one thread (TilingNotFaster, ParallelNotFaster); opencl: the tuned mapping's line
    search: str = ""  # cpu: the race ("tried 3 of 9 schedule variants in 8.1 s; ..."), or the cached choice
    variants_tried: int = 0  # cpu: schedule variants the race tried (0: the choice came from the tuning cache)
    variants_total: int = 0  # cpu: of these
    tuned: bool = False  # the variant (cpu) or mapping (opencl, `hexplore tune`'s) came from the tuning cache
    status: str = "ok"  # one of STATUSES: "ok" and "mismatch" completed, the others did not
    kernels: int = 0  # opencl, cuda: the kernels launched
    arrays: tuple[ArrayReport, ...] = ()  # each array (and the return value) compared
    elapsed_s: float = 0.0  # wall time of the worker, its start-up and the builds included

    @property
    def completed(self) -> bool:
        return self.status in ("ok", "mismatch")

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def default_params(fa: FunctionAnalysis, given: Mapping[str, int] | None = None) -> dict[str, int]:
    """A value for every integer size parameter of `fa`: the `given` one, else `DEFAULT_SIZE`
    halved while the loops would run past an array of fixed size (`footprint.default_sizes`)."""
    return default_sizes(fa.function, fa.scops, given or {}, DEFAULT_SIZE)


def default_memory_limit() -> int:
    """The address space a run may use by default: half the machine's memory, at least 4 GiB."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # not reported: only the floor
        physical = 0
    return max(physical // 2, MIN_MEMORY_LIMIT)


def timeout_problem(timeout_s: float) -> str:
    """Why `timeout_s` is no time limit for a run, or "" when it is one."""
    if not (isinstance(timeout_s, int | float) and math.isfinite(timeout_s) and 0 < timeout_s <= MAX_TIMEOUT_S):
        return f"the time limit must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}, not {timeout_s!r}"
    return ""


# C's integer types by canonical spelling: (bits, signed); `long` as this machine has it
_LONG_BITS = 8 * ctypes.sizeof(ctypes.c_long)
_INTEGER_TYPES = {
    "char": (8, True), "signed char": (8, True), "unsigned char": (8, False), "_Bool": (1, False),
    "short": (16, True), "unsigned short": (16, False), "int": (32, True), "unsigned int": (32, False),
    "long": (_LONG_BITS, True), "unsigned long": (_LONG_BITS, False),
    "long long": (64, True), "unsigned long long": (64, False),
}  # fmt: skip


def param_problem(fn: ir.Function, given: Mapping[str, int]) -> str:
    """Why a given size does not fit the C type of the parameter (or global) it sets, or ""."""
    for name, value in given.items():
        p = fn.param(name)
        if p is None or not isinstance(p.type, ir.Scalar) or not p.type.is_integer:
            continue
        bits, signed = _INTEGER_TYPES.get(p.type.name, (64, True))
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if not lo <= value <= hi:
            return f"{name}={value} does not fit `{name}`, an `{p.type.name}` ({lo} to {hi})"
    return ""


def cuda_unavailable() -> str:
    """Why `--device cuda` cannot run here, or "" when it can (pycuda imports and the CUDA
    driver sees a GPU)."""
    if not Path("/dev/nvidia0").exists() and shutil.which("nvidia-smi") is None:
        return "no CUDA device on this machine"
    try:
        import pycuda.driver as cuda  # type: ignore[import-not-found]

        cuda.init()
        if cuda.Device.count() == 0:
            return "no NVIDIA GPU is visible to the CUDA driver"
    except ImportError:
        return "pycuda is not installed (pip install 'hexplore[gpu]')"
    except Exception as e:  # a driver error
        return f"no CUDA device: {type(e).__name__}: {e}".rstrip(": ")
    return ""


def run_function(
    path: str,
    function: str,
    device: str = DEFAULT_DEVICE,
    params: Mapping[str, int] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    repeat: int = 1,
    parse: ParseOptions | None = None,
    *,
    text: str | None = None,
    cancel: Callable[[], bool] | None = None,
    memory_limit_bytes: int | None = None,
) -> RunReport:
    """`repeat` runs in one worker process (the time limit is per run); every failure comes back
    as a report with a status and a message, nothing raises. On opencl and cuda the runs share
    one device runtime, so the arrays the kernels only read stay on the device after the first
    run. `params` should give every size (`default_params`). The worker's address space is
    capped at `memory_limit_bytes` (default `default_memory_limit`; 0: no cap; never on cuda)."""
    params = dict(params or {})
    if device not in DEVICES:
        return _failed(function, device, params, f"unknown device {device!r}: use one of {', '.join(DEVICES)}")
    if why := timeout_problem(timeout_s):
        return _failed(function, device, params, why)
    memory = default_memory_limit() if memory_limit_bytes is None else max(memory_limit_bytes, 0)
    if memory:
        memory = max(memory, MIN_MEMORY_LIMIT)  # below it the compilers in the worker fail to start
    if device == "cuda":
        memory = 0  # the CUDA driver reserves address space for unified memory: a cap breaks its start
    if device == "cuda" and (why := cuda_unavailable()):
        return _failed(function, device, params, why)
    repeat = max(repeat, 1)
    args = (path, function, device, params, repeat, parse, text, TimeLimit(timeout_s, time.time() + timeout_s * repeat))
    outcome = run_in_worker(_measure, args, timeout_s=timeout_s * repeat, cancel=cancel, memory_limit_bytes=memory)
    if outcome.error is not None:
        return replace(_failed(function, device, params, outcome.error.message, _status(outcome.error)),
                       elapsed_s=outcome.elapsed_s)  # fmt: skip
    assert outcome.value is not None
    return replace(outcome.value, elapsed_s=outcome.elapsed_s)


def _status(error: WorkerError) -> str:
    return _WORKER_STATUS.get(error.kind, "error")


def _measure(path: str, function: str, device: str, params: dict[str, int], repeat: int = 1,
             parse: ParseOptions | None = None, text: str | None = None, limit: TimeLimit | None = None) -> RunReport:  # fmt: skip
    if text is not None:
        with tempfile.TemporaryDirectory(prefix="hexplore-run-") as tmp:
            scratch = os.path.join(tmp, os.path.basename(path) or "input.c")
            with open(scratch, "w", encoding="utf-8") as f:
                f.write(text)
            return _measure(scratch, function, device, params, repeat, _beside(path, parse), limit=limit)
    try:
        try:
            directed = _directed(path, function, device, parse)
            if device == "cpu" or directed.kind == "cpu":
                return _noted(_measure_cpu(path, function, params, repeat, parse, limit), directed.note)
            return _noted(_measure_device(path, function, device, params, repeat, parse, directed.gpu), directed.note)
        except NotOneNest as e:  # several nests, or code around the one: the whole function, on the CPU
            if device != "cpu":
                raise NotCheckable(f"{e}; `--device cpu` runs such a function whole, as `compile --target c` writes it") from e
            return _measure_whole(path, function, params, repeat, parse)
    except Exception as e:  # not checkable, does not build, …: the user's answer, not a traceback
        return _failed(function, device, params, _failure(e), _failure_status(e))


def _measure_whole(path: str, function: str, params: dict[str, int], repeat: int, parse: ParseOptions | None) -> RunReport:
    """`whole_c.check_whole_c`, `repeat` times: the fastest times, the first comparison that differs."""
    from core_compiler.runtime.whole_c import check_whole_c

    runs = [check_whole_c(path, function, params, parse) for _ in range(repeat)]
    failed = next((w for w in runs if not w.ok), runs[-1])
    ref, opt = min(w.reference_s for w in runs), min(w.generated_s for w in runs)
    report = _report(function, "cpu", params, ref, opt, failed.comparison, 0)
    if failed.differs:  # both builds are checked, also the one that was not the faster
        report = replace(report, message=f"the C target's {failed.differs} build differs:\n{report.message}")
    return replace(report, runs=repeat, variant=WHOLE_FUNCTION, note=failed.note(), kernels=0)


@dataclass(frozen=True)
class _Directed:
    """What a ``#pragma hexplore`` line above the function's nest asks of this run
    (`transform/directives.py`): `kind` "cpu" runs it on the CPU on every device; "gpu", its
    block and tile sizes on a device (`gpu`); "" none. `note` says it in the report."""

    kind: str = ""
    gpu: ir.Directive | None = None  # a ``gpu`` directive to follow
    note: str = ""


def _directed(path: str, function: str, device: str, parse: ParseOptions | None) -> _Directed:
    from core_compiler.analysis import analyze_file
    from core_compiler.transform.directives import nest_directive, refusal_reason

    if "hexplore" not in Path(path).read_text(encoding="utf-8", errors="replace"):
        return _Directed()
    fa = analyze_file(path, parse_options=parse, only=function)
    found = [(sa, d) for f in fa.functions for sa in f.scops if (d := nest_directive(f.function, sa.scop.loops))]
    if not found:
        return _Directed()
    sa, d = found[0]
    where = f"`{d.text}` at line {d.range.line}"
    if d.kind == "cpu":
        return _Directed("cpu", None, f"kept on the CPU by {where}" if device != "cpu" else "")
    if device == "cpu":
        return _Directed("", None, f"{where} applies to `--device opencl|cuda` and `compile`: this run is on the CPU, as asked")
    why = refusal_reason(sa.scop, d)
    if why is not None:
        return _Directed("", None, f"{where} is not followed: {why}; the default mapping ran")
    return _Directed("gpu", d, f"mapped as {where} asks")


def _noted(report: RunReport, note: str) -> RunReport:
    if not note:
        return report
    return replace(report, note=f"{note}; {report.note}" if report.note else note)


def _failure_status(e: Exception) -> str:
    if isinstance(e, NotCheckable):
        return "not-checkable"
    return "timeout" if isinstance(e, NoVariantInTime) else "error"


def _beside(path: str, parse: ParseOptions | None) -> ParseOptions:
    """`parse` with the directory of `path` searched first, as the compiler does for ``"x.h"``."""
    base = parse or ParseOptions()
    here = (os.path.dirname(os.path.abspath(path)),) if path else ()
    return ParseOptions(here + base.include_dirs, base.defines, base.extra_args)


def _failure(e: Exception) -> str:
    """Words for a C programmer; the exception's class only where hexplore itself failed."""
    if isinstance(e, NotCheckable):
        return f"{NOT_CHECKABLE}{e}"
    if isinstance(e, UsageError | OSError):  # OSError: a file the run could not read
        return str(e)
    if isinstance(e, MemoryError):
        return _out_of_memory(e)
    return f"hexplore failed ({type(e).__name__}): {e}"


def _out_of_memory(e: MemoryError) -> str:
    """The words for a run past its memory limit (the worker's ``RLIMIT_AS``)."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    cap = f"its memory limit of {limit / (1 << 30):.1f} GiB" if limit != resource.RLIM_INFINITY else "the memory there is"
    detail = f" ({e})" if str(e) else ""
    return f"the run needs more memory than {cap}{detail}: give smaller sizes, or a higher memory limit"


def _measure_device(path: str, function: str, device: str, params: dict[str, int], repeat: int,
                    parse: ParseOptions | None, directive: ir.Directive | None = None) -> RunReport:  # fmt: skip
    """`directive`: a ``#pragma hexplore gpu`` line, whose block and tile sizes go over a tuned mapping's."""
    from core_compiler.runtime.differential import POCL, check_device
    from core_compiler.transform.directives import directed_sizes

    runtime = _runtime(device)
    tuned = _tuned_mapping(path, function, device, params, parse)
    gpu = tuned[1] if tuned else None
    if directive is not None:
        base = gpu or POCL
        gpu, tuned = replace(base, mapping=replace(base.mapping, sizes=directed_sizes(directive, base.mapping.sizes))), None
    try:
        d = check_device(path, function, params, runtime, gpu=gpu, repeat=repeat, parse=parse)
    finally:
        runtime.close()
    report = _report(function, device, params, d.reference_s, d.device_s, d.comparison, d.bytes_transferred)
    if tuned is not None:
        report = replace(report, note=tuned[0], tuned=True)
    if d.failed_run > 1:  # the first run matched: what stayed on the device did not
        report = replace(report, message=f"run {d.failed_run} of {d.runs} (arrays resident from earlier runs) differs:\n{report.message}")
    return replace(report, bytes_transferred_repeat=d.bytes_transferred_repeat, runs=d.runs, kernels=d.kernels)


def _tuned_mapping(path: str, function: str, device: str, params: Mapping[str, int],
                   parse: ParseOptions | None) -> tuple[str, GpuOptions] | None:  # fmt: skip
    """The mapping `hexplore tune` found fastest for this code at these sizes on this OpenCL
    device (`tuning.TunedConfig`), and its line; None where none is recorded."""
    if device != "opencl":
        return None
    from core_compiler.pipeline import GpuOptions
    from core_compiler.runtime import tuning
    from core_compiler.runtime.opencl import pocl_device
    from core_compiler.transform.gpu_mapping import MappingOptions
    from core_compiler.transform.memory import MemoryOptions
    from core_compiler.transform.sizes import parse_sizes

    config = tuning.load_config(tuning.config_key(path, function, "opencl", params, parse, pocl_device().name.strip()))
    if config is None:
        return None
    memory = MemoryOptions(shared=config.shared, private=config.private, double_buffer=False)  # as tuned (`differential.POCL`)
    mapping = MappingOptions(sizes=parse_sizes(config.sizes) if config.sizes else {}, memory=memory, vector=config.vector)
    return config.line(), GpuOptions(mapping=mapping, layout=config.layout)


def _runtime(device: str) -> DeviceRuntime:
    if device == "opencl":
        from core_compiler.runtime.gpu_opencl import OpenCLRuntime

        return OpenCLRuntime()
    if device == "cuda":
        from core_compiler.runtime.gpu_cuda import CudaRuntime

        return CudaRuntime()
    raise ValueError(f"unknown device {device!r}: use one of {', '.join(DEVICES)}")


def _measure_cpu(path: str, function: str, params: dict[str, int], repeat: int, parse: ParseOptions | None,
                 limit: TimeLimit | None = None) -> RunReport:  # fmt: skip
    runs = [_tuned_run(path, function, params, parse, limit) for _ in range(repeat)]
    failed = [(v, c) for r in runs for v, c in r.variants.items() if not c.ok]
    ref, opt = min(r.reference_s for r in runs), min(r.optimized_s for r in runs)
    report = _report(function, "cpu", params, ref, opt, failed[0][1] if failed else runs[-1].optimized, 0)
    if failed:  # every variant is checked, also those that were not the fastest
        report = replace(report, message=f"the {failed[0][0]} code differs:\n{report.message}")
    choice = runs[0].choice  # the race, if there was one: later runs read its choice from the cache
    note = "; ".join(r.message for r in choice.remarks)
    tried, total = (len(choice.search.tried), choice.search.candidates) if choice.search else (0, 0)
    search = choice.search.message() if choice.search else choice.tuned.message if choice.tuned else ""
    return replace(report, runs=repeat, variant=choice.runs, note=note, search=search, variants_tried=tried,
                   variants_total=total, tuned=choice.search is None)  # fmt: skip


def _tuned_run(path: str, function: str, params: dict[str, int], parse: ParseOptions | None,
               limit: TimeLimit | None) -> LlvmCpuResult:  # fmt: skip
    """One run on the CPU: the variant the tuning cache names for this code, sizes and machine,
    else a race whose choice the cache keeps (when every variant it ran matched the original);
    a cached variant that no longer matches is forgotten."""
    from core_compiler.llvm.jit import max_threads
    from core_compiler.runtime import tuning
    from core_compiler.runtime.cpu_variants import check_llvm_cpu, tuned_record

    key = tuning.tuning_key(path, function, params, parse, max_threads())
    cached = tuning.load(key)
    result = check_llvm_cpu(path, function, params, parse=parse, limit=limit, tuned=cached)
    record = tuned_record(result.choice)
    if record is not None and result.ok:
        tuning.store(key, record)
    elif cached is not None and not result.ok:
        tuning.forget(key)
    return result


def _report(
    function: str, device: str, params: dict[str, int], ref: float, opt: float, cmp: Comparison, moved: int
) -> RunReport:
    worst = max((a.max_abs_error for a in cmp.arrays), default=0.0)
    speedup = ref / opt if opt > 0 else 0.0
    message = "" if cmp.ok else cmp.report()
    arrays = tuple(ArrayReport(a.name, a.ok, a.message, float(a.max_abs_error)) for a in cmp.arrays)
    return RunReport(function, device, params, ref, opt, speedup, cmp.ok, worst, moved, message,
                     status="ok" if cmp.ok else "mismatch", arrays=arrays)  # fmt: skip


def _failed(function: str, device: str, params: Mapping[str, int], message: str, status: str = "error") -> RunReport:
    return RunReport(function, device, dict(params), 0.0, 0.0, 0.0, False, 0.0, 0, message, status=status)
