"""`hexplore run`: reference vs optimized on the CPU (LLVM JIT) and on OpenCL (PoCL), JSON output,
and clear one-line answers when a run cannot happen or crashes."""

from __future__ import annotations

import json

import pytest

from tui.cli import main

MM = """void mm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
#define N 8
void fixed(int n, double A[N]) {
  for (int i = 0; i < n; i++)
    A[i] = 2 * A[i];
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
    expected = 3 * 37 * 37 * 8 * 2 if moved else 0  # A, B, C to the device and back
    assert report["bytes_transferred"] == expected


def test_run_text_report(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--param", "n=5"]) == 0
    out = capsys.readouterr().out
    assert "mm on cpu (n=5)" in out and "results match" in out and "speedup" in out


def test_cuda_without_a_gpu_says_so_in_one_line(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", path, "--function", "mm", "--device", "cuda", "--param", "n=4"])
    out = capsys.readouterr().out.strip()
    assert code == 2 and len(out.splitlines()) == 1 and "cuda" in out.lower()


def test_a_crashing_run_is_reported_not_inherited(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    # A is declared with 8 elements; n = 100000 writes far past its end.
    code = main(["run", path, "--function", "fixed", "--param", "n=100000"])
    out = capsys.readouterr().out
    assert code == 1 and ("crashed" in out or "differ" in out.lower() or "Error" in out)


def test_bad_param_is_a_clear_error(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path, "--function", "mm", "--param", "n"]) == 2
    assert "--param expects NAME=INTEGER, got 'n'" in capsys.readouterr().err


def test_run_needs_a_function(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", path]) == 2
    assert "run needs --function" in capsys.readouterr().err
