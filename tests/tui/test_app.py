"""The terminal UI driven headless with Textual's pilot: every acceptance item of the `hexplore`
TUI, on the bundled example, with real back ends (LLVM JIT, PoCL)."""

from __future__ import annotations

import dataclasses
import re
import threading
from pathlib import Path

import pytest
from rich.console import Group
from rich.text import Text
from textual.command import CommandPalette
from textual.widgets import Input, OptionList, RadioButton, Static, TabbedContent, Tree

import tui.app
from explorer.running import cuda_unavailable, run_function
from tests.tui.helpers import DEMO, demo_app, settle, static_text, tree_labels
from tui.app import HexploreApp
from tui.code_view import CodeTabs
from tui.help import HelpScreen
from tui.source_view import SourceView

BAD = "void f(int n) {\n  for (int i = 0; i < n; i++) { x = ; }\n"
BACKEND = ["schedule[0]", "gpu-mapping[0]", "codegen-cuda[0]", "codegen-opencl[0]", "llvm-ir[0]", "ptx[0]"]


@pytest.mark.asyncio
async def test_open_file_and_step_through_all_passes_with_diffs_and_times() -> None:
    app = demo_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        functions = app.query_one("#functions", OptionList)
        functions.highlighted = functions.get_option_index("matmul")
        await settle(app, pilot)
        assert app.function_name == "matmul"
        assert app.query_one(SourceView).cursor_line == 12
        names = [p.label for p in app.trace]
        assert names == ["frontend", "scop-detect", "polyhedral-model[0]", "dependences[0]", *BACKEND]
        plist = app.query_one("#pass-list", OptionList)
        labels = [str(plist.get_option_at_index(i).prompt) for i in range(plist.option_count)]
        assert all(label.endswith(" ms") for label in labels)  # elapsed time per pass
        seen = []
        for _ in names:
            seen.append(app.trace[app.pass_index].label)
            assert f"] {seen[-1]}  (" in static_text(app, "#pass-text")
            await pilot.press("n")
        assert seen == names
        assert app.pass_index == len(names) - 1  # `n` stops at the last pass
        await pilot.press("d")  # ptx[0] has no earlier pass of its kind: d says how to get a diff
        assert "Nothing to compare ptx[0] with" in static_text(app, "#pass-text")
        await pilot.press("p")
        assert app.pass_index == len(names) - 2


@pytest.mark.asyncio
async def test_hide_unchanged_passes() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        views = app.backend["matmul"]
        # A pass whose artifact is the previous one's, as a back end that changed nothing records it.
        same = dataclasses.replace(views.passes[0], name="schedule-again")
        app._backend_ready("matmul", dataclasses.replace(views, passes=(views.passes[0], same, *views.passes[1:])))
        app.action_jump_to_pass("schedule-again[0]")
        await pilot.pause()
        plist = app.query_one("#pass-list", OptionList)
        assert plist.option_count == 11
        await pilot.press("u")
        await pilot.pause()
        assert plist.option_count == 10
        assert app.trace[app.pass_index].label == "schedule[0]"  # moved off the hidden pass
        await pilot.press("n")
        assert app.trace[app.pass_index].label == "gpu-mapping[0]"  # steps over it
        await pilot.press("u")
        assert plist.option_count == 11


@pytest.mark.asyncio
async def test_schedule_tree_and_dependences() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("2")
        await settle(app, pilot)
        assert app.query_one("#tabs", TabbedContent).active == "schedule"
        labels = tree_labels(app.query_one("#schedule-tree", Tree))
        # the scheduler's tree, the one hexplore/scheduleTree sends the editor (explorer.schedule_tree)
        assert "domain matmul#scop0" in labels and any(lbl.startswith("[n] -> { S0[i, j] : ") for lbl in labels)
        assert [
            lbl for lbl in labels if lbl.startswith("band")
        ] == ["band i (parallel), permutable", "band j (parallel), permutable", "band k (reduction), permutable"]
        assert "[n] -> { S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }" in labels
        assert "leaf S0: C[i][j] = 0.0" in labels and "[n] -> { S1[i, j, k] }" in labels
        assert "kernel0: S0, S1" in labels
        assert "A: shared memory" in labels and "C: register memory" in labels


