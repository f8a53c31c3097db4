"""Running a function, for every face: the one run of `core_compiler.runtime.run`.

`hexplore run`, the TUI's Run tab and the editor's ``hexplore/run`` call the same `run_function`
(re-exported here, not wrapped) and read the same `RunReport`; they take sizes from
`default_params` (`DEFAULT_SIZE`, halved until the loops fit arrays of fixed size). The run
happens in a worker process with a time limit (`core_compiler.runtime.worker`), so a crash or a
hang in generated code is a report, never the caller's end. The editor passes the document's
unsaved text and a cancel callback::

    sizes = default_params(fa, {"n": 12})
    report = run_function(doc.path, "matmul", "cpu", sizes, parse=options, text=doc.text, cancel=stop.is_set)
    report.status    # "ok" | "mismatch" | "not-checkable" | "error" | "timeout" | "crashed" | "cancelled"

The names load on first use (PEP 562): `core_compiler.runtime` brings numpy, pyopencl and
llvmlite, which a face that only shows analyses never needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core_compiler.runtime.run import (
        DEFAULT_DEVICE,
        DEFAULT_SIZE,
        DEFAULT_TIMEOUT_S,
        DEVICES,
        NOT_CHECKABLE,
        STATUSES,
        WHOLE_FUNCTION,
        ArrayReport,
        RunReport,
        cuda_unavailable,
        default_params,
        run_function,
    )


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("core_compiler.runtime.run"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_DEVICE",
    "DEFAULT_SIZE",
    "DEFAULT_TIMEOUT_S",
    "DEVICES",
    "NOT_CHECKABLE",
    "STATUSES",
    "WHOLE_FUNCTION",
    "ArrayReport",
    "RunReport",
    "cuda_unavailable",
    "default_params",
    "run_function",
]
