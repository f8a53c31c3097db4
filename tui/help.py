"""The `?` screen: every key binding of the app, sized to fit an 80x24 terminal."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

# Keys that belong to widgets rather than the app, listed so the screen is complete.
WIDGET_KEYS = (
    ("tab / shift+tab", "Move focus between panes"),
    ("up / down", "Move in lists and the source or code cursor line"),
    ("enter", "Select a remark: the source cursor jumps to its line"),
    ("escape", "Close this help"),
)


def binding_rows(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    rows = []
    for b in bindings:
        if isinstance(b, Binding):
            key = b.key_display or b.key
            rows.append((key, b.description))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close"),
        Binding("q", "dismiss", "Close"),
    ]

    def __init__(self, rows: Iterable[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = list(rows)

    def compose(self) -> ComposeResult:
        table = Table(title="hexplore keys", expand=True, show_edge=False)
        table.add_column("Key", style="bold cyan", no_wrap=True)
        table.add_column("Action")
        for key, action in self.rows:
            table.add_row(key, action)
        with VerticalScroll(id="help-box"):
            yield Static(table, id="help-table")
