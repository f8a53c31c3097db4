"""The command palette (ctrl+p): the app's actions, and "Pass: NAME" to jump to a pass by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from tui.app import HexploreApp


def app_commands(app: HexploreApp) -> list[tuple[str, str, Callable[[], object]]]:
    """(title, help, callback) for every command; the pass list is the current function's."""
    fixed: list[tuple[str, str, Callable[[], object]]] = [
        ("Next pass", "step to the next pass (n)", app.action_next_pass),
        ("Previous pass", "step to the previous pass (p)", app.action_prev_pass),
        ("Toggle diff", "show the pass's diff against the previous one (d)", app.action_toggle_diff),
        ("Toggle hide unchanged passes", "hide passes whose artifact equals the previous one (u)", app.action_toggle_unchanged),
        ("Run", "run the function on the chosen device (r)", app.action_run),
        ("Next code tab", "CUDA, OpenCL, C, LLVM IR, PTX (c)", app.action_next_code),
        ("Remember the options as A", "configuration A, to diff the current one (B) against (a)", app.action_remember_config),
        ("Diff A vs B", "compile's code under configuration A against the current one (b)", app.action_toggle_config_diff),
        ("Help", "all key bindings (?)", app.action_help),
    ]
    tabs = [(f"Open tab: {title}", f"key {i}", _bind(app.action_show_tab, tab)) for i, (tab, title) in enumerate(app.tab_titles(), 1)]
    code = [(f"Open code: {title}", "Code tab", _bind(app.action_show_code, key)) for key, title in app.code_titles()]
    passes = [(f"Pass: {name}", "jump to this pass", _bind(app.action_jump_to_pass, name)) for name in app.pass_names()]
    return [*fixed, *tabs, *code, *passes]


def _bind(action: Callable[[str], object], arg: str) -> Callable[[], object]:
    return lambda: action(arg)


class HexploreCommands(Provider):
    def _app(self) -> HexploreApp:
        from tui.app import HexploreApp

        assert isinstance(self.app, HexploreApp)
        return self.app

    async def discover(self) -> Hits:
        for title, help_text, callback in app_commands(self._app()):
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in app_commands(self._app()):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, text=title, help=help_text)