@pytest.mark.long  # 15-30 s of CPU; `make test-long` (the snapshots show the CUDA tab)
@pytest.mark.asyncio
async def test_code_tabs_are_highlighted_and_switch() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        await settle(app, pilot)
        code = app.query_one(CodeTabs)
        expected = {
            "cuda": ("__global__ void __launch_bounds__(128) kernel0", "cuda"),
            "opencl": ("__kernel void kernel0", "c"),
            "c": ("/* hexplore: matmul#scop0, tiled 32 */", "c"),
            "llvm": ('define void @"matmul_opt"', "llvm"),
            "ptx": (".entry kernel0", "ptx"),
        }
        for key, (needle, lexer) in expected.items():
            assert code.active == f"code-{key}"
            content = app.query_one(f"#code-{key}-text", Static).content
            assert isinstance(content, Group)
            view = app.backend["matmul"].code[key]
            assert view.target.lexer == lexer
            styled = content.renderables[-1]
            assert isinstance(styled, Text) and len(styled.spans) > 10  # highlighted
            assert needle in code.text_of(key)
            assert code.text_of(key).splitlines()[0][:40] in static_text(app, f"#code-{key}-text")
            await pilot.press("c")
        assert code.active == "code-cuda"  # wrapped around


@pytest.mark.long  # 25-50 s of CPU; `make test-long`
@pytest.mark.asyncio
async def test_source_cursor_highlights_the_code_generated_from_it() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        await settle(app, pilot)
        code = app.query_one(CodeTabs)
        assert code.highlighted["cuda"] == ()  # the cursor is on the function's first line
        await pilot.press("s", *["down"] * 5)  # line 17: C[i][j] += alpha * A[i][k] * B[k][j];
        assert app.query_one(SourceView).cursor_line == 17
        for key in ("cuda", "opencl", "c"):
            lines = code.text_of(key).splitlines()
            hit = [lines[n - 1] for n in code.highlighted[key]]
            assert hit and all(re.match(r"\s*\w*C\[.*\] \+= \(\(alpha \* ", h) for h in hit), (key, hit)
        assert code.highlighted["llvm"] and code.highlighted["ptx"]  # their debug locations
        ir = code.text_of("llvm").splitlines()
        assert all("!dbg" in ir[n - 1] for n in code.highlighted["llvm"])
        assert "S1 -> lines" in static_text(app, "#code-cuda-text")
        assert "S1 -> lines" in static_text(app, "#code-ptx-text")
        await pilot.press("up", "up")  # line 15: C[i][j] = 0.0;
        lines = code.text_of("opencl").splitlines()
        marked = [lines[n - 1].strip() for n in code.highlighted["opencl"]]
        # a thread's 16 points, unrolled, in the full-tile code and in the partial-tile code
        assert len(marked) == 32 and all(m.startswith("private_C[") and m.endswith("] = 0.0;") for m in marked), marked


@pytest.mark.asyncio
async def test_dependences_per_loop() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("4")
        await pilot.pause()
        deps = static_text(app, "#deps-text")
        assert "loop nest 1 (lines 13-18)" in deps
        assert "for i (line 13): parallel" in deps
        assert "for k (line 16): carries only a reduction" in deps
        assert "(0" not in deps  # distances in words, not Python tuples


