"""Shared by the pilot and snapshot tests of the terminal UI."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static, Tree

from tui.app import HexploreApp

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "demo.c"


def demo_app(function: str | None = None, show_times: bool = True) -> HexploreApp:
    return HexploreApp(str(DEMO), DEMO.read_text(), function=function, show_times=show_times)


def rendered(renderable: Any, width: int = 200) -> str:
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def static_text(app: HexploreApp, selector: str) -> str:
    """The plain text a Static currently shows (rendered, so rich Syntax/Group bodies work too)."""
    return rendered(app.screen_stack[0].query_one(selector, Static).content)


def tree_labels(tree: Tree[Any]) -> list[str]:
    labels = []
    stack = [tree.root]
    while stack:
        node = stack.pop()
        labels.append(str(node.label))
        stack.extend(node.children)
    return labels


async def settle(app: HexploreApp, pilot: Pilot[Any]) -> None:
    """Let the workers (back-end passes, runs) finish and their results reach the screen."""
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
