"""The Options tab: the code generation configuration, edited live, and two configurations compared.

The fields are `hexplore compile`'s options (`explorer.configuration.CodeOptions`): the target
(CUDA, OpenCL, or the CPU's tiled C), tile sizes, block sizes, shared memory, always-offload. The
panel only collects them: each change (a radio or check box at once, a size field on enter or
after a pause in typing) posts `Changed`, and the app regenerates the code tabs and shows below
what `compile` generates with them, or, once a configuration is remembered as A, the diff of A's
code against the current one's (B).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Static

from explorer.configuration import TARGETS, CodeOptions

TYPING_PAUSE_S = 0.6  # a size field regenerates this long after the last key


@dataclass(frozen=True)
class Fields:
    """What the fields say, unchecked (`CodeOptions.parse` checks it)."""

    target: str
    tiles: str
    blocks: str
    shared: bool
    always: bool

    def parse(self) -> tuple[CodeOptions, list[str]]:
        return CodeOptions.parse(self.target, self.tiles, self.blocks, self.shared, self.always)


class OptionsPanel(VerticalScroll):
    class Changed(Message):
        def __init__(self, fields: Fields) -> None:
            super().__init__()
            self.fields = fields

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._typing: Timer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(classes="opt-row"):
            yield Label("target", classes="opt-label")
            with RadioSet(id="opt-target"):
                for i, t in enumerate(TARGETS):
                    yield RadioButton(t, value=i == 0, id=f"opt-target-{t}")
        with Horizontal(classes="opt-row"):
            yield Label("tiles", classes="opt-label")
            yield Input("", placeholder="32, or 32,16 per loop", id="opt-tiles")
        with Horizontal(classes="opt-row"):
            yield Label("blocks", classes="opt-label")
            yield Input("", placeholder="the mapping's choice, or 32,8", id="opt-blocks")
        yield Checkbox("shared memory", True, id="opt-shared")
        yield Checkbox("always offload (GPU code even where the CPU would win)", False, id="opt-always")
        with Horizontal(classes="opt-row"):
            yield Button("Remember as A (a)", id="opt-remember")
            yield Button("Diff A vs B (b)", id="opt-diff")
        yield Static("", id="opt-status")
        yield Static("", id="opt-output")

    def fields(self) -> Fields:
        pressed = self.query_one("#opt-target", RadioSet).pressed_button
        target = (pressed.id or "").removeprefix("opt-target-") if pressed else TARGETS[0]
        return Fields(
            target,
            self.query_one("#opt-tiles", Input).value,
            self.query_one("#opt-blocks", Input).value,
            self.query_one("#opt-shared", Checkbox).value,
            self.query_one("#opt-always", Checkbox).value,
        )

    def _changed(self) -> None:
        if self._typing is not None:
            self._typing.stop()
            self._typing = None
        self.post_message(self.Changed(self.fields()))

    @on(RadioSet.Changed, "#opt-target")
    @on(Checkbox.Changed)
    @on(Input.Submitted)
    def _field_done(self, event: Message) -> None:
        event.stop()
        self._changed()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self._typing is not None:
            self._typing.stop()
        self._typing = self.set_timer(TYPING_PAUSE_S, self._changed)

    def status(self, b: CodeOptions, a: CodeOptions | None, problems: list[str]) -> None:
        lines = Text()
        lines.append("B (current): ", style="bold")
        lines.append(b.describe() + "\n")
        lines.append("A: ", style="bold")
        lines.append(a.describe() if a else "none yet (a remembers the current configuration)")
        for p in problems:
            lines.append("\n" + p, style="bold red")
        self.query_one("#opt-status", Static).update(lines)

    def output(self, renderable: Any) -> None:
        self.query_one("#opt-output", Static).update(renderable)
