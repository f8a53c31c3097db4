"""Code actions (``textDocument/codeAction``), after clangd's and rust-analyzer's conventions:

- ``quickfix``: "add `restrict` to `a`, `b`" for a ``NoAliasAssumption`` remark that overlaps the
  requested range, attached to its diagnostic (``diagnostics``, ``isPreferred``);
- ``refactor.rewrite``: "interchange loops `i` and `j`" on the header of a modeled loop with a
  perfectly nested one: the edit swaps the two ``for (...)`` headers where no dependence would be
  reversed; otherwise the action comes with ``disabled: {reason}`` naming the dependence in C
  terms (to clients that support ``disabled``; others are not offered it). On the same header,
  the same way: "tile loops `i`, `j` by 32x32" (16, 32, 64), "unroll `i` by 2 and jam into `j`"
  (2, 4), "skew `j` by 1*`i`", "fuse loop `i` with the next loop `k`", "distribute loop `i` over
  its statements" (`core_compiler/transform/rewrites.py`): each edit replaces the loop nest. A
  legal rewrite's ``data`` is the argument of ``hexplore.previewRewrite``, the command that shows
  its diffs (source, and the generated C) before it is applied.

Edits come from `explorer/fixes.py`; they are made on the analysed text, so the server offers
actions only from an analysis of the current text (none while edits outrun the analyses).
"""

from __future__ import annotations

from lsprotocol import types

from explorer.api import SourceRange
from explorer.fixes import Edit, Fix, LoopRewrite, restrict_fix
from explorer.workspace import DocumentAnalysis
from lsp import diagnostics
from lsp.positions import LineIndex

KINDS = (types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite)


def wanted(kind: str, only: list[str] | None) -> bool:
    """Whether the client asked for actions of `kind` (``only``: kinds and their parents)."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def quick_fixes(
    analysis: DocumentAnalysis, index: LineIndex, rng: types.Range, sent: list[types.Diagnostic], versioned: bool = True
) -> list[types.CodeAction]:
    doc = analysis.document
    out = []
    for fr in analysis.functions:
        for remark in fr.remarks:
            if remark.range.file != doc.path or not _overlaps(index.range(remark.range), rng):
                continue
            fix = restrict_fix(fr, remark, doc.text)
            if fix is None:
                continue
            diag = _sent(sent, remark.name, index.range(remark.range)) or diagnostics.to_diagnostic(
                remark, doc.uri, doc.path, index
            )
            out.append(_fix_action(fix, diag, workspace_edit(analysis, index, fix.edits, versioned)))
    return out


def _fix_action(fix: Fix, diag: types.Diagnostic, edit: types.WorkspaceEdit) -> types.CodeAction:
    kind = types.CodeActionKind.QuickFix
    return types.CodeAction(title=fix.title, kind=kind, diagnostics=[diag], is_preferred=True, edit=edit)


def rewrite_action(
    rewrite: LoopRewrite, analysis: DocumentAnalysis, index: LineIndex, disabled_support: bool, versioned: bool = True
) -> types.CodeAction | None:
    if rewrite.legal:
        return types.CodeAction(
            title=rewrite.title,
            kind=types.CodeActionKind.RefactorRewrite,
            edit=workspace_edit(analysis, index, rewrite.edits, versioned),
            data=preview_argument(rewrite, analysis),
        )
    if not disabled_support:
        return None
    return types.CodeAction(
        title=rewrite.title,
        kind=types.CodeActionKind.RefactorRewrite,
        disabled=types.CodeActionDisabled(reason=rewrite.reason),
    )


def preview_argument(rewrite: LoopRewrite, analysis: DocumentAnalysis) -> dict[str, object] | None:
    """The argument of ``hexplore.previewRewrite`` that previews `rewrite` (`lsp/commands.py`):
    the loop's header (core position) and the action's title."""
    fr = next((f for f in analysis.functions if _inside(rewrite.range, f.analysis.function.range)), None)
    if fr is None:
        return None
    r = rewrite.range
    return {"uri": analysis.uri, "function": fr.name, "line": r.line, "column": r.col, "title": rewrite.title}


def _inside(r: SourceRange, outer: SourceRange) -> bool:
    return (outer.line, outer.col) <= (r.line, r.col) and (r.end_line, r.end_col) <= (outer.end_line, outer.end_col)


def workspace_edit(
    analysis: DocumentAnalysis, index: LineIndex, edits: tuple[Edit, ...], versioned: bool = True
) -> types.WorkspaceEdit:
    """The edits; `versioned` (clients supporting ``documentChanges``): on the analysed version of
    the document, which a client refuses to apply once the document changed."""
    doc = analysis.document
    plain = [types.TextEdit(index.range(e.range), e.text) for e in edits]
    if not versioned:
        return types.WorkspaceEdit(changes={doc.uri: plain})
    ident = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(ident, list(plain))])


def _sent(sent: list[types.Diagnostic], code: str, rng: types.Range) -> types.Diagnostic | None:
    """The client's own copy of the diagnostic (clients match fixes to diagnostics by value)."""
    return next((d for d in sent if d.code == code and d.range == rng), None)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
