"""`hexplore run`: reference vs optimized on the CPU (LLVM JIT) and on OpenCL (PoCL), JSON output,
and clear one-line answers when a run cannot happen or crashes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from core_compiler.runtime.cpu_variants import TILED, VARIANTS
from core_compiler.runtime.run import _failure as failure_message
from core_compiler.runtime.run import cuda_unavailable
from core_compiler.runtime.worker import WorkerError, WorkerResult, run_in_worker
from tests.conftest import KERNELS
from tui.cli import main

MM = """void mm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
void divide(int n, int m, int B[n]) {
  for (int i = 0; i < n; i++)
    B[i] = i / (n - m);
}
void trap(int n, int B[n]) {
  for (int i = 0; i < n; i++)
    B[i] = i / (n - n);
}
"""
KEYS = {"function", "device", "params", "reference_s", "optimized_s", "speedup", "match", "max_abs_error", "bytes_transferred"}


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("run") / "mm.c"
    p.write_text(MM)
    return str(p)


@pytest.mark.parametrize(("device", "moved"), [("cpu", False), ("opencl", True)])
def test_run_json_matches(path: str, device: str, moved: bool, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--device", device, "--param", "n=37", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= KEYS
    assert report["match"] is True and report["params"] == {"n": 37}
    assert report["reference_s"] > 0 and report["optimized_s"] > 0
    expected = (3 + 1) * 37 * 37 * 8 if moved else 0  # A, B, C to the device; C, written, back
    assert report["bytes_transferred"] == expected
    assert report["bytes_transferred_repeat"] is None and report["runs"] == 1


def test_repeated_runs_keep_read_only_arrays_on_the_device(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", path, "--function", "mm", "--device", "opencl", "--param", "n=37", "--repeat", "3"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    matrix = 37 * 37 * 8
    assert report["match"] is True and report["runs"] == 3
    assert (report["bytes_transferred"], report["bytes_transferred_repeat"]) == (4 * matrix, 2 * matrix)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "mm on opencl (n=37, fastest of 3 runs)" in out
    assert "moved 43.8 kB (first run), 21.9 kB per later run: read-only arrays stayed on the device" in out


def test_run_text_report(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--param", "n=5"]) == 0
    out = capsys.readouterr().out
    assert "mm on cpu (n=5)" in out and "results match" in out and "speedup" in out


@pytest.mark.skipif(not cuda_unavailable(), reason="this machine can run CUDA")
def test_cuda_without_a_gpu_says_so_in_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", path, "--function", "mm", "--device", "cuda", "--param", "n=4"])
    out = capsys.readouterr().out.strip()
    assert code == 2 and len(out.splitlines()) == 1 and "cuda" in out.lower()


def test_a_crashing_run_is_reported_not_inherited(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", path, "--function", "divide", "--param", "n=10", "--param", "m=10"])  # i / 0
    out = capsys.readouterr().out.strip()
    assert code == 1 and len(out.splitlines()) == 1 and "crashed with signal SIGFPE" in out, out
    assert "divided an integer by zero" in out and "Floating point" not in out, out  # words (issue 31)


def test_a_division_the_compiler_knows_is_by_zero_is_said_in_words(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    """gcc puts a trap (`ud2`) where it sees `i / (n - n)`: SIGILL, once said only as "Illegal
    instruction"."""
    code = main(["run", path, "--function", "trap", "--param", "n=10"])
    out = capsys.readouterr().out.strip()
    assert code == 1 and "SIGILL" in out and "integer division by a value they know is zero" in out, out


