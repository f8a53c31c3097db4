// Draws remarks inline: an after-line text and a gutter icon per line, one decoration type per
// remark kind, coloured by the theme colours the extension contributes.

import * as vscode from 'vscode';
import { codeOf, fromVscodeSeverity, INLINE_KINDS, type InlineKind, type KindToggles, lineDecorations, type Remark } from './remarks';

export type Toggles = KindToggles & { inline: boolean; maxLength: number };

export function toRemark(d: vscode.Diagnostic): Remark {
  return { line: d.range.start.line, severity: fromVscodeSeverity(d.severity), code: codeOf(d.code), message: d.message, source: d.source };
}

export function colorId(kind: InlineKind): string {
  return `hexplore.${kind}RemarkForeground`;
}

export class RemarkDecorations implements vscode.Disposable {
  private readonly types: Record<InlineKind, vscode.TextEditorDecorationType>;

  constructor(media: (file: string) => vscode.Uri) {
    const make = (kind: InlineKind) =>
      vscode.window.createTextEditorDecorationType({
        gutterIconPath: media(`${kind}.svg`),
        gutterIconSize: 'contain',
        after: { color: new vscode.ThemeColor(colorId(kind)), margin: '0 0 0 2em', fontStyle: 'italic' },
        rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
      });
    this.types = { passed: make('passed'), missed: make('missed'), analysis: make('analysis') };
  }

  /** Redraws the editor's remarks from its document's diagnostics. */
  update(editor: vscode.TextEditor, diagnostics: readonly vscode.Diagnostic[], toggles: Toggles): void {
    const lines = toggles.inline ? lineDecorations(diagnostics.map(toRemark), toggles, toggles.maxLength) : [];
    const doc = editor.document;
    for (const kind of INLINE_KINDS) {
      const options: vscode.DecorationOptions[] = [];
      for (const d of lines) {
        if (d.kind !== kind || d.line >= doc.lineCount) continue;
        const end = doc.lineAt(d.line).range.end;
        options.push({
          range: new vscode.Range(end, end),
          hoverMessage: new vscode.MarkdownString(d.hover),
          renderOptions: { after: { contentText: d.text } },
        });
      }
      editor.setDecorations(this.types[kind], options);
    }
  }

  clear(editor: vscode.TextEditor): void {
    for (const kind of INLINE_KINDS) editor.setDecorations(this.types[kind], []);
  }

  dispose(): void {
    for (const kind of INLINE_KINDS) this.types[kind].dispose();
  }
}
