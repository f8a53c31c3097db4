"""The hexplore terminal UI: functions on the left, source in the middle, pipeline views on the right.

State lives in `reactive` attributes (`function_name`, `pass_index`, `show_diff`,
`hide_unchanged`); the `watch_*` methods render. Nothing slow runs on the UI thread: the
back-end passes and code of a function are computed in a worker thread the first time the
Passes, Schedule or Code tab is shown for it, and runs go to a worker thread too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar

from rich.console import Group
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
    Label,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    Tree,
)
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from explorer.api import ParseOptions, PassRecord
from explorer.running import RunReport, run_function
from explorer.schedule_tree import ScheduleNode
from tui.backend_views import TARGETS, BackendViews, compute_backend_views
from tui.code_view import CodeTabs
from tui.commands import HexploreCommands
from tui.help import WIDGET_KEYS, HelpScreen, binding_rows
from tui.model import (
    Session,
    dependences_text,
    open_session,
    pass_diff,
    size_params,
    visible_passes,
)
from tui.run_panel import RunPanel
from tui.run_text import DEVICES
from tui.source_view import MARKERS, SourceView

W = TypeVar("W", bound=Widget)

TABS = (("passes", "Passes"), ("schedule", "Schedule"), ("code", "Code"), ("deps", "Deps"), ("remarks", "Remarks"), ("run", "Run"))
BACKEND_TABS = frozenset({"passes", "schedule", "code"})
PASS_LEXERS = {"codegen-cuda": "cuda", "codegen-opencl": "c", "llvm-ir": "llvm", "ptx": "ptx", "ad": "c"}


class HexploreApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "hexplore"
    COMMANDS = App.COMMANDS | {HexploreCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 (App declares it without ClassVar)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
        Binding("n", "next_pass", "Next pass"),
        Binding("p", "prev_pass", "Prev pass"),
        Binding("d", "toggle_diff", "Diff"),
        Binding("u", "toggle_unchanged", "Hide unchanged"),
        Binding("r", "run", "Run"),
        Binding("c", "next_code", "Next code tab", show=False),
        Binding("f", "focus_functions", "Focus the function list", show=False),
        Binding("s", "focus_source", "Focus the source (up/down move its cursor)", show=False),
        *[Binding(str(i), f"show_tab('{t}')", f"Tab: {title}", show=False) for i, (t, title) in enumerate(TABS, 1)],
    ]

    function_name: reactive[str] = reactive("")
    pass_index: reactive[int] = reactive(0)  # into the whole trace, hidden passes included
    show_diff: reactive[bool] = reactive(False)
    hide_unchanged: reactive[bool] = reactive(False)

    def __init__(
        self,
        path: str,
        text: str,
        options: ParseOptions | None = None,
        function: str | None = None,
        show_times: bool = True,
    ) -> None:
        super().__init__()
        self.session: Session = open_session(path, text, options)
        self.initial_function = function
        self.show_times = show_times  # False for snapshots: timings are never the same twice
        self.backend: dict[str, BackendViews] = {}
        self.backend_pending: set[str] = set()
        self.last_run: RunReport | None = None
        self.sub_title = Path(path).name

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
                with TabPane("Passes", id="passes"), Vertical():
                    yield OptionList(id="pass-list")
                    with VerticalScroll(id="pass-scroll"):
                        yield Static(id="pass-text")
                with TabPane("Schedule", id="schedule"):
                    yield Tree("schedule", id="schedule-tree")
                with TabPane("Code", id="code"):
                    yield CodeTabs(id="code-tabs")
                with TabPane("Deps", id="deps"), VerticalScroll():
                    yield Static(id="deps-text")
                with TabPane("Remarks", id="remarks"):
                    yield OptionList(id="remark-list")
                with TabPane("Run", id="run"):
                    yield RunPanel(self.show_times, id="run-panel")
        yield Footer()

    def on_mount(self) -> None:
        self._q("#functions", OptionList).focus()
        self.watch(self._q(SourceView), "cursor_line", self._cursor_moved, init=False)
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
        """The main screen: queries must not look at the help screen or palette on top of it."""
        return self.screen_stack[0]

    def _q(self, selector: str | type[W], expect: type[W] | None = None) -> W:
        if expect is None:
            assert not isinstance(selector, str)
            return self._main().query_one(selector)
        assert isinstance(selector, str)
        return self._main().query_one(selector, expect)

    def _all_remarks(self) -> list[Any]:
        return self.session.analysis.all_remarks()

    def _has_syntax_errors(self) -> bool:
        return bool(self.session.analysis.remarks)

    @property
    def trace(self) -> tuple[PassRecord, ...]:
        """The analysis passes, then the back-end passes once they are computed."""
        fa = self.session.function(self.function_name)
        if fa is None:
            return ()
        back = self.backend.get(fa.function.name)
        return fa.trace + (back.passes if back else ())

    def tab_titles(self) -> tuple[tuple[str, str], ...]:
        return TABS

    def code_titles(self) -> list[tuple[str, str]]:
        return [(t.key, t.title) for t in TARGETS]

    def pass_names(self) -> list[str]:
        return [p.label for p in self.trace]

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
        self.pass_index = 0
        self._show_passes()
        self._show_backend_views()
        self._q("#deps-text", Static).update(dependences_text(fa))
        self._show_remarks()
        self._q(RunPanel).set_params(size_params(fa))
        if self._q("#tabs", TabbedContent).active in BACKEND_TABS:
            self._ensure_backend()

    # ---- back-end passes, computed in a worker ----

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id in BACKEND_TABS:
            self._ensure_backend()

    def _ensure_backend(self) -> None:
        fa = self.session.function(self.function_name)
        if fa is None or fa.function.name in self.backend or fa.function.name in self.backend_pending:
            return
        self.backend_pending.add(fa.function.name)
        self._show_passes()
        self._show_backend_views()
        self._backend_worker(fa.function.name, fa)

    @work(thread=True, group="backend")
    def _backend_worker(self, name: str, fa: Any) -> None:
        try:
            views = compute_backend_views(self.session.path, self.session.text, fa)
        except Exception as e:  # shown in the views; the worker must not take the app down
            views = BackendViews((PassRecord("backend-error", f"{type(e).__name__}: {e}\n", (), 0.0),), (), (), {}, (), (str(e),))
        self.call_from_thread(self._backend_ready, name, views)

    def _backend_ready(self, name: str, views: BackendViews) -> None:
        self.backend[name] = views
        self.backend_pending.discard(name)
        if name == self.function_name:
            self._show_passes(keep=True)
            self._show_backend_views()

    def _show_backend_views(self) -> None:
        name = self.function_name
        views = self.backend.get(name)
        code = self._q(CodeTabs)
        if views is None:
            what = "computing the back-end passes…" if name in self.backend_pending else "not computed yet"
            code.message(what)
            self._q("#schedule-tree", Tree).clear().root.set_label(Text(what))
            return
        if views.code:
            code.show(views, self._q(SourceView).cursor_line)
        else:
            code.message("\n".join(views.problems))
        self._show_schedule(views)

    # ---- passes ----

    def _visible(self) -> list[int]:
        return visible_passes(self.trace, self.hide_unchanged)

    def _show_passes(self, keep: bool = False) -> None:
        trace = self.trace
        plist = self._q("#pass-list", OptionList)
        plist.clear_options()
        plist.add_options([Option(self._pass_label(trace[i]), id=str(i)) for i in self._visible()])
        if self.function_name in self.backend_pending:
            plist.add_option(Option("… back-end passes (computing)", disabled=True))
        if not trace:
            self._q("#pass-text", Static).update("No passes ran for this function (see Remarks).")
            return
        if not keep:
            self.pass_index = 0
        self._sync_pass_list()
        self._render_pass()

    def _pass_label(self, p: PassRecord) -> str:
        return f"{p.label:<18} {p.elapsed_s * 1000:8.2f} ms" if self.show_times else p.label

    def _sync_pass_list(self) -> None:
        plist = self._q("#pass-list", OptionList)
        visible = self._visible()
        if self.pass_index in visible:
            position = visible.index(self.pass_index)
            if plist.highlighted != position:
                plist.highlighted = position

    def watch_pass_index(self, _: int) -> None:
        if self.screen_stack and self.trace:
            self._sync_pass_list()
            self._render_pass()

    def watch_show_diff(self, _: bool) -> None:
        if self.screen_stack:
            self._render_pass()

    def watch_hide_unchanged(self, _: bool) -> None:
        if not self.screen_stack or not self.trace:
            return
        visible = self._visible()
        if self.pass_index not in visible:
            self.pass_index = max(i for i in visible if i <= self.pass_index)
        self._show_passes(keep=True)

    def _render_pass(self) -> None:
        trace = self.trace
        if not trace:
            return
        i = min(self.pass_index, len(trace) - 1)
        cur = trace[i]
        visible = [v for v in self._visible() if v < i]
        if self.show_diff and visible:
            prev = trace[visible[-1]]
            body: Any = Syntax(pass_diff(prev.text, cur.text, prev.label, cur.label), "diff", theme="monokai")
        elif cur.name in PASS_LEXERS:
            body = Syntax(cur.text, PASS_LEXERS[cur.name], theme="monokai")
        else:
            body = Text(cur.text)
        took = f"  ({cur.elapsed_s * 1000:.2f} ms)" if self.show_times else ""
        header = Text(f"[{i + 1}/{len(trace)}] {cur.label}{took}", style="bold")
        self._q("#pass-text", Static).update(Group(header, body))

    @on(OptionList.OptionHighlighted, "#pass-list")
    def _pass_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        # Only the user's moves: rebuilding the list highlights its first option on its own.
        if event.option.id is not None and event.option_list.has_focus:
            self.pass_index = int(event.option.id)

    def action_next_pass(self) -> None:
        later = [i for i in self._visible() if i > self.pass_index]
        if later:
            self.pass_index = later[0]

    def action_prev_pass(self) -> None:
        earlier = [i for i in self._visible() if i < self.pass_index]
        if earlier:
            self.pass_index = earlier[-1]

    def action_jump_to_pass(self, name: str) -> None:
        names = self.pass_names()
        if name in names:
            self.hide_unchanged = self.hide_unchanged and names.index(name) in self._visible()
            self.pass_index = names.index(name)
            self.action_show_tab("passes")

    def action_toggle_diff(self) -> None:
        self.show_diff = not self.show_diff

    def action_toggle_unchanged(self) -> None:
        self.hide_unchanged = not self.hide_unchanged

    # ---- schedule tree and code ----

    def _show_schedule(self, views: BackendViews) -> None:
        tree = self._q("#schedule-tree", Tree)
        tree.clear()
        if not views.trees:
            fa = self.session.function(self.function_name)
            no_scop = fa is not None and not fa.scops
            reason = f"`{self.function_name}` has no SCoP: nothing to schedule" if no_scop else "schedule failed"
            tree.root.set_label(Text("; ".join([reason, *views.problems])))
            return
        tree.root.set_label("schedule")
        for domain in views.trees:
            add_schedule_node(tree.root, domain)
        if views.kernels:
            kernels = tree.root.add("kernels (GPU mapping)", expand=True)
            for info in views.kernels:
                node = kernels.add(Text(info.label), expand=True)
                for detail in info.details:
                    node.add_leaf(Text(detail))
        tree.root.expand_all()

    def _cursor_moved(self, line: int) -> None:
        self._q(CodeTabs).follow(line)

    def action_next_code(self) -> None:
        keys = [t.key for t in TARGETS]
        code = self._q(CodeTabs)
        current = code.active.removeprefix("code-")
        self.action_show_code(keys[(keys.index(current) + 1) % len(keys)] if current in keys else keys[0])

    def action_show_code(self, key: str) -> None:
        self.action_show_tab("code")
        self._q(CodeTabs).active = f"code-{key}"

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

    def run_params(self) -> dict[str, int]:
        return self._q(RunPanel).params()

    @on(Button.Pressed, "#run-button")
    def _run_pressed(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        if not self.function_name:
            return
        panel = self._q(RunPanel)
        params = panel.params()
        bad = [k for k, v in params.items() if v <= 0]
        if bad:
            panel.say(f"sizes must be positive integers: {', '.join(bad)}")
            return
        self.action_show_tab("run")
        panel.started(f"running `{self.function_name}` on {DEVICES[panel.device]}…")
        self._run_worker(panel.device, self.session.path, self.function_name, params)

    @work(thread=True, exclusive=True, group="run")
    def _run_worker(self, device: str, path: str, function: str, params: dict[str, int]) -> None:
        """The one run (`explorer.running.run_function`, as `hexplore run` and the editor): a
        worker process with a time limit, so a crash or a hang comes back as a report."""
        panel = self._q(RunPanel)
        stage = "building the reference with the C compiler and running both (in a worker process)"
        self.call_from_thread(panel.say, f"running `{function}` on {DEVICES[device]}: {stage}…")
        result = run_function(path, function, device, params, parse=self.session.options)
        self.call_from_thread(self._run_done, result)

    def _run_done(self, result: RunReport) -> None:
        self.last_run = result
        self._q(RunPanel).finished(result)

    # ---- misc actions ----

    def help_rows(self) -> list[tuple[str, str]]:
        own = [b for b in self.BINDINGS if not (isinstance(b, Binding) and b.key.isdigit())]
        tabs = ", ".join(title for _, title in TABS)
        return [
            *binding_rows(own),
            (f"1…{len(TABS)}", f"Tabs: {tabs}"),
            ("ctrl+p", "Command palette (all actions; `Pass: NAME` jumps)"),
            *WIDGET_KEYS,
        ]

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_rows()))

    def action_show_tab(self, tab: str) -> None:
        self._q("#tabs", TabbedContent).active = tab

    def action_focus_functions(self) -> None:
        self._q("#functions", OptionList).focus()

    def action_focus_source(self) -> None:
        self._q(SourceView).focus()


def add_schedule_node(parent: TreeNode[Any], node: ScheduleNode) -> None:
    """One node of the scheduler's tree (`explorer.schedule_tree`, what the editor shows too):
    its kind and label, then its isl text and the dependences a band's loop carries."""
    flags = ", permutable" if node.permutable else ""
    branch = parent.add(Text(f"{node.kind} {node.detail}{flags}".rstrip()), expand=True)  # Text: `[n]` is not markup
    if node.arcana:
        branch.add_leaf(Text(node.arcana))
    if node.carried:
        branch.add_leaf(Text(f"carries: {'; '.join(node.carried)}"))
    for child in node.children:
        add_schedule_node(branch, child)
