"""The hexplore terminal UI: functions on the left, source in the middle, pipeline views on the right.

State lives in `reactive` attributes (`function_name`, `pass_index`, `show_diff`); the `watch_*`
methods render. Anything slow (the OpenCL run) goes to a worker thread.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, TypeVar

from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import (
    Button,
    Footer,
    Header,
    Input,
    Label,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    Tree,
)
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from core_compiler.frontend import ParseOptions
from tui.help import HelpScreen
from tui.model import (
    FunctionViews,
    RunOutcome,
    Session,
    ViewUnavailable,
    open_session,
    pass_diff,
    run_check,
    size_params,
)
from tui.source_view import MARKERS, SourceView

W = TypeVar("W", bound=Widget)

TABS = ("passes", "schedule", "opencl", "deps", "remarks", "run")


class HexploreApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "hexplore"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
        Binding("n", "next_pass", "Next pass"),
        Binding("p", "prev_pass", "Prev pass"),
        Binding("d", "toggle_diff", "Diff"),
        Binding("r", "run", "Run"),
        Binding("f", "focus_functions", "Functions", show=False),
        *[Binding(str(i), f"show_tab('{t}')", f"Tab: {t}", show=False) for i, t in enumerate(TABS, 1)],
    ]

    function_name: reactive[str] = reactive("")
    pass_index: reactive[int] = reactive(0)
    show_diff: reactive[bool] = reactive(False)

    def __init__(
        self, path: str, text: str, options: ParseOptions | None = None, function: str | None = None
    ) -> None:
        super().__init__()
        self.session: Session = open_session(path, text, options)
        self.initial_function = function
        self.views: dict[str, FunctionViews] = {}
        self.last_run: RunOutcome | None = None
        self.sub_title = path

    # ---- layout ----

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Label("Functions", classes="pane-title")
                yield OptionList(
                    *[Option(f.function.name, id=f.function.name) for f in self.session.functions],
                    id="functions",
                )
            yield SourceView(self.session.text, self._all_remarks(), id="source")
            with TabbedContent(id="tabs", initial="remarks" if self._has_syntax_errors() else "passes"):
                with TabPane("Passes", id="passes"), Horizontal():
                    yield OptionList(id="pass-list")
                    with VerticalScroll(id="pass-scroll"):
                        yield Static(id="pass-text")
                with TabPane("Schedule", id="schedule"):
                    yield Tree("schedule", id="schedule-tree")
                with TabPane("OpenCL", id="opencl"), VerticalScroll():
                    yield Static(id="opencl-text")
                with TabPane("Deps", id="deps"), VerticalScroll():
                    yield Static(id="deps-text")
                with TabPane("Remarks", id="remarks"):
                    yield OptionList(id="remark-list")
                with TabPane("Run", id="run"), VerticalScroll():
                    yield Vertical(id="run-params")
                    yield Button("Run on OpenCL", id="run-button", variant="primary")
                    yield Static("Not run yet.", id="run-output")
        yield Footer()

    def on_mount(self) -> None:
        self._q("#functions", OptionList).focus()
        # After the first refresh, so the list's own initial highlight cannot override the choice.
        self.call_after_refresh(self._select_initial_function)

    def _select_initial_function(self) -> None:
        names = [f.function.name for f in self.session.functions]
        if self.initial_function in names:
            self.function_name = self.initial_function or ""
        elif names:
            self.function_name = names[0]
        else:
            self._show_remarks()

    # ---- helpers ----

    def _main(self) -> Screen[Any]:
        """The main screen: queries must not look at the help screen when it is on top."""
        return self.screen_stack[0]

    def _q(self, selector: str | type[W], expect: type[W] | None = None) -> W:
        if expect is None:
            assert not isinstance(selector, str)
            return self._main().query_one(selector)
        assert isinstance(selector, str)
        return self._main().query_one(selector, expect)

    def _all_remarks(self) -> list[Any]:
        return [*self.session.analysis.remarks, *(r for f in self.session.functions for r in f.remarks)]

    def _has_syntax_errors(self) -> bool:
        return bool(self.session.analysis.remarks)

    def _views(self) -> FunctionViews | None:
        fa = self.session.function(self.function_name)
        if fa is None:
            return None
        return self.views.setdefault(fa.function.name, FunctionViews(fa))

    @property
    def trace(self) -> tuple[Any, ...]:
        fa = self.session.function(self.function_name)
        return fa.trace if fa else ()

    # ---- function selection ----

    @on(OptionList.OptionHighlighted, "#functions")
    def _function_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and self.is_running:
            self.function_name = event.option.id

    def watch_function_name(self, name: str) -> None:
        fa = self.session.function(name)
        if fa is None or not self.screen_stack:
            return
        functions = self._q("#functions", OptionList)
        index = functions.get_option_index(name)
        if functions.highlighted != index:
            functions.highlighted = index
        self._q(SourceView).cursor_line = fa.function.range.line
        self._show_passes()
        self._show_schedule()
        self._show_opencl()
        self._q("#deps-text", Static).update(self._views_or_raise().dependences())
        self._show_remarks()
        self._show_run_params()

    def _views_or_raise(self) -> FunctionViews:
        views = self._views()
        assert views is not None
        return views

    # ---- passes ----

    def _show_passes(self) -> None:
        plist = self._q("#pass-list", OptionList)
        plist.clear_options()
        plist.add_options(
            [Option(f"{p.name}  {p.elapsed_s * 1000:.2f} ms", id=str(i)) for i, p in enumerate(self.trace)]
        )
        if not self.trace:
            self._q("#pass-text", Static).update("No passes ran for this function (see Remarks).")
            return
        self.pass_index = 0
        self._render_pass()
        plist.highlighted = 0

    def watch_pass_index(self, index: int) -> None:
        plist = self._q("#pass-list", OptionList)
        if self.trace and plist.highlighted != index:
            plist.highlighted = index
        self._render_pass()

    def watch_show_diff(self, _: bool) -> None:
        self._render_pass()

    def _render_pass(self) -> None:
        trace = self.trace
        if not trace:
            return
        i = min(self.pass_index, len(trace) - 1)
        cur = trace[i]
        if self.show_diff and i > 0:
            prev = trace[i - 1]
            body: Any = Syntax(pass_diff(prev.text, cur.text, prev.name, cur.name), "diff", theme="monokai")
        else:
            body = Text(cur.text)
        header = Text(f"[{i + 1}/{len(trace)}] {cur.name}  ({cur.elapsed_s * 1000:.2f} ms)", style="bold")
        from rich.console import Group

        self._q("#pass-text", Static).update(Group(header, body))

    @on(OptionList.OptionHighlighted, "#pass-list")
    def _pass_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id is not None:
            self.pass_index = int(event.option.id)

    def action_next_pass(self) -> None:
        if self.trace:
            self.pass_index = min(self.pass_index + 1, len(self.trace) - 1)

    def action_prev_pass(self) -> None:
        self.pass_index = max(self.pass_index - 1, 0)

    def action_toggle_diff(self) -> None:
        self.show_diff = not self.show_diff

    # ---- schedule tree and OpenCL ----

    def _show_schedule(self) -> None:
        tree = self._q("#schedule-tree", Tree)
        tree.clear()
        try:
            data = self._views_or_raise().schedule_tree()
        except ViewUnavailable as e:
            tree.root.set_label(str(e))
            return
        except Exception as e:  # a scheduler failure is shown, not raised
            tree.root.set_label(f"schedule failed: {e}")
            return
        tree.root.set_label("schedule")
        add_schedule_node(tree.root, data)
        tree.root.expand_all()

    def _show_opencl(self) -> None:
        static = self._q("#opencl-text", Static)
        try:
            static.update(Syntax(self._views_or_raise().opencl(), "c", theme="monokai", line_numbers=True))
        except ViewUnavailable as e:
            static.update(str(e))
        except Exception as e:  # a codegen failure is shown, not raised
            static.update(f"code generation failed: {type(e).__name__}: {e}")

    # ---- remarks ----

    def _remarks_shown(self) -> list[Any]:
        fa = self.session.function(self.function_name)
        return [*self.session.analysis.remarks, *(fa.remarks if fa else ())]

    def _show_remarks(self) -> None:
        rlist = self._q("#remark-list", OptionList)
        rlist.clear_options()
        for i, r in enumerate(self._remarks_shown()):
            mark, style = MARKERS[r.kind.value]
            label = Text.assemble(
                (mark, style), f" {r.range.line}:{r.range.col} ", (r.name, "bold"), f"  {r.message}"
            )
            rlist.add_option(Option(label, id=str(i)))

    @on(OptionList.OptionSelected, "#remark-list")
    @on(OptionList.OptionHighlighted, "#remark-list")
    def _remark_chosen(self, event: OptionList.OptionSelected | OptionList.OptionHighlighted) -> None:
        if event.option.id is None:
            return
        remark = self._remarks_shown()[int(event.option.id)]
        self._q(SourceView).cursor_line = remark.range.line

    # ---- run ----

    def _show_run_params(self) -> None:
        box = self._q("#run-params", Vertical)
        box.remove_children()
        fa = self.session.function(self.function_name)
        if fa is None:
            return
        for name, value in size_params(fa.function).items():
            box.mount(Horizontal(Label(f"{name} = ", classes="param-label"), Input(str(value), id=f"param-{name}", type="integer"), classes="param-row"))
        self._q("#run-output", Static).update("Not run yet.")

    def run_params(self) -> dict[str, int]:
        values: dict[str, int] = {}
        for inp in self._main().query("#run-params Input").results(Input):
            name = (inp.id or "").removeprefix("param-")
            try:
                values[name] = int(inp.value)
            except ValueError:
                values[name] = 0
        return values

    @on(Button.Pressed, "#run-button")
    def _run_pressed(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        if not self.function_name:
            return
        params = self.run_params()
        bad = [k for k, v in params.items() if v <= 0]
        if bad:
            self._q("#run-output", Static).update(f"sizes must be positive integers: {', '.join(bad)}")
            return
        self._q("#run-output", Static).update(f"running `{self.function_name}` on OpenCL…")
        self._q("#run-button", Button).disabled = True
        self._run_worker(self.session.path, self.function_name, params)

    @work(thread=True, exclusive=True, group="run")
    def _run_worker(self, path: str, function: str, params: dict[str, int]) -> None:
        outcome = run_check(path, function, params)
        self.call_from_thread(self._run_done, outcome)

    def _run_done(self, outcome: RunOutcome) -> None:
        self.last_run = outcome
        style = "bold green" if outcome.ok else "bold red"
        stamp = time.strftime("%H:%M:%S")
        self._q("#run-output", Static).update(Text.assemble((outcome.text, style), f"\n(at {stamp})"))
        self._q("#run-button", Button).disabled = False

    # ---- misc actions ----

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.BINDINGS))

    def action_show_tab(self, tab: str) -> None:
        self._q("#tabs", TabbedContent).active = tab

    def action_focus_functions(self) -> None:
        self._q("#functions", OptionList).focus()


def add_schedule_node(parent: TreeNode[Any], node: dict[str, Any]) -> None:
    """One tree_json node under `parent`; bands list their members with coincidence."""
    kind = node.get("kind", "?")
    detail = ""
    if kind == "band":
        flags = "permutable" if node.get("permutable") else "not permutable"
        detail = f" ({flags})"
    elif kind in ("filter", "domain", "mark"):
        detail = f": {node.get(kind) or node.get('filter') or ''}"
    branch = parent.add(f"{kind}{detail}", expand=True)
    if kind == "band":
        for member, coincident in zip(node.get("members", []), node.get("coincident", []), strict=False):
            branch.add_leaf(f"{'parallel' if coincident else 'sequential'}: {member}")
    for child in node.get("children", []):
        add_schedule_node(branch, child)
