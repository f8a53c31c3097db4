"""The hexplore terminal UI: functions on the left, source in the middle, pipeline views on the right.

State lives in `reactive` attributes (`function_name`, `pass_index`, `show_diff`,
`hide_unchanged`, `show_config_diff`); the `watch_*` methods render. Nothing slow runs on the UI
thread: the back-end passes and code of a function are computed in a worker thread the first time
the Passes, Schedule or Code tab is shown for it (again when the Options tab changes the
configuration), `compile`'s code for the Options tab and runs go to worker threads too, and so
does the analysis of the file when it changed on disk (polled every second).
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
from explorer.configuration import CodeOptions, CompiledFunction, code_diff
from explorer.running import RunReport, run_function
from explorer.schedule_tree import ScheduleNode
from tui.backend_views import TARGETS, BackendViews, compiled_code, compute_backend_views
from tui.code_view import CodeTabs
from tui.codemap import line_colours, statement_spans
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
from tui.options_panel import OptionsPanel
from tui.run_panel import RunPanel
from tui.run_text import DEVICES
from tui.source_view import MARKERS, SourceView

W = TypeVar("W", bound=Widget)

TABS = (
    ("passes", "Passes"),
    ("schedule", "Schedule"),
    ("code", "Code"),
    ("deps", "Deps"),
    ("remarks", "Remarks"),
    ("run", "Run"),
    ("options", "Options"),
)
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
        Binding("a", "remember_config", "Remember the options as A"),
        Binding("b", "toggle_config_diff", "Diff A vs B"),
        Binding("c", "next_code", "Next code tab", show=False),
        Binding("f", "focus_functions", "Focus the function list", show=False),
        Binding("s", "focus_source", "Focus the source (up/down move its cursor)", show=False),
        *[Binding(str(i), f"show_tab('{t}')", f"Tab: {title}", show=False) for i, (t, title) in enumerate(TABS, 1)],
    ]

    function_name: reactive[str] = reactive("")
    pass_index: reactive[int] = reactive(0)  # into the whole trace, hidden passes included
    show_diff: reactive[bool] = reactive(False)
    hide_unchanged: reactive[bool] = reactive(False)
    show_config_diff: reactive[bool] = reactive(False)  # the Options tab shows A's code against B's

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
        # function -> the configuration and text its back-end worker computes for
        self.backend_pending: dict[str, tuple[CodeOptions, Session]] = {}
        self.last_run: RunReport | None = None
        self.sub_title = Path(path).name
        self.options = CodeOptions()  # configuration B, what the code tabs show
        self.config_a: CodeOptions | None = None
        self.compiled: dict[tuple[str, CodeOptions], CompiledFunction] = {}
        self.compile_pending: set[tuple[str, CodeOptions]] = set()
        self.backend_a: dict[tuple[str, CodeOptions], BackendViews] = {}  # the passes under A
        self.backend_a_pending: set[tuple[str, CodeOptions]] = set()
        self.code_picked = False  # the next source cursor move comes from a picked code line
        self.file_stamp = _stamp(path)

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
                with TabPane("Options", id="options"):
                    yield OptionsPanel(id="options-panel")
        yield Footer()

    def on_mount(self) -> None:
        self._q("#functions", OptionList).focus()
        self.watch(self._q(SourceView), "cursor_line", self._cursor_moved, init=False)
        # After the first refresh, so the list's own initial highlight cannot override the choice.
        self.call_after_refresh(self._select_initial_function)
        self._q(OptionsPanel).status(self.options, None, [])
        if self.file_stamp is not None:
            self.set_interval(1.0, self.check_file)

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
        source = self._q(SourceView)
        source.set_colours(line_colours(statement_spans(fa)))
        source.cursor_line = fa.function.range.line
        self.pass_index = 0
        self._show_passes()
        self._show_backend_views()
        self._q("#deps-text", Static).update(dependences_text(fa))
        self._show_remarks()
        self._q(RunPanel).set_params(size_params(fa))
        if self._q("#tabs", TabbedContent).active in BACKEND_TABS:
            self._ensure_backend()
        self._show_options_output()

    # ---- back-end passes, computed in a worker ----

    @on(TabbedContent.TabActivated, "#tabs")
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id in BACKEND_TABS:
            self._ensure_backend()
        if event.pane.id == "options":
            self._show_options_output()

    def _ensure_backend(self) -> None:
        fa = self.session.function(self.function_name)
        if fa is None or fa.function.name in self.backend or self._pending(fa.function.name):
            return
        self.backend_pending[fa.function.name] = (self.options, self.session)
        self._show_passes(keep=True)  # a new configuration keeps the pass shown
        self._show_backend_views()
        self._backend_worker(fa.function.name, fa, self.session, self.options)

    @work(thread=True, group="backend")
    def _backend_worker(self, name: str, fa: Any, session: Session, options: CodeOptions) -> None:
        try:
            views = compute_backend_views(session.path, session.text, fa, options, session.options)
        except Exception as e:  # shown in the views; the worker must not take the app down
            failed = PassRecord("backend-error", f"{type(e).__name__}: {e}\n", (), 0.0)
            views = BackendViews((failed,), (), (), {}, (), (str(e),), options)
        self.call_from_thread(self._backend_ready, name, views, session)

    def _pending(self, name: str) -> bool:
        """A worker computes `name`'s views for the current configuration and text."""
        options, session = self.backend_pending.get(name, (None, None))
        return options == self.options and session is self.session

    def _backend_ready(self, name: str, views: BackendViews, session: Session | None = None) -> None:
        session = session or self.session
        if self.backend_pending.get(name, (None, None))[1] is session and self.backend_pending[name][0] == views.options:
            del self.backend_pending[name]
        if views.options != self.options or session is not self.session:
            return  # computed for an older configuration or text: the current one has its own worker
        self.backend[name] = views
        if name == self.function_name:
            self._show_passes(keep=True)
            self._show_backend_views()

    def _show_backend_views(self) -> None:
        name = self.function_name
        views = self.backend.get(name)
        code = self._q(CodeTabs)
        if views is None:
            what = "computing the back-end passes…" if self._pending(name) else "not computed yet"
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
        if self._pending(self.function_name):
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
        if self.show_diff:
            body: Any = self._pass_diff(i, cur)
        elif cur.name in PASS_LEXERS:
            body = Syntax(cur.text, PASS_LEXERS[cur.name], theme="monokai")
        else:
            body = Text(cur.text)
        took = f"  ({cur.elapsed_s * 1000:.2f} ms)" if self.show_times else ""
        header = Text(f"[{i + 1}/{len(trace)}] {cur.label}{took}", style="bold")
        self._q("#pass-text", Static).update(Group(header, body))

    def _pass_diff(self, i: int, cur: PassRecord) -> Any:
        """The pass under configuration A against the current one (B) once A is remembered; else
        against the previous pass of its kind (another loop nest's), where there is one: passes
        of different kinds have nothing to compare."""
        a = self.config_a
        if a is not None and a != self.options:
            views = self._backend_a()
            if views is None:
                return Text("computing the passes under configuration A…", style="italic")
            fa = self.session.function(self.function_name)
            before = next((p for p in (*(fa.trace if fa else ()), *views.passes) if p.label == cur.label), None)
            if before is None:
                return Text(f"{cur.label} did not run under configuration A ({a.describe()})", style="italic")
            diff = pass_diff(before.text, cur.text, f"{cur.label} under A: {a.describe()}", f"{cur.label} under B: {self.options.describe()}")
            return Syntax(diff, "diff", theme="monokai")
        same = [v for v in self._visible() if v < i and self.trace[v].name == cur.name]
        if same:
            prev = self.trace[same[-1]]
            return Syntax(pass_diff(prev.text, cur.text, prev.label, cur.label), "diff", theme="monokai")
        return Text(
            f"Nothing to compare {cur.label} with: the passes before it make other kinds of artifact.\n"
            "To see what an option changes in each pass: remember the current options as A (a), change "
            "them in the Options tab (7), and d shows every pass under A against the same pass now.",
            style="italic",
        )

    def _backend_a(self) -> BackendViews | None:
        """The shown function's back-end passes under configuration A, computed in a worker once."""
        fa = self.session.function(self.function_name)
        if fa is None or self.config_a is None:
            return None
        key = (fa.function.name, self.config_a)
        if key not in self.backend_a and key not in self.backend_a_pending:
            self.backend_a_pending.add(key)
            self._backend_a_worker(key, fa, self.session)
        return self.backend_a.get(key)

    @work(thread=True, group="backend")
    def _backend_a_worker(self, key: tuple[str, CodeOptions], fa: Any, session: Session) -> None:
        try:
            views = compute_backend_views(session.path, session.text, fa, key[1], session.options)
        except Exception as e:  # said in the diff; the worker must not take the app down
            failed = PassRecord("backend-error", f"{type(e).__name__}: {e}\n", (), 0.0)
            views = BackendViews((failed,), (), (), {}, (), (str(e),), key[1])
        self.call_from_thread(self._backend_a_ready, key, views, session)

    def _backend_a_ready(self, key: tuple[str, CodeOptions], views: BackendViews, session: Session) -> None:
        self.backend_a_pending.discard(key)
        if session is self.session:
            self.backend_a[key] = views
            if self.show_diff and key[0] == self.function_name:
                self._render_pass()

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
            reason = f"`{self.function_name}` has no modeled loop nest: nothing to schedule" if no_scop else "schedule failed"
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
        self._q(CodeTabs).follow(line, scroll=not self.code_picked)
        self.code_picked = False

    @on(CodeTabs.Picked)
    def _code_line_picked(self, event: CodeTabs.Picked) -> None:
        """Code -> source: the source cursor goes to the statement the picked line executes."""
        views = self.backend.get(self.function_name)
        if views is None or not event.statements:
            return
        span = next((s for s in views.spans if s.name == event.statements[0]), None)
        source = self._q(SourceView)
        if span is not None and not span.line <= source.cursor_line <= span.end_line:
            self.code_picked = True
            source.cursor_line = span.line

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

    # ---- options: configuration B (the current one) and A (remembered) ----

    @on(OptionsPanel.Changed)
    def _options_changed(self, event: OptionsPanel.Changed) -> None:
        options, problems = event.fields.parse()
        panel = self._q(OptionsPanel)
        panel.status(self.options, self.config_a, problems)
        if problems or options == self.options:
            return
        self.set_options(options)

    def set_options(self, options: CodeOptions) -> None:
        """Regenerate every view with `options` (live: the shown function's at once)."""
        target_changed = options.target != self.options.target
        self.options = options
        self.backend.clear()
        self._q(OptionsPanel).status(options, self.config_a, [])
        if target_changed:
            self._q(CodeTabs).active = f"code-{TARGET_TABS[options.target]}"
        if self.function_name:
            self._ensure_backend()
            self._show_passes(keep=True)
            self._show_backend_views()
        self._show_options_output()

    def action_remember_config(self) -> None:
        self.config_a = self.options
        self._render_pass()
        self._q(OptionsPanel).status(self.options, self.config_a, [])
        self.show_config_diff = True
        self.action_show_tab("options")
        self._show_options_output()

    def action_toggle_config_diff(self) -> None:
        self.show_config_diff = not self.show_config_diff
        self.action_show_tab("options")

    def watch_show_config_diff(self, _: bool) -> None:
        if self.screen_stack:
            self._show_options_output()

    @on(Button.Pressed, "#opt-remember")
    def _remember_pressed(self) -> None:
        self.action_remember_config()

    @on(Button.Pressed, "#opt-diff")
    def _diff_pressed(self) -> None:
        self.action_toggle_config_diff()

    def _compiled_for(self, options: CodeOptions) -> CompiledFunction | None:
        """`compile`'s code of the shown function under `options`, computed in a worker once."""
        fa = self.session.function(self.function_name)
        if fa is None:
            return None
        key = (fa.function.name, options)
        if key not in self.compiled and key not in self.compile_pending:
            self.compile_pending.add(key)
            self._compile_worker(key, fa, self.session)
        return self.compiled.get(key)

    @work(thread=True, group="compile")
    def _compile_worker(self, key: tuple[str, CodeOptions], fa: Any, session: Session) -> None:
        result = compiled_code(session.path, session.text, fa, key[1])
        self.call_from_thread(self._compile_ready, key, result, session)

    def _compile_ready(self, key: tuple[str, CodeOptions], result: CompiledFunction, session: Session) -> None:
        self.compile_pending.discard(key)
        if session is self.session:
            self.compiled[key] = result
            self._show_options_output()

    def _show_options_output(self) -> None:
        if not self.function_name or self._q("#tabs", TabbedContent).active != "options":
            return
        panel = self._q(OptionsPanel)
        b = self._compiled_for(self.options)
        if self.show_config_diff and self.config_a is not None:
            a = self._compiled_for(self.config_a)
            if a is None or b is None:
                panel.output(Text("generating the code of A and B…", style="italic"))
                return
            diff = code_diff(_shown(a), _shown(b), a.options.describe(), b.options.describe())
            panel.output(Group(Text(f"`{self.function_name}`: compile's code, A against B", style="bold"), Syntax(diff, "diff", theme="monokai")))
            return
        if b is None:
            panel.output(Text(f"generating `{self.function_name}` with these options…", style="italic"))
            return
        panel.output(compiled_renderable(b, self.function_name))

    # ---- reload on change ----

    def check_file(self) -> None:
        """Reload the file when it changed on disk (polled every second)."""
        stamp = _stamp(self.session.path)
        if stamp is None or stamp == self.file_stamp:
            return
        self.file_stamp = stamp
        try:
            text = Path(self.session.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        if text != self.session.text:
            self._reload_worker(text)

    @work(thread=True, exclusive=True, group="reload")
    def _reload_worker(self, text: str) -> None:
        session = open_session(self.session.path, text, self.session.options)
        self.call_from_thread(self.reloaded, session)

    def reloaded(self, session: Session) -> None:
        """Show `session`, a new version of the file: the function list, the source and every
        view, on the same function where it still exists."""
        self.session = session
        self.backend.clear()
        self.compiled.clear()
        self.backend_a.clear()
        functions = self._q("#functions", OptionList)
        functions.clear_options()
        functions.add_options([Option(f.function.name, id=f.function.name) for f in session.functions])
        self._q(SourceView).set_text(session.text, self._all_remarks())
        names = [f.function.name for f in session.functions]
        name = self.function_name if self.function_name in names else (names[0] if names else "")
        self.sub_title = f"{Path(session.path).name} (reloaded)"
        if name and name == self.function_name:
            self.watch_function_name(name)
        else:
            self.function_name = name
        if not name:
            self._show_remarks()

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

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """Textual's screenshot (ctrl+p, "Save screenshot"), into ~/Downloads where it exists and
        else the current directory: textual's own fails when there is no ~/Downloads."""
        self.deliver_screenshot(filename, path or str(screenshot_dir(Path.home(), Path.cwd())))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_rows()))

    def action_show_tab(self, tab: str) -> None:
        self._q("#tabs", TabbedContent).active = tab

    def action_focus_functions(self) -> None:
        self._q("#functions", OptionList).focus()

    def action_focus_source(self) -> None:
        self._q(SourceView).focus()


