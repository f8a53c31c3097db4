// decorations.ts against the stubbed `vscode` module (test/stub/vscode.ts).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as vscode from '../stub/vscode';
import { colorId, RemarkDecorations, toRemark } from '../../src/decorations';

const root = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function diag(line: number, severity: vscode.DiagnosticSeverity, code: string, message: string): vscode.Diagnostic {
  const d = new vscode.Diagnostic(new vscode.Range(line, 2, line, 9), message, severity);
  d.code = { value: code, target: vscode.Uri.parse('file:///lsp/REMARKS.md') };
  d.source = 'hexplore';
  return d;
}

const on = { inline: true, passed: true, missed: true, analysis: true, maxLength: 120 };

test('one decoration type per kind: gutter icon from media/, colour from a contributed theme colour', () => {
  vscode.window.createdDecorationTypes.length = 0;
  const deco = new RemarkDecorations((f) => vscode.Uri.file(path.join(root, 'media', f)) as never);
  const types = vscode.window.createdDecorationTypes;
  assert.equal(types.length, 3);
  const contributed = new Map(manifest.contributes.colors.map((c: { id: string; defaults: object }) => [c.id, c.defaults]));
  for (const [i, kind] of (['passed', 'missed', 'analysis'] as const).entries()) {
    const o = types[i].options as { gutterIconPath: vscode.Uri; after: { color: vscode.ThemeColor } };
    assert.ok(fs.existsSync(o.gutterIconPath.path), o.gutterIconPath.path);
    assert.match(fs.readFileSync(o.gutterIconPath.path, 'utf8'), /^<svg /);
    assert.equal(o.after.color.id, colorId(kind));
    const defaults = contributed.get(colorId(kind)) as Record<string, string> | undefined;
    assert.ok(defaults, `${colorId(kind)} is contributed`);
    assert.deepEqual(Object.keys(defaults).sort(), ['dark', 'highContrast', 'highContrastLight', 'light']);
  }
  deco.dispose();
  assert.ok(types.every((t) => t.disposed));
});

test('diagnostics become after-line texts at the end of their line, by kind', () => {
  vscode.window.createdDecorationTypes.length = 0;
  const deco = new RemarkDecorations((f) => vscode.Uri.file(f) as never);
  const [passed, missed, analysis] = vscode.window.createdDecorationTypes;
  const editor = vscode.fakeEditor(['void f() {', '  for (i...)', '    y[idx[i]] += 1;', '}']);
  const diags = [
    diag(1, vscode.DiagnosticSeverity.Hint, 'ParallelLoop', 'loop `i` is parallel'),
    diag(2, vscode.DiagnosticSeverity.Warning, 'IndirectAccess', 'indirect'),
    diag(0, vscode.DiagnosticSeverity.Error, 'SyntaxError', 'expected ;'),
    diag(9, vscode.DiagnosticSeverity.Hint, 'Stale', 'past the end of the document'),
  ];
  deco.update(editor as never, diags as never, on);
  assert.deepEqual(editor.calls.get(passed.key), []);
  const m = editor.calls.get(missed.key)!;
  assert.equal(m.length, 1);
  assert.deepEqual([m[0].range.start, m[0].range.end], [new vscode.Position(2, 19), new vscode.Position(2, 19)]);
  assert.equal(m[0].renderOptions.after.contentText, 'indirect');
  assert.equal(m[0].hoverMessage.value, '**missed** `IndirectAccess`: indirect');
  assert.deepEqual(editor.calls.get(analysis.key)!.map((o) => [o.range.start.line, o.renderOptions.after.contentText]), [[1, 'loop `i` is parallel']]);

  deco.update(editor as never, diags as never, { ...on, analysis: false });
  assert.deepEqual(editor.calls.get(analysis.key), []);
  assert.equal(editor.calls.get(missed.key)!.length, 1);
  deco.update(editor as never, diags as never, { ...on, inline: false });
  assert.ok([passed, missed, analysis].every((t) => editor.calls.get(t.key)!.length === 0));
});

test('toRemark reads vscode diagnostics', () => {
  assert.deepEqual(toRemark(diag(4, vscode.DiagnosticSeverity.Information, 'FunctionHasErrors', 'skipped') as never), {
    line: 4, severity: 'information', code: 'FunctionHasErrors', message: 'skipped', source: 'hexplore',
  });
});
