"""Running a function: the original C (compiled by the system compiler) against hexplore's
generated OpenCL (on PoCL's CPU device or a GPU), on the same deterministic inputs.

The check itself is the core's (`core_compiler.runtime.differential.check_opencl`); this module runs
it in a worker process with a time limit (`jobs.py`), on the document's current text written to a
scratch directory, and turns every outcome into a `RunReport`::

    report = run_function(runner, doc, "kernel_gemm", {"ni": 32, "nj": 32, "nk": 32})
    report.status    # "ok" | "mismatch" | "not-checkable" | "error" | "timeout" | "crashed" | "cancelled"

Integer parameters without a size in `sizes` get `DEFAULT_SIZE`. The scratch copy sees no
include paths or macros from the settings: files that need them are reported as errors.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core_compiler.frontend import ir
from explorer.jobs import JobRunner
from explorer.workspace import Document

DEFAULT_SIZE = 32
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ArrayReport:
    name: str
    ok: bool
    message: str
    max_abs_error: float


@dataclass(frozen=True)
class RunReport:
    status: str
    message: str
    sizes: Mapping[str, int]
    kernels: int = 0
    arrays: tuple[ArrayReport, ...] = ()
    elapsed_s: float = 0.0


def default_sizes(fn: ir.Function, sizes: Mapping[str, int] | None = None) -> dict[str, int]:
    """A value for every integer scalar parameter (and integer global the function reads): from
    `sizes`, else `DEFAULT_SIZE`."""
    given = dict(sizes or {})
    return {
        p.name: int(given.get(p.name, DEFAULT_SIZE))
        for p in fn.inputs
        if isinstance(p.type, ir.Scalar) and p.type.is_integer and not p.constant
    }


def run_function(
    runner: JobRunner,
    doc: Document,
    fn: ir.Function,
    sizes: Mapping[str, int] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cancel: Callable[[], bool] | None = None,
) -> RunReport:
    values = default_sizes(fn, sizes)
    name = os.path.basename(doc.path) or "input.c"
    result = runner.run(check_job, (name, doc.text, fn.name, values), timeout_s, cancel)
    if result.ok:
        return _report(result.value, values, result.elapsed_s)
    return RunReport(result.status, result.error, values, elapsed_s=result.elapsed_s)


def check_job(name: str, text: str, function: str, sizes: dict[str, int]) -> dict[str, Any]:
    """The job body, in the worker process: plain data out, so it pickles."""
    from core_compiler.errors import UsageError
    from core_compiler.runtime.differential import NotCheckable, check_opencl

    with tempfile.TemporaryDirectory(prefix="hexplore-run-") as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            diff = check_opencl(path, function, sizes)
        except NotCheckable as e:
            return {"status": "not-checkable", "message": str(e)}
        except (UsageError, OSError) as e:
            return {"status": "error", "message": f"{type(e).__name__}: {e}"}
    arrays = [
        {"name": a.name, "ok": a.ok, "message": a.message, "max_abs_error": float(a.max_abs_error)}
        for a in diff.comparison.arrays
    ]
    verdict = "the generated code matches the original" if diff.ok else "the results differ"
    return {
        "status": "ok" if diff.ok else "mismatch",
        "message": f"{verdict} ({diff.kernels} kernel(s))",
        "kernels": diff.kernels,
        "arrays": arrays,
    }


def _report(value: dict[str, Any], sizes: dict[str, int], elapsed_s: float) -> RunReport:
    arrays = tuple(ArrayReport(**a) for a in value.get("arrays", ()))
    return RunReport(value["status"], value["message"], sizes, value.get("kernels", 0), arrays, elapsed_s)
