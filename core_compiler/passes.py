"""Named passes and the trace the explorer and UIs step through.

A pass is a pure function from one artifact to the next that also returns remarks. `Trace.run`
times it and records the artifact's text rendering, so the TUI can show each step and diff it
against the previous one, and the LSP can answer `hexplore/artifact` without recomputing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from core_compiler.remarks import Remark

A = TypeVar("A")


@dataclass(frozen=True)
class PassRecord:
    name: str
    text: str  # the artifact, rendered for people
    remarks: tuple[Remark, ...]
    elapsed_s: float


@dataclass
class Trace:
    records: list[PassRecord] = field(default_factory=list)

    def run(
        self, name: str, fn: Callable[[], tuple[A, list[Remark]]], render: Callable[[A], str]
    ) -> tuple[A, list[Remark]]:
        start = time.perf_counter()
        artifact, remarks = fn()
        elapsed = time.perf_counter() - start
        self.records.append(PassRecord(name, render(artifact), tuple(remarks), elapsed))
        return artifact, remarks

    def freeze(self) -> tuple[PassRecord, ...]:
        return tuple(self.records)
