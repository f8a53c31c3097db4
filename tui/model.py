"""What the terminal UI shows, as plain data: no textual here, so it is testable on its own.

The app calls these on a function selection; each view's text is computed once and cached.
Failures in the later stages (schedule, codegen) are data too: the view shows the message.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core_compiler.analysis import FileAnalysis, FunctionAnalysis, analyze_file
from core_compiler.frontend import ParseOptions, ir

# C integer types whose parameters become size inputs on the Run tab.
INT_TYPES = frozenset(
    {"int", "long", "long long", "short", "unsigned", "unsigned int", "unsigned long", "size_t", "ssize_t"}
)
DEFAULT_SIZE = 32


@dataclass(frozen=True)
class Session:
    """One opened file: its text, its analysis, and how it was parsed."""

    path: str
    text: str
    analysis: FileAnalysis
    options: ParseOptions

    @property
    def functions(self) -> tuple[FunctionAnalysis, ...]:
        return self.analysis.functions

    def function(self, name: str) -> FunctionAnalysis | None:
        return next((f for f in self.functions if f.function.name == name), None)


def open_session(path: str, text: str, options: ParseOptions | None = None, only: str | None = None) -> Session:
    opts = options or ParseOptions((), ())
    return Session(path, text, analyze_file(path, text, opts, only=only), opts)


def pass_diff(prev: str, cur: str, prev_name: str, cur_name: str) -> str:
    """Unified diff of two pass artifacts; pass artifacts differ in kind, so this is mostly additions."""
    lines = difflib.unified_diff(prev.splitlines(), cur.splitlines(), prev_name, cur_name, lineterm="")
    return "\n".join(lines) or "(no change)"


def size_params(fn: ir.Function) -> dict[str, int]:
    """The integer parameters with a default size: `matmul(int n, ...)` gives `{"n": 32}`."""
    return {
        p.name: DEFAULT_SIZE
        for p in fn.params
        if isinstance(p.type, ir.Scalar) and p.type.name in INT_TYPES
    }


@dataclass
class FunctionViews:
    """Lazily computed per-function artifacts: schedule tree JSON, OpenCL source, dependences text."""

    fa: FunctionAnalysis
    _cache: dict[str, Any] = field(default_factory=dict)

    def _scop(self) -> Any:
        if not self.fa.scops:
            raise ViewUnavailable(f"`{self.fa.function.name}` has no SCoP: nothing to schedule")
        return self.fa.scops[0]

    def _schedule(self) -> Any:
        if "schedule" not in self._cache:
            from core_compiler.schedule import compute_schedule

            sa = self._scop()
            self._cache["schedule"] = compute_schedule(sa.scop, sa.deps)
        return self._cache["schedule"]

    def schedule_tree(self) -> dict[str, Any]:
        from core_compiler.schedule import tree_json

        result: dict[str, Any] = tree_json(self._schedule().get_root())
        return result

    def opencl(self) -> str:
        if "opencl" not in self._cache:
            from core_compiler.codegen.opencl import generate_opencl
            from core_compiler.gpu import map_to_gpu

            self._cache["opencl"] = generate_opencl(map_to_gpu(self._scop().scop, self._schedule())).source
        return str(self._cache["opencl"])

    def dependences(self) -> str:
        """Per loop: parallel, reduction, or the dependences it carries."""
        if not self.fa.scops:
            return f"`{self.fa.function.name}` has no SCoP: no dependences were computed"
        out: list[str] = []
        for index, sa in enumerate(self.fa.scops):
            out.append(f"SCoP {index} (line {sa.scop.region.range.line})")
            for lp in sa.deps.loops:
                out.append("  " + loop_line(lp))
        return "\n".join(out)


def loop_line(lp: Any) -> str:
    loop = lp.loop
    head = f"{'  ' * loop.depth}loop {loop.var} (line {loop.header_range.line})"
    if not lp.carried:
        return f"{head}: parallel"
    if lp.reduction:
        return f"{head}: reduction (parallel as a reduction)"
    carried = ", ".join(f"{c.kind} {c.source}->{c.sink} on {c.array} dist {c.distance}" for c in lp.carried)
    return f"{head}: carried: {carried}"


class ViewUnavailable(Exception):
    """A view that does not apply to this function (no SCoP); its message is shown in the pane."""


@dataclass(frozen=True)
class RunOutcome:
    ok: bool
    text: str


def run_check(path: str, function: str, params: Mapping[str, int]) -> RunOutcome:
    """Run the OpenCL differential check; every failure comes back as a message, never raises."""
    from core_compiler.runtime.differential import NotCheckable, check_opencl

    start = time.perf_counter()
    try:
        result = check_opencl(path, function, dict(params), size_limits=None)
    except NotCheckable as e:
        return RunOutcome(False, f"not checkable: {e}")
    except Exception as e:  # the UI must report any backend failure, not crash
        return RunOutcome(False, f"error: {type(e).__name__}: {e}")
    elapsed = time.perf_counter() - start
    sizes = ", ".join(f"{k}={v}" for k, v in params.items()) or "no sizes"
    verdict = "match" if result.ok else "MISMATCH"
    text = (
        f"verdict: {verdict}  ({sizes}; {result.kernels} kernel(s); {elapsed * 1000:.0f} ms total)\n"
        f"{result.comparison.report()}"
    )
    return RunOutcome(result.ok, text)