TARGET_TABS = {"cuda": "cuda", "opencl": "opencl", "cpu": "c"}  # option target -> its code tab
COMPILE_LEXERS = {"cuda": "cuda", "opencl": "c", "cpu": "c"}


def screenshot_dir(home: Path, cwd: Path) -> Path:
    downloads = home / "Downloads"
    return downloads if downloads.is_dir() else cwd


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _shown(c: CompiledFunction) -> str:
    """A configuration's code as the diff compares it: its text, or why there is none."""
    said = [f"// {r.name}: {r.message}" for r in c.remarks]
    return "\n".join([*said, c.text or f"// nothing generated: {c.nothing}"])


def compiled_renderable(c: CompiledFunction, function: str) -> Group:
    """`compile`'s decisions and code for one function, as the Options tab shows them."""
    head = Text(f"hexplore compile --target {c.options.target}: `{function}`\n", style="bold")
    for r in c.remarks:
        head.append(f"{r.range.line}:{r.range.col} ", style="dim")
        head.append(r.name, style="bold")
        head.append(f"  {r.message}\n")
    if not c.text:
        return Group(head, Text(f"nothing generated: {c.nothing}", style="italic"))
    return Group(head, Syntax(c.text, COMPILE_LEXERS[c.options.target], theme="monokai", line_numbers=True))


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
