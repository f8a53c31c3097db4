"""libclang out of process: one persistent worker with a time and a memory limit per request.

libclang runs C++ that a hostile or merely unusual file can crash (a subscript of 14,000 terms
overflows clang's stack: SIGSEGV), hang (a macro that expands to 2^20 terms) or blow up (an
``#include`` of ``/dev/zero``). In the process of the CLI or the language server any of these
would be the end of it, so every parse runs here: a Python of its own (``python -I``, like
`core_compiler.runtime.worker`'s, but started once and kept, because the editor parses on every
edit), whose ``stdin`` is ``/dev/null`` (an ``#include "/dev/stdin"`` that got through reads
nothing, never the editor's JSON-RPC pipe) and whose address space is capped (``RLIMIT_AS``).

A request is a module-level function and its arguments, pickled over a pipe (`call`), or a
generator function whose items come back one by one as they are made (`stream`: the CLI prints
the first functions of a large file while the worker reads the next ones). Results must pickle:
the loop IR (`frontend/ir.py`) is frozen dataclasses. Functions may keep state in their module
between requests (the editor's translation units, reparsed in place: `explorer/parsing.py`);
`generation` changes when the worker is restarted and that state is gone.

What goes wrong there is a `FrontendFailure` here — ``crashed`` (a signal, an exit) or ``budget``
(the time limit, or the memory limit) — after which the worker is killed and started afresh on the
next request. An exception raised by the function comes back as `WorkerRaised` (its type, message
and traceback): a bug, not the input's fault.
"""

from __future__ import annotations

import atexit
import os
import pickle
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import IO, Any, TypeVar

from core_compiler.errors import HexploreError, InternalError

T = TypeVar("T")

# argv: the request pipe, the reply pipe, the memory limit, then the caller's sys.path.
_CHILD = (
    "import sys; sys.path[:] = sys.argv[4:]; from core_compiler.frontend.worker import serve; "
    "serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))"
)
_LOG_TAIL = 4000
_OOM_WORDS = ("out of memory", "bad_alloc", "MemoryError", "Cannot allocate memory")


def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value < 1e6 else default


@dataclass(frozen=True)
class FrontendLimits:
    """Per request: a parse, or the lowering of one function. ``HEXPLORE_FRONTEND_TIMEOUT_S``
    and ``HEXPLORE_FRONTEND_MEMORY_MB`` change the defaults (the tests shorten the time)."""

    timeout_s: float = 60.0
    memory_bytes: int = 4 << 30

    @staticmethod
    def from_environment() -> FrontendLimits:
        timeout = _env_float("HEXPLORE_FRONTEND_TIMEOUT_S", FrontendLimits.timeout_s)
        memory = _env_float("HEXPLORE_FRONTEND_MEMORY_MB", FrontendLimits.memory_bytes / 2**20)
        return FrontendLimits(timeout, int(memory * 2**20))


