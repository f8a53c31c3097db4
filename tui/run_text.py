"""The Run tab's words for a run: the one `RunReport` of `explorer.running.run_function` (the run
`hexplore run` and the editor's ``hexplore/run`` make too) as the text under the Run button.

- ``cpu``: hexplore's code JIT-compiled by LLVM (the fastest of its tiled, untiled, unroll-and-jammed and source-order
  variants, OpenMP-parallel), against the C compiler's build of the original; a function of several
  nests, the C target's code for the whole function built by the C compiler (`WHOLE_FUNCTION`).
- ``opencl``: the generated OpenCL on PoCL's CPU device (kernel and copy times, bytes moved).
- ``cuda``: LLVM's PTX through pycuda on an NVIDIA GPU; `cuda_unavailable` says what is missing
  where it cannot run.
"""

from __future__ import annotations

from explorer.running import NOT_CHECKABLE, WHOLE_FUNCTION, RunReport

DEVICES = {"cpu": "CPU (LLVM JIT)", "opencl": "OpenCL (PoCL)", "cuda": "GPU (CUDA)"}
_OPTIMIZED = {"cpu": "hexplore (LLVM)", "opencl": "hexplore (OpenCL)", "cuda": "hexplore (CUDA)"}
_VERDICTS = {"ok": "match", "mismatch": "MISMATCH", "not-checkable": "not checkable"}


def verdict(r: RunReport) -> str:
    """``match``, ``MISMATCH``, ``not checkable`` or ``error`` (a build error, a crash, a time-out)."""
    return _VERDICTS.get(r.status, "error")


def times(r: RunReport) -> tuple[tuple[str, float], ...]:
    """Reference first, optimized last; none when the run did not complete."""
    if not r.completed:
        return ()
    return (("original (cc -O2)", r.reference_s), (_optimized(r), r.optimized_s))


def _optimized(r: RunReport) -> str:
    """Whose code ran: a function of several nests runs whole as the C target writes it, built by cc."""
    return "hexplore (C target)" if r.variant == WHOLE_FUNCTION else _OPTIMIZED.get(r.device, "hexplore")


def summary(r: RunReport, show_times: bool = True) -> str:
    """The text under the Run button: verdict first, then times (or a placeholder)."""
    sizes = ", ".join(f"{k}={v}" for k, v in r.params.items()) or "no sizes"
    device = "CPU (C target, cc)" if r.variant == WHOLE_FUNCTION else DEVICES.get(r.device, r.device)
    lines = [f"verdict: {verdict(r)}  ({device}; {sizes})"]
    if not r.completed:
        return "\n".join([*lines, r.message.removeprefix(NOT_CHECKABLE)])
    for label, seconds in times(r):
        lines.append(f"  {label:<20} {_ms(seconds) if show_times else '– ms'}")
    if r.optimized_s > 0:
        lines.append(f"  speedup vs original: {f'{r.speedup:.2f}x' if show_times else '–'}")
    moved = "none (host memory)" if r.device == "cpu" else f"{r.bytes_transferred:,} bytes"
    lines.append(f"  transferred: {moved}")
    error = f" (max abs error {r.max_abs_error:.3g})" if show_times else " (max abs error –)"
    lines.append((r.message or "results match") + error)
    if r.variant and show_times:
        lines.append(f"ran the {r.variant} code" + (f": {r.note}" if r.note else ""))
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"
