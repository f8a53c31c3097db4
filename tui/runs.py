"""Runs for the Run tab: the original C (system compiler) against hexplore's code on one device.

- ``cpu``: `check_llvm_cpu` — the SCoP in source order and in hexplore's tiled, OpenMP-parallel
  order, both JIT-compiled by LLVM, against the C compiler's build of the original.
- ``opencl``: the generated OpenCL on PoCL's CPU device, as `differential.check_opencl` does it,
  keeping the device timings and the bytes copied (which `check_opencl` does not return).
- ``gpu``: needs a CUDA device and a CUDA runtime; `gpu_unavailable_reason` says what is missing.

Every failure comes back as a `RunResult` with a message; nothing here raises.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEVICES = {"cpu": "CPU (LLVM JIT)", "opencl": "OpenCL (PoCL)", "gpu": "GPU (CUDA)"}
Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunResult:
    device: str
    params: Mapping[str, int]
    verdict: str  # "match", "MISMATCH", "not checkable", "error"
    details: str  # the per-array comparison, or the error message
    times: tuple[tuple[str, float], ...] = ()  # reference first, optimized last
    bytes_moved: int | None = None  # None: the code runs in host memory
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.verdict == "match"

    @property
    def speedup(self) -> float | None:
        if len(self.times) < 2 or self.times[-1][1] <= 0:
            return None
        return self.times[0][1] / self.times[-1][1]


def gpu_unavailable_reason() -> str:
    """Why the GPU choice is disabled. hexplore has no CUDA runner yet, so there is always one."""
    if not Path("/dev/nvidia0").exists() and shutil.which("nvidia-smi") is None:
        return "no CUDA device on this machine"
    return "hexplore has no CUDA runtime yet (pycuda runner not written)"


def run_function(device: str, path: str, function: str, params: Mapping[str, int], progress: Progress) -> RunResult:
    from core_compiler.runtime.differential import NotCheckable

    start = time.perf_counter()
    runner = {"cpu": _run_cpu, "opencl": _run_opencl}.get(device)
    if runner is None:
        return RunResult(device, dict(params), "error", f"cannot run on {DEVICES.get(device, device)}: {gpu_unavailable_reason()}")
    try:
        result = runner(path, function, dict(params), progress)
    except NotCheckable as e:
        result = RunResult(device, dict(params), "not checkable", str(e))
    except Exception as e:  # the UI must show any backend failure, not crash
        result = RunResult(device, dict(params), "error", f"{type(e).__name__}: {e}")
    return RunResult(result.device, result.params, result.verdict, result.details, result.times,
                     result.bytes_moved, time.perf_counter() - start)  # fmt: skip


def _verdict(ok: bool) -> str:
    return "match" if ok else "MISMATCH"


def _run_cpu(path: str, function: str, params: dict[str, int], progress: Progress) -> RunResult:
    from core_compiler.runtime.cpu_llvm import check_llvm_cpu

    progress("building the reference, JIT-compiling with LLVM, running both")
    r = check_llvm_cpu(path, function, params)
    times = (("reference (cc)", r.reference_s), ("LLVM, source order", r.original_s), ("hexplore (LLVM)", r.optimized_s))
    details = f"{r.report()}\nparallel loops in the optimized code: {r.parallel_loops}"
    return RunResult("cpu", params, _verdict(r.ok), details, times)


def _run_opencl(path: str, function: str, params: dict[str, int], progress: Progress) -> RunResult:
    """`differential.check_opencl`, step by step, keeping what the run measured."""
    from core_compiler.analysis import AnalysisOptions, analyze_file
    from core_compiler.codegen.opencl import generate_opencl
    from core_compiler.frontend import ParseOptions
    from core_compiler.gpu import MappingOptions, map_to_gpu
    from core_compiler.runtime.compare import compare_arrays
    from core_compiler.runtime.differential import _is_int, _prologue_values, _single_scop
    from core_compiler.runtime.gpu_opencl import run_program_opencl
    from core_compiler.runtime.inputs import make_inputs
    from core_compiler.runtime.reference import run_reference
    from core_compiler.runtime.signature import layout_for_source
    from core_compiler.schedule import ScheduleOptions, compute_gpu_schedule

    progress("analysing")
    layout = layout_for_source(path, function, params)
    fa = analyze_file(path, parse_options=ParseOptions(defines=layout.defines), options=AnalysisOptions(), only=function)
    (fn,) = fa.functions
    sa = _single_scop(fn.function, fn.scops)
    inputs = make_inputs(layout)
    progress("running the reference (system C compiler)")
    reference = run_reference(path, layout, inputs)
    floats = {s.name: float(s.value) for s in layout.scalars if not _is_int(s.c_type)}
    ints = {s.name: int(s.value) for s in layout.scalars if _is_int(s.c_type)}
    prologue = _prologue_values(fn.function, sa, {**ints, **floats})
    floats.update(prologue)
    progress("mapping to the GPU and generating OpenCL")
    schedule = compute_gpu_schedule(sa.scop, sa.deps, ScheduleOptions(parallel_reductions=True))
    program = generate_opencl(map_to_gpu(sa.scop, schedule, MappingOptions(), sa.deps))
    progress("running on PoCL")
    arrays = {s.name: np.array(inputs[s.name], copy=True) for s in layout.arrays}
    out = run_program_opencl(program, arrays, ints, floats, initial_scalars=prologue)
    actual = {n: np.asarray(out.arrays[n]).reshape(np.shape(a)) if n in out.arrays else a for n, a in arrays.items()}
    comparison = compare_arrays(dict(reference.arrays), actual)
    kernels_s = sum(t.seconds for t in out.launches)
    times = (("reference (cc)", reference.elapsed_s), ("copies in+out", out.copy_in_s + out.copy_out_s), ("OpenCL kernels", kernels_s))
    moved = 2 * sum(int(np.asarray(a).nbytes) for a in out.arrays.values())  # every buffer goes in and out
    details = f"{comparison.report()}\n{len(out.launches)} launch(es) on {out.device}"
    return RunResult("opencl", params, _verdict(comparison.ok), details, times, moved)


def summary(result: RunResult, show_times: bool = True) -> str:
    """The text under the Run button: verdict first, then times (or a placeholder)."""
    sizes = ", ".join(f"{k}={v}" for k, v in result.params.items()) or "no sizes"
    lines = [f"verdict: {result.verdict}  ({DEVICES.get(result.device, result.device)}; {sizes})"]
    if result.times:
        for label, seconds in result.times:
            lines.append(f"  {label:<20} {_ms(seconds) if show_times else '– ms'}")
        speedup = result.speedup
        if speedup is not None:
            lines.append(f"  speedup vs reference: {f'{speedup:.2f}x' if show_times else '–'}")
    if result.times:
        moved = "none (host memory)" if result.bytes_moved is None else f"{result.bytes_moved:,} bytes"
        lines.append(f"  transferred: {moved}")
    lines.append(result.details)
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"
