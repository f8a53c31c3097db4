"""Run a function in a separate process with a time limit: crashes and hangs stay over there.

`run_in_worker(fn, args)` starts a fresh Python (``python -c``, not a fork of the caller, which
may hold threads or a GPU context; unlike multiprocessing's spawn it never re-imports the
caller's ``__main__``), sends it ``fn``, ``args`` and ``kwargs`` pickled on stdin, and reads the
pickled result back over a pipe of its own. It returns a `WorkerResult`: the value, or a
`WorkerError` saying what happened —

- ``timeout``:   "timed out after 2 s" (the process is killed; the limit counts its start-up);
- ``signal``:    "crashed with signal SIGSEGV: it read or wrote memory outside what it owns"
  (`SIGNAL_WORDS`: what the signal means for compiled C; others by their system name);
- ``exit``:      "exited with status 3 before returning" (``exit()`` in C code, ``os._exit``);
- ``exception``: "raised BuildError: ..." with the worker's traceback;
- ``cancelled``: "cancelled" (``cancel()``, polled while the worker runs, returned True; killed).

``memory_limit_bytes`` caps the worker's address space (``RLIMIT_AS``): an allocation past it
fails there (a ``MemoryError``, or a C ``malloc`` returning NULL), never in the caller. Every face
runs its compiler jobs this way: `hexplore run`, the TUI's Run tab and the editor's
``hexplore/run`` all go through `core_compiler.runtime.run.run_function`, which calls this.

The worker's stdout and stderr (``printf`` in C code, Python's fault handler) are captured; their
tail comes back in `WorkerResult.output`. `fn` must be importable by module and name in a fresh
interpreter (a module-level function on the caller's ``sys.path``, which the worker is given);
its arguments and result must be picklable: frozen dataclasses of numpy arrays are.

The worker is isolated from where it was started (``python -I``): it ignores ``PYTHON*``
environment variables and the user's site directory, and its ``sys.path`` is exactly the caller's
absolute entries, passed on its command line, never the current directory (a ``numpy.py`` in the
folder of the C file being run is not imported; `tests/runtime/test_worker.py` checks it).
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import IO, Any, Generic, TypeVar

import numpy as np

from core_compiler.errors import WorkerFailed
from core_compiler.runtime.opencl import Launch, OpenCLResult, run_opencl
from core_compiler.runtime.reference import BuildOptions, ReferenceResult, run_reference
from core_compiler.runtime.signature import Layout

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 60.0
OUTPUT_TAIL = 4000  # characters of the worker's output kept
_REAP_S = 5.0  # how long a worker that has answered may take to exit
_POLL_S = 0.05  # how often `cancel` is asked
_WAIT_SLICE_S = 3600.0  # the longest single wait (a wait is milliseconds in a C int)
# argv: the pipe, the memory limit, then the caller's sys.path (set before anything is imported).
_CHILD = (
    "import sys; sys.path[:] = sys.argv[3:]; "
    "from core_compiler.runtime.worker import serve; serve(int(sys.argv[1]), int(sys.argv[2]))"
)
Cancel = Callable[[], bool]


@dataclass(frozen=True)
class WorkerError:
    kind: str  # "timeout" | "signal" | "exit" | "exception" | "cancelled"
    message: str
    exception_type: str | None = None
    traceback: str | None = None


@dataclass(frozen=True)
class WorkerResult(Generic[T]):
    value: T | None
    error: WorkerError | None
    elapsed_s: float  # wall time, worker start-up included
    output: str = ""  # the tail of the worker's stdout and stderr

    @property
    def ok(self) -> bool:
        return self.error is None

    def unwrap(self) -> T:
        """The value; `WorkerFailed` with the error's message when there is none."""
        if self.error is not None:
            raise WorkerFailed(self.error)
        return self.value  # type: ignore[return-value]


def run_in_worker(
    fn: Callable[..., T],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cancel: Cancel | None = None,
    memory_limit_bytes: int | None = None,
) -> WorkerResult[T]:
    """Call ``fn(*args, **kwargs)`` in a new process; never raises for what happens there."""
    start = time.perf_counter()
    try:
        payload = pickle.dumps((fn, tuple(args), dict(kwargs or {})))
    except Exception as e:  # a lambda, an open file: nothing was started
        error = WorkerError("exception", f"could not be sent to a worker: {type(e).__name__}: {e}", type(e).__name__)
        return WorkerResult(None, error, 0.0)
    with tempfile.TemporaryFile() as log:
        outcome = _supervise(payload, log, timeout_s, cancel, memory_limit_bytes or 0)
        elapsed = time.perf_counter() - start
        output = _tail(log)
    if isinstance(outcome, WorkerError):
        return WorkerResult(None, outcome, elapsed, output)
    return WorkerResult(outcome[0], None, elapsed, output)


