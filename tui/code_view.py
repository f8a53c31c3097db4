"""The Code tab: one inner tab per target (CUDA, OpenCL, C, LLVM IR, PTX), each highlighted.

The mapping runs both ways, from the printers' source maps (`codemap.py` says what they cover),
coloured by statement as Compiler Explorer does: every line that executes a statement has that
statement's background colour, here and in the source pane. The lines generated from the
statement under the source cursor are marked (``▶``) and scrolled to, in every target; a code
line picked with the mouse or the code cursor (focus the listing, up/down) moves the source
cursor to the statement it executes (`CodeTabs.Picked`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.console import Group
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static, TabbedContent, TabPane

from tui.backend_views import TARGETS, BackendViews, CodeView
from tui.codemap import lines_for, statement_colours, statements_at, statements_on

MARKED = Style(bold=True)
CODE_CURSOR = Style(bgcolor="grey35")


def render_code(view: CodeView, colours: Mapping[str, str], marked: tuple[int, ...], cursor: int) -> Text:
    """The listing with line numbers; a statement's lines in its colour, `marked` lines (from the
    statement under the source cursor) with ``▶``, the code cursor's line in grey."""
    highlighted = Syntax(view.text, view.target.lexer, theme="monokai").highlight(view.text)
    lines = list(highlighted.split("\n", allow_blank=True))
    if lines and not lines[-1].plain and view.text.endswith("\n"):
        lines.pop()
    owner = {n: s for s, ns in view.lines.items() for n in ns}
    keep = set(marked)
    width = len(str(len(lines)))
    out = Text(no_wrap=True, overflow="ellipsis")
    for number, line in enumerate(lines, start=1):
        mark = "▶" if number in keep else " "
        row = Text.assemble((mark, "bold yellow"), (f"{number:>{width}} ", "dim"), line)
        statement = owner.get(number)
        if statement is not None and statement in colours:
            row.stylize(Style(bgcolor=colours[statement]), 1 + width + 1)
        if number in keep:
            row.stylize(MARKED)
        if number == cursor:
            row.stylize(CODE_CURSOR)
        out.append(row)
        out.append("\n")
    return out


