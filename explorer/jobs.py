"""Compile and run jobs in worker processes, with time limits.

A job is a picklable top-level function and its arguments. It runs in a fresh process (``spawn``:
the caller has threads, and libclang or a GPU driver must not be forked mid-call), so a job that
crashes (segfault, abort, `os._exit`) or hangs yields a `JobResult` saying so and never takes the
caller down::

    runner = JobRunner(max_workers=2)
    result = runner.run(run_kernel, (path, "kernel_gemm"), timeout_s=30)
    if result.status != "ok":
        print(result.error)     # e.g. "the job exceeded its time limit of 30 s and was stopped"

`submit` returns a `concurrent.futures.Future[JobResult]`; `run` blocks. Both accept a `cancel`
callable, polled while the job runs, which stops the process when it returns True.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["ok", "error", "timeout", "crashed", "cancelled"]
_POLL_S = 0.02


@dataclass(frozen=True)
class JobResult:
    status: Status
    value: Any = None  # the job's return value when status == "ok"
    error: str = ""  # what went wrong, for a person (a traceback for "error")
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _child(conn: multiprocessing.connection.Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        value = fn(*args)
    except BaseException as e:  # the job's own failure is data for the caller
        conn.send(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
        return
    try:
        conn.send(("ok", value))
    except Exception as e:  # e.g. an unpicklable result
        conn.send(("error", f"the job's result could not be sent back: {type(e).__name__}: {e}"))


class JobRunner:
    def __init__(self, max_workers: int = 2, start_method: str = "spawn") -> None:
        self._ctx: Any = multiprocessing.get_context(start_method)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="hexplore-job")

    def submit(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        timeout_s: float = 60.0,
        cancel: Callable[[], bool] | None = None,
    ) -> Future[JobResult]:
        return self._pool.submit(self.run, fn, args, timeout_s, cancel)

    def run(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        timeout_s: float = 60.0,
        cancel: Callable[[], bool] | None = None,
    ) -> JobResult:
        start = time.perf_counter()
        receiver, sender = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(target=_child, args=(sender, fn, args), daemon=True)
        try:
            proc.start()
        except Exception as e:  # e.g. the job function cannot be pickled
            return JobResult("error", error=f"the job could not be started: {type(e).__name__}: {e}")
        finally:
            sender.close()  # ours: only the child writes; EOF on the pipe then means it died
        try:
            return self._wait(proc, receiver, start, timeout_s, cancel)
        finally:
            receiver.close()
            _stop(proc)

    def _wait(
        self,
        proc: Any,
        receiver: multiprocessing.connection.Connection,
        start: float,
        timeout_s: float,
        cancel: Callable[[], bool] | None,
    ) -> JobResult:
        while True:
            elapsed = time.perf_counter() - start
            if receiver.poll(_POLL_S):
                try:
                    status, payload = receiver.recv()
                except (EOFError, OSError):
                    proc.join(1.0)
                    return JobResult("crashed", error=_crash_message(proc.exitcode), elapsed_s=elapsed)
                if status == "ok":
                    return JobResult("ok", value=payload, elapsed_s=elapsed)
                return JobResult("error", error=payload, elapsed_s=elapsed)
            if elapsed > timeout_s:
                return JobResult(
                    "timeout",
                    error=f"the job exceeded its time limit of {timeout_s:g} s and was stopped",
                    elapsed_s=elapsed,
                )
            if cancel is not None and cancel():
                return JobResult("cancelled", error="the job was cancelled", elapsed_s=elapsed)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _stop(proc: Any) -> None:
    if proc.is_alive():
        proc.terminate()
        proc.join(2.0)
    if proc.is_alive():
        proc.kill()
        proc.join(2.0)
    if not proc.is_alive():
        proc.close()


def _crash_message(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the job's process crashed ({name})"
    return f"the job's process exited with code {exitcode} before returning a result"
