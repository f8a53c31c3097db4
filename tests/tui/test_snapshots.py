"""Snapshots (pytest-textual-snapshot) of the main screens at 80x24 and 160x48.

The app runs with `show_times=False`: pass and run timings are never the same twice, so they are
left out of these screens (the pilot tests check that they are shown). Update with
`pytest tests/tui/test_snapshots.py --snapshot-update` and review the SVGs in a browser.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, Input

from tests.tui.helpers import demo_app, settle
from tui.code_view import CodeTabs

SIZES = [(80, 24), (160, 48)]
Steps = Callable[[Pilot[Any]], Awaitable[None]]


async def press(pilot: Pilot[Any], *keys: str) -> None:
    await settle(pilot.app, pilot)  # type: ignore[arg-type]
    await pilot.press(*keys)
    await settle(pilot.app, pilot)  # type: ignore[arg-type]


async def source_and_remarks(pilot: Pilot[Any]) -> None:
    await press(pilot, "5", "down")


async def passes_with_diff(pilot: Pilot[Any]) -> None:
    """d on the gpu-mapping pass, under configuration A (the defaults) against B (tiles of 16)."""
    await press(pilot, "a")
    tiles = pilot.app.query_one("#opt-tiles", Input)
    tiles.value = "16"
    tiles.focus()
    await press(pilot, "enter")
    pilot.app.set_focus(None)
    await press(pilot, "1", "n", "n", "n", "n", "n", "d")


async def schedule_tree(pilot: Pilot[Any]) -> None:
    await press(pilot, "2")


async def cuda_tab(pilot: Pilot[Any]) -> None:
    await press(pilot, "3", "s", *["down"] * 5)


async def run_panel_after_cpu_run(pilot: Pilot[Any]) -> None:
    await press(pilot, "6")
    pilot.app.query_one("#param-n", Input).value = "8"
    await press(pilot, "r")


async def options_diff(pilot: Pilot[Any]) -> None:
    """The option editor: the defaults remembered as A, then tiles of 16 and no shared memory (B):
    compile's CUDA of A against B's."""
    await press(pilot, "7", "a")
    app = pilot.app
    app.query_one("#opt-shared", Checkbox).value = False
    tiles = app.query_one("#opt-tiles", Input)
    tiles.value = "16"
    tiles.focus()
    await press(pilot, "enter")
    app.set_focus(None)  # no blinking cursor in the picture
    await settle(app, pilot)  # type: ignore[arg-type]


async def code_line_picked(pilot: Pilot[Any]) -> None:
    """The mapping: statements coloured alike in the source and the CUDA, a CUDA line of S1
    picked (the source cursor follows it to line 17, the lines of S1 are marked)."""
    await press(pilot, "3")
    app = pilot.app
    listing = app.query_one(CodeTabs).listing("cuda")
    listing.focus()
    listing.cursor_line = app.backend["matmul"].code["cuda"].lines["S1"][0]  # type: ignore[attr-defined]
    await settle(app, pilot)  # type: ignore[arg-type]


async def deps_tab(pilot: Pilot[Any]) -> None:
    await press(pilot, "4")


SCREENS: dict[str, tuple[str, Steps]] = {
    "source_remarks": ("scatter_add", source_and_remarks),
    "passes_diff": ("matmul", passes_with_diff),
    "schedule_tree": ("matmul", schedule_tree),
    "cuda_tab": ("matmul", cuda_tab),
    "run_cpu": ("matmul", run_panel_after_cpu_run),
    "options_diff": ("matmul", options_diff),
    "code_line_picked": ("matmul", code_line_picked),
    "deps": ("jacobi_2d", deps_tab),
}


# every screen at 80x24 (where text gets cut) in `make test`; at 160x48 in `make test-long`
CASES = [
    pytest.param(screen, size, id=f"{screen}-{size[0]}x{size[1]}", marks=pytest.mark.long if size != SIZES[0] else ())
    for screen in SCREENS for size in SIZES
]


@pytest.mark.parametrize(("screen", "size"), CASES)
def test_screen(snap_compare: Any, screen: str, size: tuple[int, int]) -> None:
    function, steps = SCREENS[screen]
    assert snap_compare(demo_app(function, show_times=False), terminal_size=size, run_before=steps)