def test_an_endless_run_is_stopped_at_the_time_limit(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    start = time.perf_counter()
    code = main(["run", path, "--function", "mm", "--param", "n=4000", "--timeout", "1"])  # minutes of work
    out = capsys.readouterr().out.strip()
    assert code == 1 and ("time limit" in out.lower() or "timed out" in out.lower()), out
    assert time.perf_counter() - start < 15


def test_bad_param_is_a_clear_error(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--param", "n"]) == 2
    assert "--param expects NAME=INTEGER, got 'n'" in capsys.readouterr().err


def test_a_misspelled_param_is_named_not_silently_dropped(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--param", "N=5", "--json"]) == 0
    captured = capsys.readouterr()
    assert "`mm` has no integer parameter `N` (it has: n); --param N=... is ignored" in captured.err
    assert json.loads(captured.out)["params"] == {"n": 64}


def test_without_function_run_takes_the_one_with_loop_nests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = tmp_path / "one.c"
    one.write_text(MM.split("void divide")[0] + "int twice(int x) { return 2 * x; }\n")
    assert main(["run", str(one), "--param", "n=5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["function"] == "mm"


def test_without_function_run_names_the_candidates(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path]) == 2
    assert "run needs --function NAME: " in (err := capsys.readouterr().err) and "mm, divide, trap" in err


LU = str(KERNELS / "lu.c")  # double A[N][N], N = 64 unless defined


def test_loops_reaching_past_a_fixed_size_array_are_refused_with_the_element(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", LU, "--function", "kernel_lu", "--param", "n=300"])
    out = capsys.readouterr().out
    assert code == 1 and "index 299 of dimension 1 of `A`, which has 64 elements" in out, out
    assert ": not checkable: at n=300" in out and "NotCheckable" not in out, out  # words, not a class name


def test_defines_size_the_arrays_of_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", LU, "--function", "kernel_lu", "--param", "n=100", "-D", "N=100", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["match"] is True and report["params"] == {"n": 100}
    one_thread = report["variant"].endswith(", one thread")  # one thread won the race: a remark says so
    variant = report["variant"].removesuffix(", one thread")
    assert variant in VARIANTS
    assert (report["note"] == "") == (variant in TILED and not one_thread)


def test_default_sizes_shrink_to_fit_fixed_size_arrays(capsys: pytest.CaptureFixture[str]) -> None:
    """``double A[N][N]`` with N = 20 (PolyBench's MINI_DATASET): n is halved from 64 to 16."""
    assert main(["run", LU, "--function", "kernel_lu", "-D", "N=20", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["params"] == {"n": 16} and report["match"] is True


@pytest.mark.parametrize("timeout", ["nan", "inf", "-1", "0", "1e300", "soon"])
def test_a_timeout_that_is_no_time_limit_is_a_clear_error(path: str, timeout: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--timeout nan`` ran without a limit, ``inf`` and ``1e300`` ended in an OverflowError's
    traceback, ``-1`` was "timed out after -1 s" (issue 31)."""
    assert main(["run", path, "--function", "mm", "--param", "n=4", f"--timeout={timeout}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hexplore: error: --timeout") and "Traceback" not in err, err


@pytest.mark.parametrize("value", ["99999999999999999999", "2147483648", "-2147483649"])
def test_a_size_past_its_c_type_is_a_clear_error(path: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A size past `int` ended in islpy's TypeError traceback (issue 31)."""
    assert main(["run", path, "--function", "mm", "--param", f"n={value}"]) == 2
    err = capsys.readouterr().err
    assert f"--param n={value} does not fit `n`, an `int` (-2147483648 to 2147483647)" in err, err


def test_runs_have_a_memory_limit_by_default(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing capped a run's memory (issue 31): half the machine's, at least 4 GiB, or the
    limit asked for; none on cuda, whose driver reserves address space past any cap."""
    import core_compiler.runtime.run as run

    seen: list[int | None] = []

    def worker(*args: object, memory_limit_bytes: int | None = None, **kwargs: object) -> WorkerResult[object]:
        seen.append(memory_limit_bytes)
        return WorkerResult(None, WorkerError("exit", "stopped here"), 0.0)

    monkeypatch.setattr(run, "run_in_worker", worker)
    run.run_function(path, "mm", "cpu", {"n": 4})
    run.run_function(path, "mm", "cpu", {"n": 4}, memory_limit_bytes=8 << 30)
    run.run_function(path, "mm", "cpu", {"n": 4}, memory_limit_bytes=0)
    assert seen == [run.default_memory_limit(), 8 << 30, 0]
    assert run.default_memory_limit() >= run.MIN_MEMORY_LIMIT


@pytest.mark.parametrize(("text", "message"), [("2G", "at least 4G"), ("lots", "expects a size such as 8G")])
def test_a_memory_limit_out_of_reach_is_a_clear_error(path: str, text: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--param", "n=4", "--memory-limit", text]) == 2
    assert message in capsys.readouterr().err


def _allocate_past_the_limit() -> str:
    try:
        np.ones(8 << 30, dtype=np.uint8)  # 8 GiB under a 5 GiB limit
    except MemoryError as e:
        return failure_message(e)
    return "allocated"


def test_a_run_past_its_memory_limit_says_so() -> None:
    outcome = run_in_worker(_allocate_past_the_limit, memory_limit_bytes=5 << 30, timeout_s=60)
    assert outcome.value is not None and outcome.value.startswith(
        "the run needs more memory than its memory limit of 5.0 GiB"
    ), outcome
