"""The Run tab: device, sizes, a Run button, progress, the verdict, times and a bar chart.

The panel only collects choices and shows results; the app runs `explorer.running.run_function`
(the run `hexplore run` and the editor make) in a worker thread and calls `started`, `progress` and `finished`.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, ProgressBar, RadioButton, RadioSet, Static
from textual_plotext import PlotextPlot

from explorer.running import RunReport, cuda_unavailable
from tui.run_text import DEVICES, summary, times


class RunPanel(VerticalScroll):
    def __init__(self, show_times: bool = True, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.show_times = show_times

    def compose(self) -> ComposeResult:
        with RadioSet(id="device"):
            yield RadioButton(DEVICES["cpu"], value=True, id="dev-cpu")
            yield RadioButton(DEVICES["opencl"], id="dev-opencl")
            why = cuda_unavailable()
            yield RadioButton(f"{DEVICES['cuda']}: {why}" if why else DEVICES["cuda"], id="dev-cuda", disabled=bool(why))
        yield Vertical(id="run-params")
        yield Button("Run", id="run-button", variant="primary")
        yield ProgressBar(total=None, show_eta=False, show_percentage=False, id="run-progress")
        yield Static("Not run yet.", id="run-output")
        yield PlotextPlot(id="run-chart")

    def on_mount(self) -> None:
        self.query_one("#run-progress").display = False
        self.query_one("#run-chart").display = False

    @property
    def device(self) -> str:
        pressed = self.query_one("#device", RadioSet).pressed_button
        return (pressed.id or "dev-cpu").removeprefix("dev-") if pressed else "cpu"

    def set_params(self, params: Mapping[str, int]) -> None:
        box = self.query_one("#run-params", Vertical)
        box.remove_children()
        for name, value in params.items():
            row = Horizontal(
                Label(f"{name} =", classes="param-label"),
                Input(str(value), id=f"param-{name}", type="integer"),
                classes="param-row",
            )
            box.mount(row)
        self.query_one("#run-output", Static).update("Not run yet.")
        self.query_one("#run-chart").display = False

    def params(self) -> dict[str, int]:
        values: dict[str, int] = {}
        for inp in self.query("#run-params Input").results(Input):
            name = (inp.id or "").removeprefix("param-")
            try:
                values[name] = int(inp.value)
            except ValueError:
                values[name] = 0
        return values

    def say(self, text: str) -> None:
        self.query_one("#run-output", Static).update(text)

    def started(self, what: str) -> None:
        self.query_one("#run-button", Button).disabled = True
        self.query_one("#run-progress").display = True
        self.query_one("#run-chart").display = False
        self.say(what)

    def finished(self, result: RunReport) -> None:
        self.query_one("#run-button", Button).disabled = False
        self.query_one("#run-progress").display = False
        style = "bold green" if result.match else "bold red"
        self.say(Text(summary(result, self.show_times), style=style))  # type: ignore[arg-type]
        self._chart(result)
        self.call_after_refresh(self.query_one("#run-output").scroll_visible, animate=False)

    def _chart(self, result: RunReport) -> None:
        chart = self.query_one("#run-chart", PlotextPlot)
        shown = times(result)
        chart.display = bool(shown) and self.show_times
        if not chart.display:
            return
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        labels = [label for label, _ in shown]
        plt.bar(labels, [s * 1000 for _, s in shown], orientation="horizontal", width=0.4)
        plt.title("time (ms)")
        chart.refresh()
