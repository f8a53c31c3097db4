"""Running a function: the original C (compiled by the system compiler) against hexplore's
generated OpenCL (on PoCL's CPU device or a GPU), on the same deterministic inputs.

The check itself is the core's (`core_compiler.runtime.differential.check_opencl`); this module runs
it in a worker process with a time limit (`jobs.py`), on the document's current text written to a
scratch directory, and turns every outcome into a `RunReport`::

    report = run_function(runner, doc, analysis, {"ni": 32, "nj": 32, "nk": 32}, parse=options)
    report.status    # "ok" | "mismatch" | "not-checkable" | "error" | "timeout" | "crashed" | "cancelled"

Integer parameters without a size in `sizes` get `DEFAULT_SIZE`, halved while the loops would run
past an array of fixed size. The scratch copy is built with the document's include paths and
macros (`ParseOptions`), and its directory first among them, so its own headers are found.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core_compiler.analysis import FunctionAnalysis
from core_compiler.frontend import ParseOptions
from core_compiler.runtime.footprint import default_sizes
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


def run_function(
    runner: JobRunner,
    doc: Document,
    fa: FunctionAnalysis,
    sizes: Mapping[str, int] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cancel: Callable[[], bool] | None = None,
    parse: ParseOptions | None = None,
) -> RunReport:
    values = default_sizes(fa.function, fa.scops, sizes or {}, DEFAULT_SIZE)
    name = os.path.basename(doc.path) or "input.c"
    base = parse or ParseOptions()
    here = (os.path.dirname(os.path.abspath(doc.path)),) if doc.path else ()
    options = ParseOptions(here + base.include_dirs, base.defines, base.extra_args)
    result = runner.run(check_job, (name, doc.text, fa.function.name, values, options), timeout_s, cancel)
    if result.ok:
        return _report(result.value, values, result.elapsed_s)
    return RunReport(result.status, result.error, values, elapsed_s=result.elapsed_s)


def check_job(name: str, text: str, function: str, sizes: dict[str, int], parse: ParseOptions) -> dict[str, Any]:
    """The job body, in the worker process: plain data out, so it pickles."""
    from core_compiler.errors import UsageError
    from core_compiler.runtime.differential import NotCheckable, check_opencl

    with tempfile.TemporaryDirectory(prefix="hexplore-run-") as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            diff = check_opencl(path, function, sizes, parse=parse)
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