@pytest.mark.asyncio
async def test_run_on_cpu_shows_correct_verdict_times_and_chart(monkeypatch: pytest.MonkeyPatch) -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        inp = app.query_one("#param-n", Input)
        assert inp.value == "64"  # hexplore run's default size
        inp.value = "8"
        await settle(app, pilot)
        gate = threading.Event()  # holds the run in its worker thread: the UI must go on meanwhile
        monkeypatch.setattr(tui.app, "run_function", lambda *a, **k: gate.wait(60) and run_function(*a, **k))
        await pilot.click("#run-button")
        await pilot.pause()
        assert app.query_one("#run-progress").display and app.query_one("#run-button").disabled
        await pilot.press("1")
        assert app.query_one("#tabs", TabbedContent).active == "passes"
        assert app.last_run is None
        gate.set()
        await settle(app, pilot)
        assert app.last_run is not None and app.last_run.match, app.last_run
        assert app.last_run.device == "cpu"
        out = static_text(app, "#run-output")
        assert "verdict: match  (CPU (LLVM JIT); n=8)" in out
        for label in ("original (cc -O2)", "hexplore (LLVM)"):
            assert label in out and " ms" in out.split(label)[1].splitlines()[0]
        assert "speedup vs original: " in out and "transferred: none (host memory)" in out
        assert app.query_one("#tabs", TabbedContent).active == "passes"  # the run did not pull focus back
        assert app.query_one("#run-chart").display
        assert not app.query_one("#run-progress").display


@pytest.mark.asyncio
async def test_run_on_opencl_reports_bytes_and_gpu_is_disabled() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("6")
        await pilot.pause()
        app.query_one("#param-n", Input).value = "8"
        await pilot.click("#dev-opencl")
        await pilot.press("r")
        await settle(app, pilot)
        assert app.last_run is not None and app.last_run.match, app.last_run
        assert app.last_run.bytes_transferred == (3 + 1) * 8 * 8 * 8  # A, B, C of doubles in; C, written, out
        assert "transferred: 2,048 bytes" in static_text(app, "#run-output")
        gpu = app.query_one("#dev-cuda", RadioButton)
        why = cuda_unavailable()
        assert gpu.disabled == bool(why) and (not why or "GPU (CUDA): " in str(gpu.label))  # and says why


@pytest.mark.asyncio
async def test_failing_runs_show_their_message() -> None:
    app = demo_app("scatter_add")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await settle(app, pilot)
        assert app.last_run is not None and app.last_run.status == "not-checkable"
        out = static_text(app, "#run-output")
        assert "verdict: not checkable" in out and "has 0 loop nests hexplore models" in out
        app.query_one("#param-n", Input).value = "0"
        await pilot.press("r")
        assert "sizes must be positive integers: n" in static_text(app, "#run-output")
        await pilot.press("2")
        await settle(app, pilot)
        assert "no modeled loop nest" in str(app.query_one("#schedule-tree", Tree).root.label)


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
async def test_file_with_syntax_errors_opens_and_shows_them(tmp_path: Path) -> None:
    bad = tmp_path / "bad.c"
    bad.write_text(BAD)
    app = HexploreApp(str(bad), BAD)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert app.query_one("#tabs", TabbedContent).active == "remarks"
        rlist = app.query_one("#remark-list", OptionList)
        prompts = [str(rlist.get_option_at_index(i).prompt) for i in range(rlist.option_count)]
        assert any("SyntaxError" in p and "expected expression" in p for p in prompts)
        assert any("FunctionHasErrors" in p for p in prompts)
        assert "✗" in static_text(app, "#source-body").splitlines()[1]  # the gutter marks line 2


@pytest.mark.long  # 25-50 s of CPU; `make test-long`
@pytest.mark.asyncio
async def test_command_palette_jumps_to_a_pass_by_name() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"Pass: gpu-mapping")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.trace[app.pass_index].label == "gpu-mapping[0]"
        await pilot.press("ctrl+p", *"Open code: PTX")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#tabs", TabbedContent).active == "code"
        assert app.query_one(CodeTabs).active == "code-ptx"


@pytest.mark.asyncio
async def test_help_screen_lists_every_binding_and_fits_80x24() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = [k for k, _ in app.screen.rows]
        for key in ("?", "q", "n", "p", "d", "u", "r", "a", "b", "c", "f", "s", "1…7", "ctrl+p"):
            assert key in keys
        box = app.screen.query_one("#help-box")
        assert box.region.height <= 24 and box.region.width <= 80
        assert box.max_scroll_y == 0  # everything visible without scrolling
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


def test_demo_exists() -> None:
    assert DEMO.is_file()
