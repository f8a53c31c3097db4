import assert from 'node:assert/strict';
import { test } from 'node:test';
import { codeOf, fromLspSeverity, fromVscodeSeverity, lineDecorations, type Remark, remarkKind, summarize, truncate } from '../../src/remarks';

const all = { passed: true, missed: true, analysis: true };
const r = (line: number, severity: Remark['severity'], code: string, message: string, source = 'hexplore'): Remark => ({ line, severity, code, message, source });

test('severities map to remark kinds as lsp/diagnostics.py assigns them', () => {
  assert.equal(remarkKind({ severity: 'warning', code: 'IndirectAccess' }), 'missed');
  assert.equal(remarkKind({ severity: 'information', code: 'Offloaded' }), 'passed');
  assert.equal(remarkKind({ severity: 'information', code: 'FunctionHasErrors' }), 'missed');
  assert.equal(remarkKind({ severity: 'hint', code: 'ParallelLoop' }), 'analysis');
  assert.equal(remarkKind({ severity: 'error', code: 'SyntaxError' }), 'error');
});

test('LSP (1-based) and vscode (0-based) severities', () => {
  assert.deepEqual([1, 2, 3, 4].map(fromLspSeverity), ['error', 'warning', 'information', 'hint']);
  assert.deepEqual([0, 1, 2, 3].map(fromVscodeSeverity), ['error', 'warning', 'information', 'hint']);
  assert.equal(fromLspSeverity(undefined), 'error'); // LSP: a missing severity is the client's choice
});

test('codes: plain or wrapped with a target', () => {
  assert.equal(codeOf('ParallelLoop'), 'ParallelLoop');
  assert.equal(codeOf({ value: 'IndirectAccess', target: 'file:///x#IndirectAccess' }), 'IndirectAccess');
  assert.equal(codeOf(7), '7');
  assert.equal(codeOf(undefined), '');
});

test('one decoration per line, most important kind first, texts joined', () => {
  const remarks = [
    r(12, 'hint', 'NoAliasAssumption', 'assuming no overlap'),
    r(12, 'hint', 'ParallelLoop', 'loop `i` is parallel'),
    r(35, 'warning', 'IndirectAccess', '`y[idx[i]]` is indirect'),
    r(3, 'information', 'Offloaded', 'offloaded to the GPU'),
    r(35, 'hint', 'ScopDetected', 'modeled'),
    r(2, 'error', 'SyntaxError', 'expected ;'),
    r(4, 'hint', 'Other', 'from clangd', 'clangd'),
  ];
  const d = lineDecorations(remarks, all);
  assert.deepEqual(d.map((x) => [x.line, x.kind, x.text]), [
    [3, 'passed', 'offloaded to the GPU'],
    [12, 'analysis', 'assuming no overlap · loop `i` is parallel'],
    [35, 'missed', '`y[idx[i]]` is indirect · modeled'],
  ]);
  assert.equal(d[2].hover, '**missed** `IndirectAccess`: `y[idx[i]]` is indirect\n\n**analysis** `ScopDetected`: modeled');
});

test('kind toggles drop remarks before lines are merged', () => {
  const remarks = [r(5, 'warning', 'IndirectAccess', 'indirect'), r(5, 'hint', 'ParallelLoop', 'parallel'), r(6, 'hint', 'Reduction', 'reduction')];
  assert.deepEqual(lineDecorations(remarks, { ...all, missed: false }).map((x) => [x.line, x.kind, x.text]), [
    [5, 'analysis', 'parallel'],
    [6, 'analysis', 'reduction'],
  ]);
  assert.deepEqual(lineDecorations(remarks, { ...all, analysis: false }).map((x) => [x.line, x.kind]), [[5, 'missed']]);
  assert.deepEqual(lineDecorations(remarks, { passed: false, missed: false, analysis: false }), []);
});

test('repeated texts on a line are said once; long texts are cut', () => {
  const d = lineDecorations([r(1, 'hint', 'A', 'same'), r(1, 'hint', 'B', 'same')], all);
  assert.equal(d[0].text, 'same');
  assert.equal(truncate('a  b\n c', 120), 'a b c');
  const cut = truncate('x'.repeat(200), 40);
  assert.equal(cut.length, 40);
  assert.ok(cut.endsWith('…'));
});

test('summarize counts a line range', () => {
  const remarks = [r(1, 'warning', 'IndirectAccess', 'a'), r(2, 'warning', 'IndirectAccess', 'b'), r(3, 'warning', 'ImpureCall', 'c'), r(9, 'information', 'Offloaded', 'd')];
  const s = summarize(remarks, 1, 3);
  assert.deepEqual(s.counts, { passed: 0, missed: 3, analysis: 0, error: 0 });
  assert.deepEqual(s.missedCodes, ['IndirectAccess', 'ImpureCall']);
});
