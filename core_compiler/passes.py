"""Passes as data, and the trace the explorer and UIs step through.

A pass is a frozen dataclass with a class-level `name` and its options as fields (xDSL's
`ModulePass`): `run(input) -> (output, remarks)` is pure, `render(output)` is the artifact as
people read it. `Trace.run` is the one driver step: it times the pass, records its name, the SCoP
it ran on and its options as fields (no UI parses a name back), and calls the trace's `on_pass`
hook between passes (what a pass viewer needs). `core_compiler.pipeline` declares the registry and
the named pipelines.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeVar

from core_compiler.remarks import Remark

In = TypeVar("In", contravariant=True)
Out = TypeVar("Out")
A = TypeVar("A")
B = TypeVar("B")


class Pass(Protocol[In, Out]):
    name: ClassVar[str]

    def run(self, unit: In) -> tuple[Out, list[Remark]]: ...

    def render(self, artifact: Out) -> str: ...


@dataclass(frozen=True)
class PassRecord:
    name: str  # the pass's registered name (`gpu-mapping`)
    text: str  # the artifact, rendered for people
    remarks: tuple[Remark, ...]
    elapsed_s: float
    scop: int | None = None  # the SCoP it ran on; None for a pass over the whole function
    options: tuple[tuple[str, str], ...] = ()  # the pass's option fields, as text

    @property
    def label(self) -> str:
        """``gpu-mapping[0]``: how the UIs title a record (never parsed back)."""
        return self.name if self.scop is None else f"{self.name}[{self.scop}]"


def pass_options(p: object) -> tuple[tuple[str, str], ...]:
    if not dataclasses.is_dataclass(p):
        return ()
    return tuple((f.name, repr(getattr(p, f.name))) for f in dataclasses.fields(p) if f.repr)


@dataclass
class Trace:
    records: list[PassRecord] = field(default_factory=list)
    on_pass: Callable[[PassRecord], None] | None = None  # called after each pass

    def run(self, p: Pass[A, B], unit: A, scop: int | None = None) -> tuple[B, list[Remark]]:
        start = time.perf_counter()
        artifact, remarks = p.run(unit)
        elapsed = time.perf_counter() - start
        self.add(PassRecord(p.name, p.render(artifact), tuple(remarks), elapsed, scop, pass_options(p)))
        return artifact, remarks

    def add(self, record: PassRecord) -> None:
        self.records.append(record)
        if self.on_pass is not None:
            self.on_pass(record)

    def freeze(self) -> tuple[PassRecord, ...]:
        return tuple(self.records)


def failed(name: str, scop: int | None, error: Exception) -> PassRecord:
    """The record of a pass that hit a bug in hexplore: a view still has something to say."""
    return PassRecord(name, f"hexplore failed here: {type(error).__name__}: {error}\n", (), 0.0, scop)

