// activate() against the stubbed `vscode` module, where no server can be found: it must still
// register every command and the hexplore: content provider, and say what is wrong.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as vscode from '../stub/vscode';

const root = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

test('activation without a server: commands, provider, status and an error that says why', async () => {
  const savedPath = process.env.PATH;
  process.env.PATH = ''; // no hexplore-lsp on PATH, and no workspace folder with a .venv
  try {
    const ext = await import('../../src/extension');
    const context = { subscriptions: [] as { dispose(): unknown }[], extensionUri: vscode.Uri.file(root) };
    await ext.activate(context as never);
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual([...vscode.recorded.commands.keys()].sort(), contributed);
    assert.ok(vscode.recorded.providers.has('hexplore'));
    assert.equal(vscode.recorded.errors.length, 1);
    assert.match(vscode.recorded.errors[0], /^hexplore: hexplore-lsp not found \(tried hexplore-lsp on PATH\)/);
    await new Promise((r) => setTimeout(r, 300)); // the status bar update is debounced
    assert.equal(vscode.recorded.statusBar.text, '$(error) hexplore');
    assert.match(String(vscode.recorded.statusBar.tooltip), /^hexplore-lsp: failed — hexplore-lsp not found/);
    // A view asked for now explains that there is no server.
    const provider = vscode.recorded.providers.get('hexplore') as { provideTextDocumentContent(u: unknown): Promise<string> };
    const text = await provider.provideTextDocumentContent(vscode.Uri.parse('hexplore:/f/cuda.cu?source=file%3A%2F%2F%2Fa.c&function=f&view=cuda'));
    assert.match(text, /not running/);
    await ext.deactivate();
    for (const d of context.subscriptions) d.dispose();
  } finally {
    process.env.PATH = savedPath;
  }
});
