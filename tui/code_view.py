"""The Code tab: one inner tab per target (CUDA, OpenCL, C, LLVM IR, PTX), each highlighted.

The lines generated from the statement under the source cursor are highlighted and scrolled to,
in every target (`codemap.py` says what the printers' source maps cover).
"""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from tui.backend_views import TARGETS, BackendViews, CodeView
from tui.codemap import lines_for, statements_at


class CodeTabs(Vertical):
    """Shows a function's generated code; `show` sets the code, `follow` the source cursor."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.views: BackendViews | None = None
        self.cursor = 0
        self.highlighted: dict[str, tuple[int, ...]] = {}

    def compose(self) -> ComposeResult:
        with TabbedContent(initial="code-cuda", id="code-targets"):
            for t in TARGETS:
                with TabPane(t.title, id=f"code-{t.key}"), VerticalScroll(classes="code-scroll"):
                    yield Static("", id=f"code-{t.key}-text", classes="code-body")

    @property
    def active(self) -> str:
        """The shown target's pane id, `code-cuda` to `code-ptx`."""
        return self.query_one("#code-targets", TabbedContent).active

    @active.setter
    def active(self, pane: str) -> None:
        self.query_one("#code-targets", TabbedContent).active = pane

    def message(self, text: str) -> None:
        self.views = None
        self.highlighted = {}
        for t in TARGETS:
            self.query_one(f"#code-{t.key}-text", Static).update(text)

    def show(self, views: BackendViews, cursor: int) -> None:
        self.views = views
        self.highlighted = {}
        self.follow(cursor, force=True)

    def follow(self, cursor: int, force: bool = False) -> None:
        """Highlight what the statement at source line `cursor` generated, in every target."""
        self.cursor = cursor
        if self.views is None:
            return
        statements = statements_at(self.views.spans, cursor)
        for t in TARGETS:
            view = self.views.code[t.key]
            lines = tuple(sorted(lines_for(statements, view.lines)))
            if force or lines != self.highlighted.get(t.key):
                self.highlighted[t.key] = lines
                self._render_view(view, statements, lines)

    def _render_view(self, view: CodeView, statements: tuple[str, ...], lines: tuple[int, ...]) -> None:
        static = self.query_one(f"#code-{view.target.key}-text", Static)
        if not view.is_code:
            static.update(view.text)
            return
        syntax = Syntax(view.text, view.target.lexer, theme="monokai", line_numbers=True, highlight_lines=set(lines))
        header = _header(view, statements, lines)
        # A fixed width spares textual measuring the whole listing on every layout.
        gutter = len(str(view.text.count("\n") + 1)) + 4
        static.styles.width = max(len(header), gutter + max(map(len, view.text.splitlines()), default=0))
        static.update(Group(Text(header, style="dim"), syntax))
        if lines:
            scroll = static.parent
            if isinstance(scroll, VerticalScroll):
                scroll.scroll_to(y=max(0, lines[0] - 3), animate=False)

    def text_of(self, key: str) -> str:
        """The code of one target (for tests and the command palette)."""
        return self.views.code[key].text if self.views else ""


def _header(view: CodeView, statements: tuple[str, ...], lines: tuple[int, ...]) -> str:
    if not statements:
        return "move the source cursor onto a statement to see its code"
    where = ", ".join(map(str, lines)) if lines else "none"
    return f"{' '.join(statements)} -> lines {where}"
