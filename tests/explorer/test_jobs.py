"""Jobs in worker processes: results, failures, time limits, crashes and cancellation."""

from __future__ import annotations

import time

import pytest

from explorer.jobs import JobRunner
from tests.explorer import job_helpers


@pytest.fixture(scope="module")
def runner() -> JobRunner:
    return JobRunner(max_workers=2)


def test_a_job_returns_its_value(runner: JobRunner) -> None:
    result = runner.run(job_helpers.add, (2, 3), timeout_s=30)
    assert result.ok and result.value == 5


def test_a_failing_job_reports_its_exception(runner: JobRunner) -> None:
    result = runner.run(job_helpers.fail, timeout_s=30)
    assert result.status == "error"
    assert result.error.startswith("ValueError: the kernel did not compile")


def test_a_hanging_job_is_stopped_at_its_time_limit(runner: JobRunner) -> None:
    start = time.perf_counter()
    result = runner.run(job_helpers.hang, timeout_s=1.0)
    assert result.status == "timeout"
    assert result.error == "the job exceeded its time limit of 1 s and was stopped"
    assert time.perf_counter() - start < 10


def test_a_crashing_job_does_not_take_the_caller_down(runner: JobRunner) -> None:
    crash = runner.submit(job_helpers.segfault, timeout_s=30)
    early = runner.submit(job_helpers.exit_early, timeout_s=30)
    assert crash.result().status == "crashed"
    assert crash.result().error == "the job's process crashed (SIGSEGV)"
    assert early.result().status == "crashed"
    assert early.result().error == "the job's process exited with code 3 before returning a result"
    assert runner.run(job_helpers.add, (1, 1)).value == 2  # and the runner still works


def test_an_unpicklable_result_is_an_error(runner: JobRunner) -> None:
    result = runner.run(job_helpers.unpicklable, timeout_s=30)
    assert result.status == "error" and "could not be sent back" in result.error


def test_a_job_can_be_cancelled(runner: JobRunner) -> None:
    deadline = time.perf_counter() + 0.5
    result = runner.run(job_helpers.hang, timeout_s=60, cancel=lambda: time.perf_counter() > deadline)
    assert result.status == "cancelled"
