"""One candidate measured, in whatever process runs it (a Ray worker, a pool process, this one):
built from the configuration, run once on the task's inputs and checked against the original
(compiled by the system C compiler) — only then timed. A candidate that does not build, fails or
differs is a `Trial` with ``seconds = inf`` and the reason.

The original, the inputs and the analysis are prepared once per process and task (`_prepared`).
Builds and checks of several candidates run in parallel; the timed calls take a lock per machine
(`timing_lock`: a file lock in the per-user cache), so that candidates never contend for the
cores while they are timed — what is timed is what the program gets alone::

    task = Task.of("gemm.c", "kernel_gemm", "cpu", {"ni": 1000, ...})
    measure(task, space.default)     # Trial(config, 0.41, ok=True)
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core_compiler.frontend import ParseOptions
from core_compiler.tune.search import Trial
from core_compiler.tune.space import Config, cpu_tiles, opencl_sizes
from core_compiler.user_dirs import cache_dir

TARGETS = ("cpu", "opencl")
TIMING_S = 0.3  # timed calls of a candidate until they add up to this (at least one, at most `ROUNDS`)
ROUNDS = 3


@dataclass(frozen=True)
class Task:
    """What is tuned: a function at sizes, for a target; `text` is the file's, so that a worker
    on another machine (a Ray cluster) can run it where the path does not exist. `threads`: the
    OpenMP threads of an "all threads" CPU candidate (0: the cores of the machine it runs on,
    `cores` — not OpenMP's default there: Ray sets ``OMP_NUM_THREADS`` of a one-CPU task to 1)."""

    path: str
    function: str
    target: str
    params: tuple[tuple[str, int], ...]
    parse: ParseOptions | None = None
    text: str = ""
    threads: int = 0

    @staticmethod
    def of(path: str, function: str, target: str, params: Mapping[str, int], parse: ParseOptions | None = None,
           threads: int = 0) -> Task:  # fmt: skip
        return Task(path, function, target, tuple(sorted(params.items())), parse, Path(path).read_text(encoding="utf-8"), threads)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.params)


def cores(task: Task) -> int:
    """The threads of an "all threads" candidate of `task` here."""
    return task.threads or len(os.sched_getaffinity(0)) or 1


def measure(task: Task, config: Config) -> Trial:
    """`config` built, checked and timed for `task`; never raises (a failure is the trial's message)."""
    try:
        return (_measure_cpu if task.target == "cpu" else _measure_opencl)(task, config)
    except Exception as e:  # a candidate that breaks the compiler loses; the search goes on
        return Trial(config, math.inf, False, f"{type(e).__name__}: {e}".splitlines()[0][:300])


def measure_many(task: Task, configs: list[Config]) -> list[Trial]:
    return [measure(task, c) for c in configs]


# ------------------------------------------------------------------------------ preparing once

_PREPARED: dict[Task, Any] = {}


def _prepared(task: Task, make: Callable[[Task], Any]) -> Any:
    if task not in _PREPARED:
        _PREPARED.clear()  # one task at a time per process: a case holds its arrays
        _PREPARED[task] = make(_local(task))
    return _PREPARED[task]


def _local(task: Task) -> Task:
    """`task` with a path that holds its text here: the path itself where it does, else a copy in
    a private temporary directory, its own directory still searched for headers."""
    with contextlib.suppress(OSError):
        if not task.text or Path(task.path).read_text(encoding="utf-8") == task.text:
            return task
    scratch = Path(tempfile.mkdtemp(prefix="hexplore-tune-")) / (Path(task.path).name or "input.c")
    scratch.write_text(task.text, encoding="utf-8")
    base = task.parse or ParseOptions()
    parse = ParseOptions((os.path.dirname(os.path.abspath(task.path)), *base.include_dirs), base.defines, base.extra_args)
    return replace(task, path=str(scratch), parse=parse)


