"""Remarks: the compiler's voice. Every decision that changes what the user gets is one of these.

A remark is plain data. `kind` follows LLVM's optimization remarks: PASSED (a transformation was
done), MISSED (it was not, and `message` says why in C terms), ANALYSIS (a fact or an assumption the
user should know). `name` is a stable identifier (e.g. ``NonAffineSubscript``) that tests, editors and
scripts key on; `args` carries the structured detail (arrays, loops, isl sets) for hovers and JSON.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from core_compiler.source import SourceRange


class RemarkKind(enum.Enum):
    PASSED = "Passed"
    MISSED = "Missed"
    ANALYSIS = "Analysis"


def _frozen_args(args: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(args or {}))


@dataclass(frozen=True)
class Remark:
    kind: RemarkKind
    pass_name: str
    name: str
    message: str
    range: SourceRange
    function: str = ""
    args: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def __hash__(self) -> int:
        return hash((self.kind, self.pass_name, self.name, self.message, self.range, self.function))

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Remarks pickle (the front end's worker sends them): `args` as a dict, frozen again."""
        fields = (self.kind, self.pass_name, self.name, self.message, self.range, self.function)
        return _unpickle, (*fields, dict(self.args))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Remark):
            return NotImplemented
        return (
            self.kind,
            self.pass_name,
            self.name,
            self.message,
            self.range,
            self.function,
            dict(self.args),
        ) == (
            other.kind,
            other.pass_name,
            other.name,
            other.message,
            other.range,
            other.function,
            dict(other.args),
        )


def _unpickle(
    kind: RemarkKind, pass_name: str, name: str, message: str, rng: SourceRange, function: str, args: dict[str, object]
) -> Remark:
    return Remark(kind, pass_name, name, message, rng, function, _frozen_args(args))


def remark(
    kind: RemarkKind,
    pass_name: str,
    name: str,
    message: str,
    rng: SourceRange,
    function: str = "",
    **args: object,
) -> Remark:
    return Remark(kind, pass_name, name, message, rng, function, _frozen_args(args))


def missed(pass_name: str, name: str, message: str, rng: SourceRange, function: str = "", **args: object) -> Remark:
    return remark(RemarkKind.MISSED, pass_name, name, message, rng, function, **args)


def passed(pass_name: str, name: str, message: str, rng: SourceRange, function: str = "", **args: object) -> Remark:
    return remark(RemarkKind.PASSED, pass_name, name, message, rng, function, **args)


def analysis(pass_name: str, name: str, message: str, rng: SourceRange, function: str = "", **args: object) -> Remark:
    return remark(RemarkKind.ANALYSIS, pass_name, name, message, rng, function, **args)
