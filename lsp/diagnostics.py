"""Remarks as LSP diagnostics.

Severity: a syntax error is an Error; a missed optimization (a loop nest that could not be
modeled, and why) a Warning; a transformation that happened (``PASSED``: offloaded, tiled) an
Information; an analysis fact (parallel loop, carried dependence, assumption) a Hint, which editors
show discreetly. ``FunctionHasErrors`` is only Information: the syntax error itself is the Error.
The back end's offload decisions (`explorer/offload.py`: "offloaded to the GPU as kernel0", "kept
on CPU: …", on each nest's outer loop) are Information at most: a decision, not a fault.

Each diagnostic has ``source: "hexplore"``, ``code``: the remark's stable name, and
``codeDescription``: the remark's section in the ``REMARKS.md`` shipped beside this module. A
carried dependence points (``relatedInformation``) at its source and sink statements.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types

from explorer.api import Remark, RemarkKind, SourceRange
from explorer.offload import DECISION_PASSES
from explorer.workspace import DocumentAnalysis
from lsp.positions import LineIndex

SOURCE = "hexplore"
REMARKS_DOC = Path(__file__).with_name("REMARKS.md")

_SEVERITY = {
    RemarkKind.MISSED: types.DiagnosticSeverity.Warning,
    RemarkKind.PASSED: types.DiagnosticSeverity.Information,
    RemarkKind.ANALYSIS: types.DiagnosticSeverity.Hint,
}
_BY_NAME = {
    "SyntaxError": types.DiagnosticSeverity.Error,
    "FunctionHasErrors": types.DiagnosticSeverity.Information,
    "InternalError": types.DiagnosticSeverity.Error,
}


def remark_doc_uri(name: str) -> str:
    return f"{REMARKS_DOC.as_uri()}#{name}"


def severity(remark: Remark) -> types.DiagnosticSeverity:
    if remark.pass_name in DECISION_PASSES and remark.kind is RemarkKind.MISSED:
        return types.DiagnosticSeverity.Information
    return _BY_NAME.get(remark.name, _SEVERITY[remark.kind])


def diagnostics(
    analysis: DocumentAnalysis, index: LineIndex, decisions: Sequence[Remark] = ()
) -> list[types.Diagnostic]:
    """The analysis' remarks and the offload `decisions` known for it."""
    doc = analysis.document
    return [to_diagnostic(r, doc.uri, doc.path, index) for r in (*analysis.all_remarks(), *decisions)]


def to_diagnostic(remark: Remark, uri: str, path: str, index: LineIndex) -> types.Diagnostic:
    message = remark.message
    if remark.range.file == path:
        rng = index.range(remark.range)
    else:  # an error in an included header: show it on the #include line, as clangd does
        rng = _include_line(remark.range, index)
        r = remark.range
        message = f"in included file {r.file}:{r.line}:{r.col}: {message}"
    return types.Diagnostic(
        range=rng,
        message=message,
        severity=severity(remark),
        code=remark.name,
        code_description=types.CodeDescription(href=remark_doc_uri(remark.name)),
        source=SOURCE,
        related_information=_related(remark, uri, path, index),
    )


def _related(
    remark: Remark, uri: str, path: str, index: LineIndex
) -> list[types.DiagnosticRelatedInformation] | None:
    if remark.name != "LoopCarriedDependence":
        return None
    out = []
    kind = remark.args.get("dependence", "")
    for role, key, stmt in (("source", "source_range", "source"), ("sink", "sink_range", "sink")):
        r = remark.args.get(key)
        if not isinstance(r, dict) or r.get("file") != path:
            continue
        where = SourceRange(**r)
        message = f"{role} of the {kind} dependence: statement {remark.args.get(stmt, '?')}"
        out.append(
            types.DiagnosticRelatedInformation(types.Location(uri, index.range(where)), message)
        )
    return out or None


def _include_line(r: SourceRange, index: LineIndex) -> types.Range:
    name = os.path.basename(r.file)
    for n, line in enumerate(index.lines):
        if line.lstrip().startswith("#") and "include" in line and name in line:
            return types.Range(types.Position(n, 0), index.position(n + 1, len(line.encode()) + 1))
    return types.Range(types.Position(0, 0), types.Position(0, 0))
