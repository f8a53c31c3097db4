// The schedule-tree view: items from hexplore/scheduleTree nodes, and the provider against the
// stubbed `vscode` module with a fake server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FunctionInfo, ScheduleNode } from '../../src/protocol';
import { emptyMessage, nodeItem } from '../../src/scheduleTree';
import { ScheduleTreeProvider } from '../../src/scheduleTreeView';
import * as vscode from '../stub/vscode';

const at = (line: number) => ({ start: { line, character: 2 }, end: { line, character: 20 } });

const TREE: ScheduleNode = {
  kind: 'function', detail: 'f', children: [
    { kind: 'domain', detail: 'f#scop0', arcana: '{ S0[i] : 0 <= i < 8 }', range: at(1), children: [
      { kind: 'band', detail: 'i', status: 'parallel', range: at(1), carried: [], children: [
        { kind: 'leaf', detail: 'S0: a[i] = 0', range: at(2), children: [] },
      ] },
    ] },
  ],
};

test('a node is its kind and detail, its status and line, its isl text in the tooltip', () => {
  const band = TREE.children[0].children[0];
  assert.deepEqual(nodeItem(band), {
    label: 'band i', description: 'parallel · line 2', tooltip: 'band i', expanded: true, leaf: false, range: at(1),
  });
  const domain = nodeItem(TREE.children[0]);
  assert.equal(domain.tooltip, 'domain f#scop0\n{ S0[i] : 0 <= i < 8 }');
  assert.equal(nodeItem({ kind: 'band', detail: 't', carried: ['flow S1 -> S0 on A'], children: [] }).tooltip, 'band t\ncarries: flow S1 -> S0 on A');
  assert.ok(nodeItem(band.children[0]).leaf);
  assert.match(emptyMessage('noFunction'), /cursor into a function/);
});

test('the provider shows the tree of the function at the cursor; a node reveals its line', async () => {
  const uri = vscode.Uri.parse('file:///w/f.c');
  const doc = { uri, languageId: 'c', version: 1 };
  const editor = { document: doc, selection: { active: new vscode.Position(1, 4) } };
  Object.assign(vscode.window, { activeTextEditor: editor });
  const asked: object[] = [];
  const request = async (method: string, params: object) => {
    asked.push({ method, params });
    return TREE;
  };
  const fns: FunctionInfo[] = [{
    name: 'f', range: { start: { line: 0, character: 0 }, end: { line: 4, character: 1 } }, selectionRange: at(0),
    scops: 1, loops: 1, remarks: { passed: 0, missed: 0, analysis: 0 }, analysed: true,
  }];
  const provider = new ScheduleTreeProvider(() => request, async () => fns, () => true, 0);
  const messages: (string | undefined)[] = [];
  provider.onMessage = (m) => messages.push(m);
  await provider.refresh();
  assert.deepEqual(asked, [{ method: 'hexplore/scheduleTree', params: { uri: uri.toString(), function: 'f' } }]);
  assert.deepEqual([...messages], [undefined]);
  const [domain] = provider.getChildren();
  assert.equal(domain.detail, 'f#scop0');
  const item = provider.getTreeItem(domain) as unknown as vscode.TreeItem;
  assert.equal(item.label, 'domain f#scop0');
  assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
  assert.equal(item.command?.command, 'vscode.open');
  await provider.refresh(); // the same function: not asked again
  assert.equal(asked.length, 1);
  await provider.refresh(true);
  assert.equal(asked.length, 2);
  const none = new ScheduleTreeProvider(() => undefined, async () => fns, () => true, 0);
  none.onMessage = (m) => messages.push(m);
  await none.refresh();
  assert.match(String(messages.at(-1)), /not running/);
  provider.dispose();
  none.dispose();
  Object.assign(vscode.window, { activeTextEditor: undefined });
});
