"""The UI-free parts of the terminal UI: the session, pass filters, the source-to-code map, runs."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from explorer.api import SourceMap
from explorer.running import cuda_unavailable, run_function
from tests.tui.helpers import DEMO, ROOT
from tui.backend_views import compute_backend_views
from tui.codemap import generated_lines, statement_spans
from tui.model import open_session, pass_diff, size_params, visible_passes
from tui.source_view import gutter_kinds


def test_model_helpers() -> None:
    s = open_session(str(DEMO), DEMO.read_text())
    matmul = s.function("matmul")
    assert matmul is not None
    assert size_params(matmul) == {"n": 64}  # as hexplore run and the editor
    jacobi = s.function("jacobi_2d")
    assert jacobi is not None and size_params(jacobi) == {"tsteps": 64, "n": 64}
    assert pass_diff("a\n", "a\n", "x", "y") == "(no change)"
    assert "+b" in pass_diff("a", "a\nb", "x", "y")
    scatter = s.function("scatter_add")
    assert scatter is not None
    assert gutter_kinds(scatter.remarks)[36] == "Missed"


def test_visible_passes_hides_repeated_artifacts() -> None:
    s = open_session(str(DEMO), DEMO.read_text())
    fa = s.function("matmul")
    assert fa is not None
    trace = fa.trace
    repeated = (trace[0], trace[1], dataclasses.replace(trace[1], name="again"), trace[2])
    assert visible_passes(repeated, False) == [0, 1, 2, 3]
    assert visible_passes(repeated, True) == [0, 1, 3]


def test_jacobi_statements_map_to_their_own_lines() -> None:
    s = open_session(str(DEMO), DEMO.read_text())
    fa = s.function("jacobi_2d")
    assert fa is not None
    spans = statement_spans(fa)
    assert [(sp.name, sp.line) for sp in spans] == [("S0", 26), ("S1", 29)]
    views = compute_backend_views(s.path, s.text, fa)
    for key in ("cuda", "opencl", "c", "llvm", "ptx"):
        lines = views.code[key].lines
        assert set(lines) == {"S0", "S1"} and not set(lines["S0"]) & set(lines["S1"]), key
    for key in ("cuda", "opencl", "c"):
        text = views.code[key].text.splitlines()
        assert all(text[n - 1].strip().startswith("B[") for n in views.code[key].lines["S0"])
    ir = views.code["llvm"].text.splitlines()
    assert all("!dbg" in ir[n - 1] for n in views.code["llvm"].lines["S0"])
    assert generated_lines(SourceMap(), fa) == {}


def test_runs_report_failures_as_results() -> None:
    if why := cuda_unavailable():
        gpu = run_function(str(DEMO), "matmul", "cuda", {"n": 4})
        assert (gpu.status, gpu.message) == ("error", why)
    missing = run_function(str(DEMO), "no_such_function", "cpu", {})
    assert missing.status == "error" and not missing.match


def test_cli_prints_report_when_not_a_terminal() -> None:
    for argv in (["examples/demo.c", "--function", "matmul"], ["tui", "examples/demo.c", "--function", "matmul"]):
        out = subprocess.run(
            [sys.executable, "-m", "tui.cli", *argv], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        assert out.startswith("function matmul (line 12)")


def test_analyze_does_not_import_textual() -> None:
    code = "import sys, tui.cli; sys.exit('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