def _supervise(
    payload: bytes, log: IO[bytes], timeout_s: float, cancel: Cancel | None, memory_limit: int
) -> WorkerError | tuple[Any]:
    read_fd, write_fd = os.pipe()
    receiver = Connection(read_fd, writable=False)
    try:
        proc = _start(payload, log, write_fd, memory_limit)
    finally:
        os.close(write_fd)
    outcome: WorkerError | tuple[Any] | None = None
    try:
        outcome = _wait(receiver, proc, timeout_s, cancel)
    finally:  # a worker that answered may exit in peace; any other is killed now
        _reap(proc, _REAP_S if isinstance(outcome, tuple) else 0.0)
        receiver.close()
    return outcome


def _start(payload: bytes, log: IO[bytes], write_fd: int, memory_limit: int) -> subprocess.Popen[bytes]:
    path = [p for p in sys.path if os.path.isabs(p)]  # "" (the current directory) is left out
    proc = subprocess.Popen(
        [sys.executable, "-I", "-X", "faulthandler", "-c", _CHILD, str(write_fd), str(memory_limit), *path],
        stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,),
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the worker died before reading; `_wait` reports how
    return proc


def _wait(
    receiver: Connection, proc: subprocess.Popen[bytes], timeout_s: float, cancel: Cancel | None
) -> WorkerError | tuple[Any]:
    deadline = time.perf_counter() + timeout_s
    while not receiver.poll(max(0.0, min(_POLL_S if cancel else _WAIT_SLICE_S, deadline - time.perf_counter()))):
        if time.perf_counter() >= deadline:
            return WorkerError("timeout", f"timed out after {timeout_s:g} s")
        if cancel is not None and cancel():
            return WorkerError("cancelled", "cancelled")
    try:
        message = receiver.recv()
    except (EOFError, OSError):
        return _death(_returncode(proc))
    if message[0] == "ok":
        return (message[1],)
    _, name, text, tb = message
    return WorkerError("exception", f"raised {name}: {text}", name, tb)


def _returncode(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return proc.wait(_REAP_S)
    except subprocess.TimeoutExpired:
        return None


# What a signal that ends a worker means for the compiled C code it ran, in words.
SIGNAL_WORDS = {
    "SIGFPE": "the code divided an integer by zero (or the most negative integer by -1)",
    "SIGILL": "the code reached a trap (an illegal instruction), which C compilers put where the "
    "behaviour is undefined, most often an integer division by a value they know is zero",
    "SIGSEGV": "it read or wrote memory outside what it owns (or ran out of stack)",
    "SIGBUS": "it accessed memory at an address the machine cannot reach (a misaligned or unmapped "
    "file address)",
    "SIGABRT": "it aborted (abort(), a failed assert, or a memory allocation that failed under the run's "
    "memory limit)",
    "SIGKILL": "it was killed (by the system, which does so when memory runs out, or by a user)",
}


def _death(returncode: int | None) -> WorkerError:
    if returncode is not None and returncode < 0:
        sig = signal.Signals(-returncode)
        words = SIGNAL_WORDS.get(sig.name) or signal.strsignal(sig) or sig.name
        return WorkerError("signal", f"crashed with signal {sig.name}: {words}")
    return WorkerError("exit", f"exited with status {returncode} before returning")


def _reap(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _tail(log: IO[bytes]) -> str:
    log.seek(0, os.SEEK_END)
    log.seek(max(0, log.tell() - OUTPUT_TAIL))
    return log.read().decode("utf-8", errors="replace")


def serve(write_fd: int, memory_limit: int = 0) -> None:
    """The worker's side: read the call from stdin, send the outcome to `write_fd`."""
    if memory_limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    sender = Connection(write_fd, readable=False)
    try:
        fn, args, kwargs = pickle.load(sys.stdin.buffer)
        sender.send(("ok", fn(*args, **kwargs)))
    except BaseException as e:  # everything goes back to the caller
        sender.send(("error", type(e).__name__, str(e), traceback.format_exc()))
    finally:
        sender.close()


# ------------------------------------------------------------------------------ conveniences


def reference_in_worker(
    source_path: str,
    layout: Layout,
    inputs: Mapping[str, np.ndarray] | None = None,
    *,
    text: str | None = None,
    options: BuildOptions | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> WorkerResult[ReferenceResult]:
    """`run_reference` in a worker (the build runs there too)."""
    kwargs = {"text": text, "options": options}
    return run_in_worker(run_reference, (source_path, layout, inputs), kwargs, timeout_s=timeout_s)


def opencl_in_worker(
    source: str,
    launches: Sequence[Launch],
    arrays: Mapping[str, np.ndarray],
    *,
    build_options: Sequence[str] = (),
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> WorkerResult[OpenCLResult]:
    """`run_opencl` in a worker."""
    kwargs = {"build_options": tuple(build_options)}
    return run_in_worker(
        run_opencl, (source, tuple(launches), dict(arrays)), kwargs, timeout_s=timeout_s
    )
