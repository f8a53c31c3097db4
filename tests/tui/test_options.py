"""The option editor (live regeneration, configurations A and B), the two-way source/code mapping
and reload on file change, driven headless with Textual's pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.syntax import Syntax
from textual.widgets import Checkbox, Input, OptionList, Static, TabbedContent

from explorer.configuration import CodeOptions, code_diff, compile_function
from tests.tui.helpers import DEMO, demo_app, settle, static_text
from tui.app import HexploreApp, screenshot_dir
from tui.code_view import CodeTabs
from tui.model import open_session
from tui.source_view import SourceView


def test_options_parse_and_describe() -> None:
    b, problems = CodeOptions.parse("cuda", "16,16", "16x8", False, True)
    assert problems == []
    assert b.describe() == "cuda, tiles 16x16, blocks 16x8, no shared memory, always offload"
    assert b.gpu_options().mapping.sizes == {None: {"tile": (16, 16), "block": (16, 8)}}
    assert b.gpu_options().mapping.tile_size == 16 and not b.gpu_options().mapping.memory.shared
    _, bad = CodeOptions.parse("tpu", "0", "1,2,3,4", True, False)
    assert bad == [
        "target: expected one of cuda, opencl, cpu, got 'tpu'",
        "tile sizes: expected positive integers like `32` or `16,16`, got '0'",
        "block sizes: at most 3 numbers (a thread block has 3 dimensions), got 4",
    ]
    assert CodeOptions().describe() == "cuda, tiles 32, blocks default, shared memory"
    assert code_diff("a\n", "a\n", "x", "y") == "(no change)"


def test_always_offload_drops_the_run_time_check() -> None:
    s = open_session(str(DEMO), DEMO.read_text())
    fa = s.function("matmul")
    assert fa is not None
    checked = compile_function(s.path, s.text, fa, CodeOptions())
    always = compile_function(s.path, s.text, fa, CodeOptions(always_offload=True))
    entry = 'extern "C" void matmul(int n, double alpha, double *C, double *A, double *B)\n{\n'
    assert checked.text.split(entry)[1].startswith("  if (!(")  # the offload check: else the CPU
    assert not always.text.split(entry)[1].startswith("  if (!(")
    assert "RuntimeOffloadCheck" in [r.name for r in checked.remarks]
    assert checked.source_map.entries and checked.text.startswith("// ===== demo_matmul_kernel.cu\n")


@pytest.mark.asyncio
async def test_changing_options_regenerates_the_code_and_diffs_two_configurations() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        await settle(app, pilot)
        before = app.query_one(CodeTabs).text_of("cuda")
        assert "__shared__" in before
        await pilot.press("7")
        await settle(app, pilot)
        assert "hexplore compile --target cuda: `matmul`" in static_text(app, "#opt-output")
        await pilot.press("a")  # remember the defaults as A
        app.query_one("#opt-shared", Checkbox).value = False
        tiles = app.query_one("#opt-tiles", Input)
        tiles.value = "16"
        tiles.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.options == CodeOptions("cuda", (16,), (), False, False)
        status = static_text(app, "#opt-status")
        assert "B (current): cuda, tiles 16, blocks default, no shared memory" in status
        assert "A: cuda, tiles 32, blocks default, shared memory" in status
        diff = static_text(app, "#opt-output")
        assert "--- A: cuda, tiles 32" in diff and "+++ B: cuda, tiles 16" in diff
        assert any(line.startswith("-") and "__shared__" in line for line in diff.splitlines())
        app.set_focus(None)  # else the digit goes into the size field
        await pilot.press("3")  # the code tabs were regenerated with B
        await settle(app, pilot)
        after = app.query_one(CodeTabs).text_of("cuda")
        assert after != before and "__shared__" not in after
        assert app.backend["matmul"].options == app.options
        await pilot.press("1")  # the Passes tab: d shows a pass under A against the same pass under B
        await settle(app, pilot)
        app.action_jump_to_pass("codegen-cuda[0]")
        await pilot.press("d")
        await settle(app, pilot)
        assert "] codegen-cuda[0]" in static_text(app, "#pass-text")
        body = app.query_one("#pass-text", Static).content.renderables[-1]  # type: ignore[union-attr]
        assert isinstance(body, Syntax)
        diff = body.code
        assert "--- codegen-cuda[0] under A: cuda, tiles 32" in diff
        assert "+++ codegen-cuda[0] under B: cuda, tiles 16" in diff
        assert any(line.startswith("-") and "__shared__" in line for line in diff.splitlines())


@pytest.mark.asyncio
async def test_bad_sizes_are_said_and_change_nothing() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("7")
        await settle(app, pilot)
        blocks = app.query_one("#opt-blocks", Input)
        blocks.value = "8,8,8,8"
        blocks.focus()
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.options == CodeOptions()
        assert "block sizes: at most 3 numbers" in static_text(app, "#opt-status")


@pytest.mark.long  # 10 s; `hexplore compile --target c` is tested elsewhere, the option editor above
@pytest.mark.asyncio
async def test_cpu_target_shows_the_tiled_c() -> None:
    app = demo_app("jacobi_2d")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("7")
        await settle(app, pilot)
        await pilot.click("#opt-target-cpu")
        await settle(app, pilot)
        assert app.options.target == "cpu"
        assert app.query_one(CodeTabs).active == "code-c"
        out = static_text(app, "#opt-output")
        assert "hexplore compile --target cpu" in out and "tiled 32" in out


@pytest.mark.long  # 24 s; the snapshot `code_line_picked` shows the same in make test
@pytest.mark.asyncio
async def test_a_picked_code_line_moves_the_source_cursor_to_its_statement() -> None:
    app = demo_app("matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("3")
        await settle(app, pilot)
        code = app.query_one(CodeTabs)
        views = app.backend["matmul"]
        s0 = views.code["cuda"].lines["S0"][0]  # C[i][j] = 0.0 (line 15)
        listing = code.listing("cuda")
        listing.focus()
        listing.cursor_line = s0
        await settle(app, pilot)
        assert app.query_one(SourceView).cursor_line == 15
        assert s0 in code.highlighted["cuda"]
        assert f"line {s0}: S0" in static_text(app, "#code-cuda-text")
        await pilot.press("down")
        assert listing.cursor_line == s0 + 1
        assert app.query_one(SourceView).colours[17] != app.query_one(SourceView).colours[15]  # S1, S0


@pytest.mark.asyncio
async def test_reload_on_file_change(tmp_path: Path) -> None:
    path = tmp_path / "demo.c"
    path.write_text(DEMO.read_text())
    app = HexploreApp(str(path), path.read_text(), function="matmul")
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        path.write_text(DEMO.read_text() + "\nvoid added(int n, double *a) {\n  for (int i = 0; i < n; i++) a[i] = 0;\n}\n")
        app.check_file()
        await settle(app, pilot)
        functions = app.query_one("#functions", OptionList)
        names = [str(functions.get_option_at_index(i).prompt) for i in range(functions.option_count)]
        assert names[-1] == "added" and app.function_name == "matmul"
        assert "added" in app.query_one(SourceView).text
        assert app.query_one("#tabs", TabbedContent).active == "passes"


def test_screenshots_go_to_downloads_or_the_current_directory(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    assert screenshot_dir(tmp_path, cwd) == cwd  # no ~/Downloads: textual's default would fail
    (tmp_path / "Downloads").mkdir()
    assert screenshot_dir(tmp_path, cwd) == tmp_path / "Downloads"
