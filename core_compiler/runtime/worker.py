"""Run a function in a separate process with a time limit: crashes and hangs stay over there.

`run_in_worker(fn, args)` starts a fresh Python (``python -c``, not a fork of the caller, which
may hold threads or a GPU context; unlike multiprocessing's spawn it never re-imports the
caller's ``__main__``), sends it ``fn``, ``args`` and ``kwargs`` pickled on stdin, and reads the
pickled result back over a pipe of its own. It returns a `WorkerResult`: the value, or a
`WorkerError` saying what happened —

- ``timeout``:   "timed out after 2 s" (the process is killed; the limit counts its start-up);
- ``signal``:    "crashed with signal SIGSEGV (Segmentation fault)";
- ``exit``:      "exited with status 3 before returning" (``exit()`` in C code, ``os._exit``);
- ``exception``: "raised BuildError: ..." with the worker's traceback.

The worker's stdout and stderr (``printf`` in C code, Python's fault handler) are captured; their
tail comes back in `WorkerResult.output`. `fn` must be importable by module and name in a fresh
interpreter (a module-level function on the caller's ``sys.path``, which the worker inherits);
its arguments and result must be picklable: frozen dataclasses of numpy arrays are.
"""

from __future__ import annotations

import os
import pickle
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
_CHILD = "import sys; from core_compiler.runtime.worker import serve; serve(int(sys.argv[1]))"


@dataclass(frozen=True)
class WorkerError:
    kind: str  # "timeout" | "signal" | "exit" | "exception"
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
) -> WorkerResult[T]:
    """Call ``fn(*args, **kwargs)`` in a new process; never raises for what happens there."""
    payload = pickle.dumps((fn, tuple(args), dict(kwargs or {})))
    start = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        outcome = _supervise(payload, log, timeout_s)
        elapsed = time.perf_counter() - start
        output = _tail(log)
    if isinstance(outcome, WorkerError):
        return WorkerResult(None, outcome, elapsed, output)
    return WorkerResult(outcome[0], None, elapsed, output)


def _supervise(payload: bytes, log: IO[bytes], timeout_s: float) -> WorkerError | tuple[Any]:
    read_fd, write_fd = os.pipe()
    receiver = Connection(read_fd, writable=False)
    try:
        proc = _start(payload, log, write_fd)
    finally:
        os.close(write_fd)
    outcome: WorkerError | tuple[Any] | None = None
    try:
        outcome = _wait(receiver, proc, timeout_s)
    finally:  # a worker that answered may exit in peace; any other is killed now
        _reap(proc, _REAP_S if isinstance(outcome, tuple) else 0.0)
        receiver.close()
    return outcome


def _start(payload: bytes, log: IO[bytes], write_fd: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p or os.getcwd() for p in sys.path))
    env["PYTHONFAULTHANDLER"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(write_fd)],
        stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,), env=env,
    )  # fmt: skip
    assert proc.stdin is not None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the worker died before reading; `_wait` reports how
    return proc


def _wait(
    receiver: Connection, proc: subprocess.Popen[bytes], timeout_s: float
) -> WorkerError | tuple[Any]:
    if not receiver.poll(timeout_s):
        return WorkerError("timeout", f"timed out after {timeout_s:g} s")
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


def _death(returncode: int | None) -> WorkerError:
    if returncode is not None and returncode < 0:
        sig = signal.Signals(-returncode)
        return WorkerError("signal", f"crashed with signal {sig.name} ({signal.strsignal(sig)})")
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


def serve(write_fd: int) -> None:
    """The worker's side: read the call from stdin, send the outcome to `write_fd`."""
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