class FrontendFailure(HexploreError):
    """The worker crashed or ran out of its budget; it was killed. `kind` is ``crashed`` or
    ``budget``; the message says what happened in words (``crashed with signal SIGSEGV``)."""

    def __init__(self, kind: str, message: str, output: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.output = output


class WorkerRaised(InternalError):
    """The function raised in the worker (a bug in hexplore): its type, message and traceback."""

    def __init__(self, type_name: str, message: str, tb: str) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.traceback = tb


class FrontendWorker:
    """One persistent worker; thread-safe (one request at a time)."""

    def __init__(self, limits: FrontendLimits | None = None) -> None:
        self.limits = limits or FrontendLimits.from_environment()
        self.generation = 0
        self._lock = threading.RLock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self._log: IO[bytes] | None = None
        self._pid = os.getpid()

    # ------------------------------------------------------------------------------ requests

    def call(self, fn: Callable[..., T], *args: Any, timeout_s: float | None = None) -> T:
        """``fn(*args)`` in the worker. Raises `FrontendFailure` or `WorkerRaised`."""
        with self._lock:
            self._request("call", fn, args)
            kind, value = self._reply(timeout_s)
            if kind != "ok":
                raise InternalError(f"the front-end worker answered {kind!r} to a call")
            return value  # type: ignore[no-any-return]

    def stream(self, fn: Callable[..., Iterator[T]], *args: Any, timeout_s: float | None = None) -> Iterator[T]:
        """The items of the generator ``fn(*args)`` as the worker makes them; the time limit is
        per item. Holds the worker until the last item (or until the iterator is closed: then
        the worker, which may still be sending, is stopped)."""
        with self._lock:
            self._request("stream", fn, args)
            done = False
            try:
                while True:
                    kind, value = self._reply(timeout_s)
                    if kind == "ok":
                        done = True
                        return
                    yield value
            finally:
                if not done:
                    self._stop()

    def close(self) -> None:
        with self._lock:
            self._stop()

    # ------------------------------------------------------------------------------ the process

    def _request(self, mode: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        if self._pid != os.getpid():  # a forked child: the worker and its pipes are the parent's
            self._proc = self._send = self._recv = self._log = None
            self._pid = os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        assert self._send is not None
        try:
            self._send.send_bytes(pickle.dumps((mode, fn, args)))
        except (OSError, ValueError):  # it died while idle: once more, on a fresh one
            self._start()
            self._send.send_bytes(pickle.dumps((mode, fn, args)))

    def _reply(self, timeout_s: float | None) -> tuple[str, Any]:
        assert self._recv is not None and self._proc is not None
        limit = self.limits.timeout_s if timeout_s is None else timeout_s
        if not self._recv.poll(limit):
            self._stop()
            raise FrontendFailure("budget", f"took longer than its time limit of {limit:g} s")
        try:
            message = self._recv.recv()
        except (EOFError, OSError):
            failure = self._death()
            self._stop()
            raise failure from None
        if message[0] == "error":
            _, name, text, tb = message
            if name == "MemoryError":
                self._stop()  # it may be left in any state
                raise FrontendFailure("budget", f"ran out of its memory limit of {self.limits.memory_bytes >> 20} MB")
            if name == "RecursionError":
                raise FrontendFailure("budget", "nested too deeply (Python's recursion limit)")
            raise WorkerRaised(name, text, tb)
        return message[0], message[1]

    def _death(self) -> FrontendFailure:
        assert self._proc is not None
        try:
            code = self._proc.wait(5)
        except subprocess.TimeoutExpired:
            code = None
        output = self._output()
        if any(w in output for w in _OOM_WORDS):
            return FrontendFailure("budget", f"ran out of its memory limit of {self.limits.memory_bytes >> 20} MB", output)
        if code is not None and code < 0:
            sig = signal.Signals(-code)
            return FrontendFailure("crashed", f"crashed with signal {sig.name} ({signal.strsignal(sig)})", output)
        return FrontendFailure("crashed", f"exited with status {code}", output)

    def _output(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0, os.SEEK_END)
        self._log.seek(max(0, self._log.tell() - _LOG_TAIL))
        return self._log.read().decode("utf-8", errors="replace")

    def _start(self) -> None:
        self._stop()
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (kept open while the worker lives)
        path = [p for p in sys.path if os.path.isabs(p)]  # never the current directory
        argv = [sys.executable, "-I", "-X", "faulthandler", "-c", _CHILD, str(req_r), str(rep_w),
                str(self.limits.memory_bytes), *path]  # fmt: skip
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                pass_fds=(req_r, rep_w), start_new_session=True,
            )  # fmt: skip
        finally:
            os.close(req_r)
            os.close(rep_w)
        self._send = Connection(req_w, readable=False)
        self._recv = Connection(rep_r, writable=False)
        self.generation += 1

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        for conn in (self._send, self._recv):
            if conn is not None:
                conn.close()
        self._send = self._recv = None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


_shared: FrontendWorker | None = None
_shared_lock = threading.Lock()


def shared_worker() -> FrontendWorker:
    """The process's one front-end worker (started on its first request)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = FrontendWorker()
            atexit.register(_shared.close)
        return _shared


def describe(failure: FrontendFailure, doing: str) -> str:
    """``libclang crashed with signal SIGSEGV while parsing …`` / ``… took longer than …``."""
    return f"the C front end (libclang) {failure} while {doing}"


# ------------------------------------------------------------------------------ the worker's side


def serve(request_fd: int, reply_fd: int, memory_limit: int) -> None:
    if memory_limit > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)  # a run worker's own limit may be lower
        limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    requests = Connection(request_fd, writable=False)
    replies = Connection(reply_fd, readable=False)
    while True:
        try:
            mode, fn, args = pickle.loads(requests.recv_bytes())
        except (EOFError, OSError):
            return  # the caller went away
        try:
            if mode == "stream":
                for item in fn(*args):
                    replies.send(("item", item))
                replies.send(("ok", None))
            else:
                replies.send(("ok", fn(*args)))
        except BaseException as e:  # everything goes back to the caller
            replies.send(("error", type(e).__name__, str(e), traceback.format_exc()))
