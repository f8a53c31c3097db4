"""The source pane: line numbers, C highlighting, a remark gutter and a cursor line.

tree-sitter-c is not installed with textual, so TextArea cannot highlight C; rich's Syntax
(pygments) can, and rendering the lines ourselves lets the gutter carry one marker per line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from explorer.api import Remark

# Worst kind wins the gutter: a Missed remark outranks an Analysis one on the same line.
MARKERS = {"Missed": ("✗", "bold red"), "Passed": ("✓", "bold green"), "Analysis": ("●", "cyan")}
RANK = {"Missed": 0, "Passed": 1, "Analysis": 2}
CURSOR = Style(bgcolor="grey37")


def legend() -> Text:
    """What the gutter's marks mean: `✗ missed  ✓ passed  ● analysis` (the source pane's title)."""
    return Text("  ").join(Text.assemble((MARKERS[k][0], MARKERS[k][1]), f" {k.lower()}") for k in RANK)


def gutter_kinds(remarks: Iterable[Remark]) -> dict[int, str]:
    """Line → the remark kind shown there, e.g. `{36: "Missed", 13: "Analysis"}`."""
    kinds: dict[int, str] = {}
    for r in remarks:
        kind = r.kind.value
        old = kinds.get(r.range.line)
        if old is None or RANK[kind] < RANK[old]:
            kinds[r.range.line] = kind
    return kinds


def render_source(text: str, kinds: dict[int, str], cursor: int, colours: Mapping[int, str] | None = None) -> Text:
    """The lines with the remark gutter and line numbers; a line of a modeled statement in the
    statement's colour (`colours`, as its generated code in the Code tab), the cursor's in grey."""
    lines = Syntax(text, "c", theme="monokai").highlight(text).split("\n")
    width = len(str(len(lines)))
    colours = colours or {}
    out = Text(no_wrap=True, overflow="ellipsis")
    for number, line in enumerate(lines, start=1):
        mark, style = MARKERS.get(kinds.get(number, ""), (" ", ""))
        row = Text.assemble((mark, style), (f" {number:>{width}} ", "dim"), line)
        if number in colours:
            row.stylize(Style(bgcolor=colours[number]), width + 3)
        if number == cursor:
            row.stylize(CURSOR)
        out.append(row)
        out.append("\n")
    return out


class SourceView(VerticalScroll):
    """Scrollable, read-only source with a movable cursor line (1-based).

    Focused, up/down/page keys move the cursor; the app follows it (the Code tab highlights the
    code generated from the statement under it)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Cursor up", show=False),
        Binding("down", "move(1)", "Cursor down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
    ]

    cursor_line: reactive[int] = reactive(1)

    def __init__(self, text: str, remarks: Iterable[Remark], **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.text = text
        self.kinds = gutter_kinds(remarks)
        self.colours: dict[int, str] = {}  # line -> its statement's colour (`codemap.line_colours`)
        self.body = Static(id="source-body")

    def compose(self) -> ComposeResult:
        yield self.body

    def on_mount(self) -> None:
        # The gutter's legend; a modeled statement's lines have its colour in the Code tab too.
        self.border_title = legend()
        self._render_lines()

    def watch_cursor_line(self, line: int) -> None:
        if self.is_mounted:
            self._render_lines()
            # Keep a few lines of context above the cursor.
            self.scroll_to(y=max(0, line - 4), animate=False)

    def action_move(self, delta: int) -> None:
        last = self.text.count("\n") + 1
        self.cursor_line = min(max(1, self.cursor_line + delta), last)

    def set_colours(self, colours: dict[int, str]) -> None:
        if colours != self.colours:
            self.colours = colours
            if self.is_mounted:
                self._render_lines()

    def set_text(self, text: str, remarks: Iterable[Remark]) -> None:
        """Another version of the file (reloaded from disk)."""
        self.text = text
        self.kinds = gutter_kinds(remarks)
        self.colours = {}
        self.cursor_line = min(self.cursor_line, text.count("\n") + 1)
        if self.is_mounted:
            self._render_lines()

    def _render_lines(self) -> None:
        self.body.update(render_source(self.text, self.kinds, self.cursor_line, self.colours))
