"""`hexplore run`: run a function's original and optimized code on the same inputs, compare, time.

Devices: ``cpu`` (the original compiled by the system C compiler as the reference; hexplore's
optimized schedule JIT-compiled by LLVM, parallel loops through libgomp) and ``opencl`` (the
generated kernels on the OpenCL device, PoCL on the CPU here). ``cuda`` needs an NVIDIA GPU and
pycuda (the ``[gpu]`` extra). Each run happens in a worker process with a time limit, so a crash
or an endless loop in generated code is reported, never inherited.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from core_compiler.runtime.compare import Comparison
from core_compiler.runtime.worker import run_in_worker

DEVICES = ("cpu", "opencl", "cuda")
DEFAULT_SIZE = 64  # every size parameter not given with --param


@dataclass(frozen=True)
class RunReport:
    function: str
    device: str
    params: dict[str, int]
    reference_s: float
    optimized_s: float
    speedup: float
    match: bool
    max_abs_error: float
    bytes_transferred: int
    message: str  # what went wrong, or "" when the run completed

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def cuda_unavailable() -> str:
    """Why `--device cuda` cannot run here (hexplore has no CUDA runner yet, so there is always a
    reason; the first one that applies)."""
    if not Path("/dev/nvidia0").exists() and shutil.which("nvidia-smi") is None:
        return "no CUDA device on this machine"
    try:
        import pycuda.driver as cuda  # type: ignore[import-not-found]

        cuda.init()
        if cuda.Device.count() == 0:
            return "no NVIDIA GPU is visible to the CUDA driver"
    except Exception as e:  # ImportError without the [gpu] extra, or a driver error
        return f"no CUDA device: {type(e).__name__}: {e}".rstrip(": ")
    return "running on CUDA is not implemented yet (the generated CUDA is compile-checked with nvcc)"


def run_function(path: str, function: str, device: str, params: Mapping[str, int], timeout_s: float = 120.0) -> RunReport:
    """One run, in a worker process; failures come back as a report with a message."""
    if device == "cuda":
        return _failed(function, device, params, cuda_unavailable())
    outcome = run_in_worker(_measure, (path, function, device, dict(params)), timeout_s=timeout_s)
    if outcome.error is not None:
        return _failed(function, device, params, outcome.error.message)
    assert outcome.value is not None
    return outcome.value


def _measure(path: str, function: str, device: str, params: dict[str, int]) -> RunReport:
    try:
        if device == "cpu":
            from core_compiler.runtime.cpu_llvm import check_llvm_cpu

            r = check_llvm_cpu(path, function, params)
            return _report(function, device, params, r.reference_s, r.optimized_s, r.optimized, 0)
        from core_compiler.runtime.differential import check_opencl

        d = check_opencl(path, function, params)
        return _report(function, device, params, d.reference_s, d.device_s, d.comparison, d.bytes_transferred)
    except Exception as e:  # not checkable, does not build, …: the user's answer, not a traceback
        return _failed(function, device, params, f"{type(e).__name__}: {e}")


def _report(
    function: str, device: str, params: dict[str, int], ref: float, opt: float, cmp: Comparison, moved: int
) -> RunReport:
    worst = max((a.max_abs_error for a in cmp.arrays), default=0.0)
    speedup = ref / opt if opt > 0 else 0.0
    message = "" if cmp.ok else cmp.report()
    return RunReport(function, device, params, ref, opt, speedup, cmp.ok, worst, moved, message)


def _failed(function: str, device: str, params: Mapping[str, int], message: str) -> RunReport:
    return RunReport(function, device, dict(params), 0.0, 0.0, 0.0, False, 0.0, 0, message)
