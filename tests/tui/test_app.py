"""The terminal UI driven headless with Textual's pilot: pass stepping, schedule tree, OpenCL, runs."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import OptionList, Static, TabbedContent, Tree

from tui.app import HexploreApp
from tui.help import HelpScreen
from tui.model import open_session, pass_diff, size_params
from tui.source_view import SourceView, gutter_kinds

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo.c"
BAD = "void f(int n) {\n  for (int i = 0; i < n; i++) { x = ; }\n"


def demo_app(function: str | None = None) -> HexploreApp:
    return HexploreApp(str(DEMO), DEMO.read_text(), function=function)


def static_text(app: HexploreApp, selector: str) -> str:
    """The plain text a Static currently shows (rendered, so rich Syntax/Group bodies work too)."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(app.screen_stack[0].query_one(selector, Static).content)
    return console.export_text()


async def wait_run(app: HexploreApp, pilot: object) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()  # type: ignore[attr-defined]


@pytest.mark.asyncio
async def test_step_through_matmul_passes_schedule_and_opencl() -> None:
    app = demo_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        functions = app.query_one("#functions", OptionList)
        functions.highlighted = functions.get_option_index("matmul")
        await pilot.pause()
        assert app.function_name == "matmul"
        assert app.query_one(SourceView).cursor_line == 12
        names = [p.name for p in app.trace]
        assert names[0] == "frontend" and any(n.startswith("dependences") for n in names)
        seen = []
        for _ in names:
            seen.append(app.trace[app.pass_index].name)
            assert f"] {seen[-1]}" in static_text(app, "#pass-text")
            await pilot.press("n")
        assert seen == names
        assert app.pass_index == len(names) - 1  # `n` stops at the last pass
        await pilot.press("d")
        assert "+++ " + names[-1] in static_text(app, "#pass-text")
        await pilot.press("p")
        assert app.pass_index == len(names) - 2

        await pilot.press("2")
        await pilot.pause()
        assert app.query_one("#tabs", TabbedContent).active == "schedule"
        tree = app.query_one("#schedule-tree", Tree)
        labels = []
        stack = [tree.root]
        while stack:
            node = stack.pop()
            labels.append(str(node.label))
            stack.extend(node.children)
        assert any(lbl.startswith("band (permutable)") for lbl in labels)
        assert any(lbl.startswith("parallel:") for lbl in labels)
        assert any(lbl.startswith("sequential:") for lbl in labels)

        await pilot.press("3")
        await pilot.pause()
        assert app.query_one("#tabs", TabbedContent).active == "opencl"
        assert "__kernel void kernel0" in static_text(app, "#opencl-text")

        await pilot.press("4")
        await pilot.pause()
        deps = static_text(app, "#deps-text")
        assert "loop i (line 13): parallel" in deps
        assert "loop k (line 16): reduction" in deps


@pytest.mark.asyncio
async def test_run_matmul_on_opencl_matches() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        inp = app.query_one("#param-n")
        assert inp.value == "32"  # type: ignore[attr-defined]
        inp.value = "8"  # type: ignore[attr-defined]
        await pilot.click("#run-button")
        await wait_run(app, pilot)
        assert app.last_run is not None and app.last_run.ok, app.last_run
        assert "verdict: match" in static_text(app, "#run-output")
        assert "n=8" in static_text(app, "#run-output")


@pytest.mark.asyncio
async def test_run_of_uncheckable_function_shows_message() -> None:
    app = demo_app("scatter_add")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await wait_run(app, pilot)
        assert app.last_run is not None and not app.last_run.ok
        assert "not checkable" in static_text(app, "#run-output")
        assert "0 SCoPs" in static_text(app, "#run-output")
        # The views that need a SCoP say so instead of failing.
        assert "no SCoP" in str(app.query_one("#schedule-tree", Tree).root.label)


@pytest.mark.asyncio
async def test_remark_selection_moves_source_cursor() -> None:
    app = demo_app("scatter_add")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("5")
        rlist = app.query_one("#remark-list", OptionList)
        rlist.focus()
        rlist.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(SourceView).cursor_line == 36  # y[idx[i]]


@pytest.mark.asyncio
async def test_syntax_errors_are_shown_in_remarks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text(BAD)
    app = HexploreApp(str(bad), BAD)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.query_one("#tabs", TabbedContent).active == "remarks"
        rlist = app.query_one("#remark-list", OptionList)
        prompts = [str(rlist.get_option_at_index(i).prompt) for i in range(rlist.option_count)]
        assert any("SyntaxError" in p and "expected expression" in p for p in prompts)
        assert any("FunctionHasErrors" in p for p in prompts)


@pytest.mark.asyncio
async def test_help_screen_fits_80x24() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = [k for k, _ in app.screen.rows]
        for key in ("?", "q", "n", "p", "d", "r", "1", "6"):
            assert key in keys
        box = app.screen.query_one("#help-box")
        assert box.region.height <= 24 and box.region.width <= 80
        assert box.max_scroll_y == 0  # everything visible without scrolling
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


def test_model_helpers() -> None:
    s = open_session(str(DEMO), DEMO.read_text())
    matmul = s.function("matmul")
    assert matmul is not None
    assert size_params(matmul.function) == {"n": 32}
    jacobi = s.function("jacobi_2d")
    assert jacobi is not None and size_params(jacobi.function) == {"tsteps": 32, "n": 32}
    assert pass_diff("a\n", "a\n", "x", "y") == "(no change)"
    assert "+b" in pass_diff("a", "a\nb", "x", "y")
    scatter = s.function("scatter_add")
    assert scatter is not None
    assert gutter_kinds(scatter.remarks)[36] == "Missed"


def test_cli_prints_report_when_not_a_terminal() -> None:
    for argv in (["examples/demo.c", "--function", "matmul"], ["tui", "examples/demo.c", "--function", "matmul"]):
        out = subprocess.run(
            [sys.executable, "-m", "tui.cli", *argv], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        assert out.startswith("function matmul (line 12)")


def test_analyze_does_not_import_textual() -> None:
    code = "import sys, tui.cli; sys.exit('textual' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