@contextlib.contextmanager
def timing_lock() -> Iterator[None]:
    """One candidate timed at a time on this machine (every tuning process takes it)."""
    with open(cache_dir("tune") / "timing.lock", "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _timed(call: Callable[[], float]) -> float:
    """The best of `ROUNDS` calls, fewer where they add up to `TIMING_S`, under `timing_lock`."""
    with timing_lock():
        times = [call()]
        while len(times) < ROUNDS and sum(times) < TIMING_S:
            times.append(call())
    return min(times)


# ------------------------------------------------------------------------------ CPU (LLVM JIT)


@dataclass(frozen=True, eq=False)
class _CpuPrepared:
    case: Any  # cpu_variants.CpuCase
    wanted: Mapping[str, Any]  # the original's outputs


def _prepare_cpu(task: Task) -> _CpuPrepared:
    from core_compiler.runtime.cpu_variants import prepare
    from core_compiler.runtime.differential import reference_outputs
    from core_compiler.runtime.reference import run_reference

    case = prepare(task.path, task.function, task.sizes, parse=task.parse)
    expected = run_reference(task.path, case.layout, case.inputs, rounds=1)
    return _CpuPrepared(case, reference_outputs(expected))


def _measure_cpu(task: Task, config: Config) -> Trial:
    from core_compiler.llvm.jit import set_threads
    from core_compiler.runtime.compare import compare_arrays
    from core_compiler.runtime.cpu_variants import compile_variant, run_jit

    p: _CpuPrepared = _prepared(task, _prepare_cpu)
    parallel = config["threads"] == "all"
    set_threads(cores(task))
    start = time.perf_counter()
    jit = compile_variant(p.case, str(config["variant"]), parallel, cpu_tiles(config))
    build_s = time.perf_counter() - start
    arrays, _ = run_jit(jit, p.case)
    comparison = compare_arrays(p.wanted, p.case.outputs(arrays))
    if not comparison.ok:
        return Trial(config, math.inf, False, comparison.report().splitlines()[0], build_s)
    return Trial(config, _timed(lambda: run_jit(jit, p.case)[1]), True, "", build_s)


# ------------------------------------------------------------------------------ OpenCL (PoCL)


@dataclass(frozen=True, eq=False)
class _DevicePrepared:
    case: Any  # differential.DeviceCase, mapped with `first`'s options
    first: Config
    wanted: Mapping[str, Any]  # the original's outputs


def _prepare_opencl(task: Task, first: Config) -> _DevicePrepared:
    """The case mapped with the first candidate's options (mapping twice would cost isl seconds)."""
    from core_compiler.runtime.differential import device_case, reference_outputs
    from core_compiler.runtime.reference import timed_call

    case = device_case(task.path, task.function, task.sizes, gpu=gpu_options(first), parse=task.parse)
    expected = timed_call(case.reference, case.layout, case.inputs(), rounds=1)
    return _DevicePrepared(case, first, reference_outputs(expected))


def gpu_options(config: Config) -> Any:
    """The `GpuOptions` of a GPU configuration."""
    from core_compiler.pipeline import GpuOptions
    from core_compiler.transform.gpu_mapping import MappingOptions
    from core_compiler.transform.memory import MemoryOptions
    from core_compiler.transform.sizes import parse_sizes

    sizes = opencl_sizes(config)
    memory = MemoryOptions(shared=bool(config["shared"]), private=bool(config["private"]), double_buffer=False)  # as on PoCL (`differential.POCL`)
    mapping = MappingOptions(sizes=parse_sizes(sizes) if sizes else {}, memory=memory, vector=int(config.get("vector", 1)))
    return GpuOptions(mapping=mapping, layout=str(config.get("layout", "default")))


def _measure_opencl(task: Task, config: Config) -> Trial:
    from core_compiler.codegen.opencl import generate_opencl
    from core_compiler.pipeline import gpu_program
    from core_compiler.runtime.compare import compare_arrays
    from core_compiler.runtime.gpu_opencl import OpenCLRuntime

    start = time.perf_counter()
    p: _DevicePrepared = _prepared(task, lambda t: _prepare_opencl(t, config))
    case, wanted = p.case, p.wanted
    if p.first != config:
        options = gpu_options(config)
        case = replace(case, program=generate_opencl(gpu_program(case.values.scop, options), options.layout))
    build_s = time.perf_counter() - start
    inputs = case.inputs()

    def call() -> tuple[float, Mapping[str, Any]]:
        runtime = OpenCLRuntime()  # nothing resident: every candidate pays its copies
        try:
            run, outputs = case.run_generated(runtime, inputs)
        finally:
            runtime.close()
        return run.device_s, outputs

    _, outputs = call()
    comparison = compare_arrays(wanted, outputs)
    if not comparison.ok:
        return Trial(config, math.inf, False, comparison.report().splitlines()[0], build_s)
    return Trial(config, _timed(lambda: call()[0]), True, "", build_s)


def device_name(target: str) -> str:
    """Where `target` runs here, in words: the host CPU, or the OpenCL device."""
    if target == "opencl":
        from core_compiler.runtime.opencl import pocl_device

        return f"{pocl_device().name.strip()} (PoCL)"
    import llvmlite.binding as llvm

    return f"{llvm.get_host_cpu_name()} CPU, {len(os.sched_getaffinity(0))} cores"
