"""Runs for the Run tab: the original C (system compiler) against hexplore's code on one device.

- ``cpu``: hexplore's code JIT-compiled by LLVM (the fastest of its tiled, untiled, unroll-and-jammed and source-order
  variants, OpenMP-parallel), against the C compiler's build of the original.
- ``opencl``: the generated OpenCL on PoCL's CPU device (kernel and copy times, bytes moved).
- ``gpu``: LLVM's PTX through pycuda on an NVIDIA GPU; `explorer.api.cuda_unavailable`
  says what is missing where it cannot run.

Every failure comes back as a `RunResult` with a message; nothing here raises.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from explorer.api import ParseOptions, cuda_unavailable

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
    max_abs_error: float | None = None
    choice: str = ""  # cpu: which code ran, chosen by timing (so shown with the times)

    @property
    def ok(self) -> bool:
        return self.verdict == "match"

    @property
    def speedup(self) -> float | None:
        if len(self.times) < 2 or self.times[-1][1] <= 0:
            return None
        return self.times[0][1] / self.times[-1][1]


def run_function(device: str, path: str, function: str, params: Mapping[str, int], progress: Progress,
                 parse: ParseOptions | None = None) -> RunResult:  # fmt: skip
    """`explorer.api.run_function`: a worker process with a time limit, so a crash or
    an endless loop in generated code comes back as a message and never takes the UI down."""
    from explorer.api import NOT_CHECKABLE
    from explorer.api import run_function as run_in_worker

    start = time.perf_counter()
    if device == "gpu" and (why := cuda_unavailable()):
        return RunResult(device, dict(params), "error", f"cannot run on {DEVICES['gpu']}: {why}")
    if device not in DEVICES:
        return RunResult(device, dict(params), "error", f"unknown device {device!r}")
    progress("building the reference with the C compiler and running both (in a worker process)")
    r = run_in_worker(path, function, "cuda" if device == "gpu" else device, params, parse=parse)
    elapsed = time.perf_counter() - start
    if r.optimized_s == 0.0 and r.message:
        verdict = "not checkable" if r.message.startswith(NOT_CHECKABLE) else "error"
        return RunResult(device, dict(params), verdict, r.message.removeprefix(NOT_CHECKABLE), elapsed_s=elapsed)
    label = {"cpu": "hexplore (LLVM)", "opencl": "hexplore (OpenCL)", "gpu": "hexplore (CUDA)"}[device]
    times = (("reference (cc)", r.reference_s), (label, r.optimized_s))
    details = r.message or "results match"
    moved = None if device == "cpu" else r.bytes_transferred
    choice = f"ran the {r.variant} code" + (f": {r.note}" if r.note else "") if r.variant else ""
    verdict = "match" if r.match else "MISMATCH"
    return RunResult(device, dict(params), verdict, details, times, moved, elapsed, r.max_abs_error, choice)


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
    error = "" if result.max_abs_error is None else f" (max abs error {result.max_abs_error:.3g})" if show_times else " (max abs error –)"
    lines.append(result.details + error)
    if result.choice and show_times:
        lines.append(result.choice)
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"
