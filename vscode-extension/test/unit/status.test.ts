import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FunctionInfo, functionAt } from '../../src/protocol';
import type { Remark } from '../../src/remarks';
import { offloadDecision, statusText } from '../../src/status';

const range = (a: number, b: number) => ({ start: { line: a, character: 0 }, end: { line: b, character: 1 } });
const fn = (name: string, a: number, b: number, more: Partial<FunctionInfo> = {}): FunctionInfo => ({
  name, range: range(a, b), selectionRange: range(a, a), scops: 1, loops: 3,
  remarks: { passed: 0, missed: 0, analysis: 0 }, analysed: true, ...more,
});
const remark = (line: number, severity: Remark['severity'], code: string, message = code): Remark => ({ line, severity, code, message, source: 'hexplore' });

test('functionAt finds the function around the cursor', () => {
  const fns = [fn('a', 0, 5), fn('b', 7, 12)];
  assert.equal(functionAt(fns, { line: 3, character: 4 })?.name, 'a');
  assert.equal(functionAt(fns, { line: 12, character: 1 })?.name, 'b');
  assert.equal(functionAt(fns, { line: 6, character: 0 }), undefined);
});

test('server states', () => {
  assert.deepEqual(statusText('starting'), { text: '$(sync~spin) hexplore', tooltip: 'hexplore-lsp: starting' });
  assert.equal(statusText('failed', undefined, [], 'hexplore-lsp not found').tooltip, 'hexplore-lsp: failed — hexplore-lsp not found');
  assert.equal(statusText('running').text, '$(check) hexplore');
  // While the server is not running the function is not shown, even if known.
  assert.equal(statusText('stopped', fn('a', 0, 5)).text, '$(circle-slash) hexplore');
});

test('offload decisions from the function and its remarks', () => {
  assert.equal(statusText('running', fn('matmul', 11, 18)).text, '$(check) matmul: modeled, not offloaded');
  assert.equal(
    statusText('running', fn('scatter_add', 33, 36, { scops: 0, loops: 0, remarks: { passed: 0, missed: 1, analysis: 0 } }), [remark(35, 'warning', 'IndirectAccess'), remark(40, 'warning', 'ImpureCall')]).text,
    '$(check) scatter_add: not offloaded (IndirectAccess)',
  );
  assert.equal(offloadDecision(fn('f', 0, 9, { scops: 2 }), [remark(3, 'warning', 'ImpureCall')]).short, 'partly modeled (ImpureCall)');
  const off = statusText('running', fn('g', 0, 9), [remark(2, 'information', 'KernelOffloaded', 'offloaded as 1 kernel')]);
  assert.equal(off.text, '$(check) g: offloaded');
  assert.match(off.tooltip, /offloaded as 1 kernel/);
  assert.equal(offloadDecision(fn('h', 0, 3, { analysed: false }), []).short, 'not analysed (syntax errors)');
  assert.equal(offloadDecision(fn('main', 0, 3, { scops: 0, loops: 0 }), []).short, 'no loop nests');
});
