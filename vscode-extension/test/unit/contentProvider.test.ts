// contentProvider.ts against the stubbed `vscode` module.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as vscode from '../stub/vscode';
import { ViewProvider } from '../../src/contentProvider';
import type { Requester } from '../../src/protocol';
import { viewUriParts } from '../../src/virtualDocs';

const uri = (source: string, fn: string) => vscode.Uri.from(viewUriParts({ source, function: fn, view: 'artifact', pass: 'frontend' }));

test('serves views from the requester, and says when there is no server', async () => {
  let running = false;
  const request: Requester = async (method, params) => ({ text: `${method} ${JSON.stringify(params)}`, language: 'plaintext' });
  const provider = new ViewProvider(() => (running ? request : undefined));
  const u = uri('file:///a.c', 'f');
  assert.match(await provider.provideTextDocumentContent(u as never), /hexplore-lsp\) is not running/);
  running = true;
  assert.equal(await provider.provideTextDocumentContent(u as never), 'hexplore/artifact {"uri":"file:///a.c","function":"f","pass":"frontend"}');
  assert.match(await provider.provideTextDocumentContent(vscode.Uri.parse('hexplore:/x?view=cuda') as never), /cannot show .*no source/);
  provider.dispose();
});

test('edits of a source refresh its open views once, after a pause', async () => {
  const provider = new ViewProvider(() => undefined, 20);
  const a1 = uri('file:///a.c', 'f');
  const a2 = uri('file:///a.c', 'g');
  const b = uri('file:///b.c', 'f');
  vscode.workspace.textDocuments = [{ uri: a1 }, { uri: a2 }, { uri: b }, { uri: vscode.Uri.file('/a.c') }];
  const fired: string[] = [];
  provider.onDidChange((u) => fired.push(u.toString()));
  provider.sourceChanged('file:///a.c');
  provider.sourceChanged('file:///a.c');
  assert.deepEqual(fired, []);
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(fired, [a1.toString(), a2.toString()]);
  provider.dispose();
  vscode.workspace.textDocuments = [];
});
