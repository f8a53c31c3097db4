"""One run for every face (issue 25): `hexplore run`, the TUI's Run tab and the editor's
``hexplore/run`` call the same `run_function` and read the same `RunReport`, with one default
size, through the one worker process with a time limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import core_compiler.runtime.run as core_run
import explorer.commands
import lsp.server
import tui.app
import tui.model
from core_compiler.runtime.worker import WorkerResult
from explorer import running
from explorer.settings import Settings
from explorer.workspace import Workspace
from tests.conftest import KERNELS
from tui.cli import main

GEMM = KERNELS / "gemm.c"


def test_every_face_calls_the_same_run_and_the_same_defaults() -> None:
    assert running.run_function is core_run.run_function
    assert explorer.commands.run_function is core_run.run_function  # hexplore run
    assert tui.app.run_function is core_run.run_function  # the Run tab
    assert lsp.server.running is running  # hexplore/run calls running.run_function
    assert running.RunReport is core_run.RunReport and running.DEFAULT_SIZE == core_run.DEFAULT_SIZE == 64
    assert tui.model.default_params is core_run.default_params is explorer.commands.default_params


def test_the_cli_and_the_editor_get_the_same_report(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The worker is stubbed: what reaches it, and what comes back, is the same from either face."""
    calls: list[tuple[object, ...]] = []

    def fake_worker(fn: object, args: tuple[Any, ...], **kw: object) -> WorkerResult[core_run.RunReport]:
        calls.append(args[:4])
        return WorkerResult(core_run._failed(args[1], args[2], args[3], "stub", "error"), None, 0.5)

    monkeypatch.setattr(core_run, "run_in_worker", fake_worker)
    main(["run", str(GEMM), "--function", "kernel_gemm", "--device", "opencl", "--json"])
    cli = json.loads(capsys.readouterr().out)
    ws = Workspace()
    doc = ws.open_file(str(GEMM))
    fr = ws.analyze(doc.uri).function("kernel_gemm")
    assert fr is not None
    editor = running.run_function(doc.path, "kernel_gemm", "opencl", running.default_params(fr.analysis), text=doc.text)
    assert calls[0] == calls[1] == (str(GEMM), "kernel_gemm", "opencl", {"ni": 16, "nj": 16, "nk": 16})  # 64 halved to fit NI = 20
    assert json.loads(json.dumps(editor.to_json())) == cli


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_the_editor_runs_a_suite_kernel_on_the_cpu_and_on_opencl(tmp_path: Path, device: str) -> None:
    """The document's unsaved text, at the suite's sizes, on either device: a match."""
    ws = Workspace(Settings())
    doc = ws.open_file(str(GEMM))
    fr = ws.analyze(doc.uri).function("kernel_gemm")
    assert fr is not None
    sizes = running.default_params(fr.analysis, {"ni": 20, "nj": 24, "nk": 16})
    report = running.run_function(doc.path, "kernel_gemm", device, sizes, text=doc.text)
    assert (report.status, report.match, report.device, report.params) == ("ok", True, device, {"ni": 20, "nj": 24, "nk": 16}), report.message
    assert report.arrays and all(a.ok for a in report.arrays)
    assert report.reference_s > 0 and report.optimized_s > 0
    assert (report.kernels > 0) == (device == "opencl") and (report.variant != "") == (device == "cpu")


MM = """void mm(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""


@pytest.mark.parametrize("device", ["cpu", "opencl"])
def test_a_hanging_run_is_stopped_by_the_time_limit(tmp_path: Path, device: str) -> None:
    """Minutes of work at n = 3000: the worker is stopped after 1 s, on either device."""
    path = tmp_path / "mm.c"
    path.write_text(MM)
    report = running.run_function(str(path), "mm", device, {"n": 3000}, timeout_s=1.0)
    assert (report.status, report.match) == ("timeout", False) and report.message == "timed out after 1 s"
    assert report.elapsed_s < 10


def test_a_cancelled_run_stops_its_worker(tmp_path: Path) -> None:
    path = tmp_path / "mm.c"
    path.write_text(MM)
    report = running.run_function(str(path), "mm", "cpu", {"n": 3000}, timeout_s=60, cancel=lambda: True)
    assert report.status == "cancelled" and report.elapsed_s < 10


def test_an_unknown_device_is_a_report() -> None:
    report = running.run_function(str(GEMM), "kernel_gemm", "tpu", {})
    assert report.status == "error" and "use one of cpu, opencl, cuda" in report.message
