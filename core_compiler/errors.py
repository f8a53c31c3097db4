"""The one exception hierarchy: every exception hexplore raises on purpose is a `HexploreError`.

Problems in the user's code are remarks (see `remarks.py`), not exceptions: analysis never raises
on user input. What raises is a request hexplore cannot honour (`UsageError`: a C programmer reads
its message, e.g. `hexplore run` or `hexplore grad` prints it), valid C a back end cannot generate
code for yet (`Unsupported`), or a bug (`InternalError`).

    HexploreError
    ├── InternalError          a bug: an invariant did not hold
    │   ├── UnknownName        (also a KeyError) the LLVM lowering met a name with no value
    │   └── UnknownUserNode    (also a KeyError) an isl AST leaf names no statement
    ├── Unsupported            valid C the LLVM back end does not lower
    │   └── UnsupportedType, UnsupportedCall, UnsupportedExpression
    ├── UsageError             the request (or the user's program, for it) is out of reach
    │   ├── NotDifferentiable  `hexplore grad`; carries the remarks that say why, with ranges
    │   ├── NotCheckable       the differential check cannot run this function at these sizes
    │   ├── SizesError         (also a ValueError) a malformed `--sizes` string
    │   ├── LayoutError        arrays and sizes from a signature, or inputs that do not fit them
    │   ├── BuildError         the reference C (or generated code) does not build
    │   ├── OpenCLError, CudaError  no device, or a program/launch it refuses
    │   └── explorer.errors: UnknownDocument, UnknownFunction, UnknownPass
    ├── WorkerFailed           a worker process ended without a value (crash, time limit, error)
    └── explorer.errors.Cancelled
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core_compiler.remarks import Remark
    from core_compiler.runtime.worker import WorkerError


class HexploreError(Exception):
    """Base class of every exception hexplore raises on purpose."""


class InternalError(HexploreError):
    """A bug in hexplore: an invariant did not hold."""


class UsageError(HexploreError):
    """The caller asked for something impossible (unknown function, bad option value)."""


# ----------------------------------------------------------------------------------- internal


class UnknownName(InternalError, KeyError):
    """A name in an isl AST expression that the LLVM lowering has no value for. A `KeyError`
    still, so its message reads as before (``'h0'``)."""


class UnknownUserNode(InternalError, KeyError):
    """An isl AST user node whose statement the LLVM lowering does not know."""


# -------------------------------------------------------------------------------- unsupported


class Unsupported(HexploreError):
    """Valid C that the LLVM back end cannot generate code for (the C, CUDA and OpenCL targets
    print it as written)."""


class UnsupportedType(Unsupported):
    """A C type without an LLVM counterpart here (`long double`, structs)."""


class UnsupportedCall(Unsupported):
    """A call to a function the LLVM back end has no intrinsic or libm symbol for."""


class UnsupportedExpression(Unsupported):
    """An expression, cast or operator the LLVM back end does not lower."""


# ------------------------------------------------------------------------------- user-facing


class NotDifferentiable(UsageError):
    """The function cannot be differentiated as asked; `remarks` say why, with ranges (their
    names are registered in `remark_names.py` like every other remark's)."""

    def __init__(self, message: str, remarks: tuple[Remark, ...] = ()) -> None:
        super().__init__(message)
        self.remarks = remarks


class NotCheckable(UsageError):
    """The function is not a single SCoP plus scalar set-up, or its loops run past its arrays at
    these sizes, so the differential check cannot run."""


class NotOneNest(NotCheckable):
    """The function is several modeled loop nests, or one with code hexplore does not model
    around it: the runs that check one nest refuse it; on the CPU the whole function runs as the
    C target generates it (`runtime/whole_c.py`)."""


class SizesError(UsageError, ValueError):
    """A malformed ``--sizes`` string; the message names the bad part and its column. A
    `ValueError` still, as a parse error of a value (tests/test_sizes.py holds it to that)."""


class LayoutError(UsageError):
    """The arrays and sizes of a function cannot be derived from its signature, or inputs do not
    match them."""


class BuildError(UsageError):
    """Compiling C (the reference, or generated code) failed; the message has the compiler's
    output."""


class HostOnly(UsageError):
    """The loop nest calls a function of the program (an opaque call): GPU code cannot, so it
    has no GPU schedule or kernels."""


class OpenCLError(UsageError):
    """No PoCL device, a program that does not build, or a launch that breaks OpenCL's rules."""


class CudaError(UsageError):
    """No pycuda or NVIDIA GPU, or PTX the driver does not load."""


# ------------------------------------------------------------------------------------ workers


class WorkerFailed(HexploreError):
    """A worker process ended without a value; `error` says how (exception, signal, time limit)."""

    def __init__(self, error: WorkerError) -> None:
        super().__init__(error.message)
        self.error = error
