"""A call of JIT-compiled code with a time cap: run in a forked child process, stopped when it runs
past the cap.

A call cannot be interrupted in the process that makes it (generated code holds no point where
Python could stop it), so the race of CPU variants (`cpu_variants.race_variants`), where the
original takes long enough that a bad variant could eat the run's time limit, makes each call in
a child forked from the run's worker: the child has the compiled code and the inputs already
(copy-on-write), calls it on fresh copies, checks the arrays against the original there, and
sends back the time and the check's verdict; the parent waits at most `cap_s` and kills it past
that. heat-3d's or floyd-warshall's parallel code on a machine whose cores are busy can take 60
times the original's time: such a variant is dropped, not waited for.

Forking is safe only while this process has not started OpenMP's threads itself (GNU libgomp's
thread pool does not survive a fork: a child's first parallel loop would wait for threads that
are not there), so the race forks only when no parallel loop has run here (`threads_started`).
A child that crashes makes its parent crash with the same signal: the run reports it as it
would have without the fork.

    seconds, verdict = capped_call(lambda: run_and_check(), cap_s=40.0)   # (inf, None): stopped
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import TypeVar

from core_compiler.errors import UsageError

R = TypeVar("R")
_STARTED = {"threads": False}  # whether a parallel loop has run in this process


class NoVariantInTime(UsageError):
    """No variant's capped call finished within what was left of the run's time limit."""


def note_threads_started() -> None:
    """Called where JIT code with parallel loops runs in this process: no fork after that."""
    _STARTED["threads"] = True


def threads_started() -> bool:
    return _STARTED["threads"]


def can_fork() -> bool:
    return hasattr(os, "fork") and not threads_started()


def capped_call(call: Callable[[], tuple[float, R]], cap_s: float) -> tuple[float, R | None]:
    """`call()` (its time, and what it made of the arrays) in a forked child; ``(inf, None)`` when
    it ran past `cap_s` seconds, and was killed. An exception in the child is raised here."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        _child(call, write_end)
    os.close(write_end)
    try:
        data = _read(read_end, time.monotonic() + cap_s)
    finally:
        os.close(read_end)
    if data is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return math.inf, None
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):  # crashed: as if the call had been made here
        os.kill(os.getpid(), os.WTERMSIG(status))
    if not data:
        raise RuntimeError(f"the process of a timed call ended without an answer (status {status})")
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value


def _child(call: Callable[[], object], write_end: int) -> None:
    """Run `call`, send ``("ok", result)`` or ``("raised", exception)``, and leave at once
    (`os._exit`: none of the parent's exit handlers run twice)."""
    try:
        try:
            payload = pickle.dumps(("ok", call()))
        except BaseException as e:  # sent to the parent, which raises it
            payload = pickle.dumps(("raised", e if _picklable(e) else RuntimeError(f"{type(e).__name__}: {e}")))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
    finally:
        os._exit(0)


def _picklable(e: BaseException) -> bool:
    try:
        pickle.dumps(e)
    except Exception:
        return False
    return True


def _read(fd: int, deadline: float) -> bytes | None:
    """Everything until the other end closes, or None at `deadline`."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], min(left, 3600.0))
        if not ready:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
