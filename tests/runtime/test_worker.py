"""Worker processes: crashes, hangs and exceptions come back as clear reports within the limit."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from core_compiler.runtime import (
    BufferArg,
    Launch,
    WorkerFailed,
    layout_for_source,
    make_inputs,
    opencl_in_worker,
    reference_in_worker,
    run_in_worker,
)
from tests.runtime import worker_helpers

BAD_C = """
#include <stdio.h>
#include <stdlib.h>
void crash(int n, double *x)
{
  printf("about to crash\\n");
  fflush(stdout);
  volatile double *p = (double *)0;
  for (int i = 0; i < n; i++)
    p[i] = x[i];
}
void spin(int n, double *x)
{
  volatile int forever = 1;
  while (forever)
    x[0] += n;
}
void leave(int n, double *x) { exit(n); }
void twice(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] *= 2.0; }
"""


@pytest.fixture(scope="module")
def bad_c(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("worker") / "bad.c"
    path.write_text(BAD_C)
    return str(path)


def _run(source: str, function: str, timeout_s: float = 20.0):  # type: ignore[no-untyped-def]
    layout = layout_for_source(source, function, {"n": 3}, shapes={"x": ("n",)})
    return reference_in_worker(source, layout, make_inputs(layout), timeout_s=timeout_s)


def test_segfault_is_reported(bad_c: str) -> None:
    result = _run(bad_c, "crash")
    assert not result.ok and result.error is not None
    assert result.error.kind == "signal"
    assert "SIGSEGV" in result.error.message
    assert "about to crash" in result.output
    with pytest.raises(WorkerFailed, match="SIGSEGV"):
        result.unwrap()


def test_endless_loop_times_out(bad_c: str) -> None:
    result = _run(bad_c, "spin", timeout_s=2.0)
    assert result.error is not None and result.error.kind == "timeout"
    assert result.error.message == "timed out after 2 s"
    assert 2.0 <= result.elapsed_s < 8.0


def test_exit_and_exceptions_are_reported(bad_c: str) -> None:
    result = _run(bad_c, "leave")
    assert result.error is not None and result.error.kind == "exit"
    assert "status 3" in result.error.message
    failed = run_in_worker(int, ("not a number",))
    assert failed.error is not None and failed.error.kind == "exception"
    assert failed.error.exception_type == "ValueError"
    assert failed.error.message.startswith("raised ValueError: invalid literal")
    assert "Traceback" in (failed.error.traceback or "")


def test_values_come_back(bad_c: str) -> None:
    result = _run(bad_c, "twice")
    layout = layout_for_source(bad_c, "twice", {"n": 3})
    np.testing.assert_array_equal(result.unwrap().arrays["x"], 2.0 * make_inputs(layout)["x"])
    assert run_in_worker(os.getpid).unwrap() != os.getpid()


def test_opencl_in_worker() -> None:
    src = "__kernel void k(__global int *x) { x[get_global_id(0)] *= 3; }"
    result = opencl_in_worker(src, [Launch("k", (4,), None, (BufferArg("x"),))],
                              {"x": np.arange(4, dtype=np.int32)})  # fmt: skip
    np.testing.assert_array_equal(result.unwrap().arrays["x"], [0, 3, 6, 9])


def test_unknown_source_is_an_exception(tmp_path: Path) -> None:
    source = tmp_path / "gone.c"
    source.write_text("void f(int n, double x[n]) {}\n")
    layout = layout_for_source(str(source), "f", {"n": 1})
    source.unlink()
    result = reference_in_worker(str(source), layout, timeout_s=20)
    assert result.error is not None and result.error.exception_type == "BuildError"


# ---------------------------------------------------- the one worker every face uses (issue 25)


def test_a_python_crash_and_an_early_exit_do_not_take_the_caller_down() -> None:
    crash = run_in_worker(worker_helpers.segfault, timeout_s=30)
    assert crash.error is not None and crash.error.kind == "signal" and "SIGSEGV" in crash.error.message
    early = run_in_worker(worker_helpers.exit_early, timeout_s=30)
    assert early.error is not None and early.error.message == "exited with status 3 before returning"
    assert run_in_worker(worker_helpers.add, (1, 1)).unwrap() == 2  # and the next call still works


def test_a_hanging_call_is_stopped_at_its_time_limit() -> None:
    start = time.perf_counter()
    result = run_in_worker(worker_helpers.hang, timeout_s=1.0, cancel=lambda: False)
    assert result.error is not None and result.error.message == "timed out after 1 s"
    assert time.perf_counter() - start < 10


def test_a_call_can_be_cancelled() -> None:
    deadline = time.perf_counter() + 0.5
    result = run_in_worker(worker_helpers.hang, timeout_s=60, cancel=lambda: time.perf_counter() > deadline)
    assert result.error is not None and (result.error.kind, result.error.message) == ("cancelled", "cancelled")
    assert result.elapsed_s < 10


def test_what_cannot_be_pickled_is_an_error_not_an_exception() -> None:
    back = run_in_worker(worker_helpers.unpicklable, timeout_s=30)
    assert back.error is not None and back.error.kind == "exception" and "pickle" in back.error.message.lower()
    there = run_in_worker(lambda: 1)
    assert there.error is not None and there.error.message.startswith("could not be sent to a worker")


def test_a_memory_limit_fails_the_allocation_in_the_worker() -> None:
    result = run_in_worker(worker_helpers.allocate, (4 << 30,), timeout_s=30, memory_limit_bytes=1 << 30)
    assert result.error is not None and result.error.exception_type == "MemoryError", result.error
    assert run_in_worker(worker_helpers.allocate, (1 << 20,), timeout_s=30).unwrap() == 1 << 20