class CodeListing(VerticalScroll, can_focus=True):
    """One target's code: a scrollable listing with a cursor line (0: none) the user moves with
    the keys or the mouse; each move posts `Moved`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Code cursor up", show=False),
        Binding("down", "move(1)", "Code cursor down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
    ]

    cursor_line: reactive[int] = reactive(0)

    class Moved(Message):
        def __init__(self, listing: CodeListing, line: int) -> None:
            super().__init__()
            self.listing = listing
            self.line = line

    def __init__(self, key: str, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.key = key
        self.lines = 0  # of the code shown (0: a message)
        self.body = Static("", id=f"code-{key}-text", classes="code-body")

    def compose(self) -> ComposeResult:
        yield self.body

    def action_move(self, delta: int) -> None:
        if self.lines:
            self.cursor_line = min(max(1, self.cursor_line + delta if self.cursor_line else 1), self.lines)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.lines:
            return
        line = offset.y + round(self.scroll_y)  # row 0 is the header
        if 1 <= line <= self.lines:
            self.cursor_line = line

    def watch_cursor_line(self, line: int) -> None:
        if line:
            self.scroll_to_line(line, margin=3)
            self.post_message(self.Moved(self, line))

    def scroll_to_line(self, line: int, margin: int) -> None:
        """Keep `line` in view with `margin` lines above and below it where it must move."""
        top, height = round(self.scroll_y), self.scrollable_content_region.height or 1
        if line - margin < top or line + margin >= top + height:
            self.scroll_to(y=max(0, line - margin), animate=False)


class CodeTabs(Vertical):
    """Shows a function's generated code; `show` sets the code, `follow` the source cursor."""

    class Picked(Message):
        """The user picked line `line` of `key`'s code, which executes `statements`."""

        def __init__(self, key: str, line: int, statements: tuple[str, ...]) -> None:
            super().__init__()
            self.key = key
            self.line = line
            self.statements = statements

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.views: BackendViews | None = None
        self.cursor = 0
        self.highlighted: dict[str, tuple[int, ...]] = {}
        self.colours: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="code-cuda", id="code-targets"):
            for t in TARGETS:
                with TabPane(t.title, id=f"code-{t.key}"):
                    yield CodeListing(t.key, id=f"code-{t.key}-listing", classes="code-scroll")

    @property
    def active(self) -> str:
        """The shown target's pane id, `code-cuda` to `code-ptx`."""
        return self.query_one("#code-targets", TabbedContent).active

    @active.setter
    def active(self, pane: str) -> None:
        self.query_one("#code-targets", TabbedContent).active = pane

    def listing(self, key: str) -> CodeListing:
        return self.query_one(f"#code-{key}-listing", CodeListing)

    def message(self, text: str) -> None:
        self.views = None
        self.highlighted = {}
        for t in TARGETS:
            listing = self.listing(t.key)
            listing.lines = 0
            listing.set_reactive(CodeListing.cursor_line, 0)
            listing.body.styles.width = "auto"
            listing.body.update(text)

    def show(self, views: BackendViews, cursor: int) -> None:
        self.views = views
        self.highlighted = {}
        self.colours = statement_colours(views.spans)
        for t in TARGETS:
            listing = self.listing(t.key)
            listing.lines = views.code[t.key].text.count("\n") + 1 if views.code[t.key].is_code else 0
            listing.set_reactive(CodeListing.cursor_line, 0)
        self.follow(cursor, force=True)

    def follow(self, cursor: int, force: bool = False, scroll: bool = True) -> None:
        """Mark what the statement at source line `cursor` generated, in every target."""
        self.cursor = cursor
        if self.views is None:
            return
        statements = statements_at(self.views.spans, cursor)
        for t in TARGETS:
            view = self.views.code[t.key]
            lines = tuple(sorted(lines_for(statements, view.lines)))
            if force or lines != self.highlighted.get(t.key):
                self.highlighted[t.key] = lines
                self._render_view(view, statements, lines, scroll)

    def _render_view(self, view: CodeView, statements: tuple[str, ...], lines: tuple[int, ...], scroll: bool = True) -> None:
        listing = self.listing(view.target.key)
        static = listing.body
        if not view.is_code:
            static.styles.width = "auto"
            static.update(view.text)
            return
        header = _header(view, statements, lines, listing.cursor_line)
        # A fixed width spares textual measuring the whole listing on every layout.
        gutter = len(str(view.text.count("\n") + 1)) + 2
        static.styles.width = max(len(header), gutter + max(map(len, view.text.splitlines()), default=0))
        body = render_code(view, self.colours, lines, listing.cursor_line)
        static.update(Group(Text(header, style="dim"), body))
        if lines and scroll:
            listing.scroll_to(y=max(0, lines[0] - 3), animate=False)

    def on_code_listing_moved(self, event: CodeListing.Moved) -> None:
        event.stop()
        if self.views is None:
            return
        view = self.views.code[event.listing.key]
        statements = statements_on(view.lines, event.line)
        self._render_view(view, statements_at(self.views.spans, self.cursor), self.highlighted.get(view.target.key, ()), scroll=False)
        self.post_message(self.Picked(view.target.key, event.line, statements))

    def text_of(self, key: str) -> str:
        """The code of one target (for tests and the command palette)."""
        return self.views.code[key].text if self.views else ""


def _header(view: CodeView, statements: tuple[str, ...], lines: tuple[int, ...], cursor: int) -> str:
    picked = ""
    if cursor:
        owners = statements_on(view.lines, cursor)
        picked = f"  | line {cursor}: " + (" ".join(owners) if owners else "no statement (loops, copies, launches)")
    if not statements:
        return "move the source cursor onto a statement to see its code" + picked
    where = ", ".join(map(str, lines)) if lines else "none"
    return f"{' '.join(statements)} -> lines {where}" + picked
