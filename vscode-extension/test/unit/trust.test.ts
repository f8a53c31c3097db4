// A workspace's own .venv/bin/hexplore-lsp starts only when the user allows it (trust.ts), and
// never in an untrusted workspace: the pure decision, then activate() against the stub.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { type Environment, type ServerConfig } from '../../src/serverCommand';
import { ALLOWED_KEY, chooseServer, type Consent } from '../../src/trust';
import * as vscode from '../stub/vscode';

const none: ServerConfig = { serverPath: '', pythonPath: '', args: [] };
const env = (more: Partial<Environment> = {}): Environment => ({
  workspaceFolders: ['/ws'], pathEnv: '/opt/bin', platform: 'linux', trusted: true,
  isExecutable: (f) => ['/ws/.venv/bin/hexplore-lsp', '/opt/bin/hexplore-lsp'].includes(f), ...more,
});
const venv = { command: '/ws/.venv/bin/hexplore-lsp', args: [], origin: 'workspace .venv' };

function memento() {
  const values = new Map<string, unknown>();
  return { values, get: <T>(k: string) => values.get(k) as T | undefined, update: async (k: string, v: unknown) => void values.set(k, v) };
}

function asker(answer: Consent) {
  const asked: string[] = [];
  return { asked, ask: async (command: string) => (asked.push(command), answer) };
}

test('a server from PATH or the settings starts without asking', async () => {
  const { asked, ask } = asker(undefined);
  const onPath = { command: '/opt/bin/hexplore-lsp', args: [], origin: 'PATH' };
  assert.deepEqual(await chooseServer(onPath, none, env(), ask, memento()), onPath);
  assert.deepEqual(asked, []);
});

test('the workspace .venv server: asked once, and allowed only by Allow', async () => {
  const store = memento();
  const declined = asker(undefined);
  const r = await chooseServer(venv, none, env(), declined.ask, store);
  assert.ok('error' in r && /not allowed/.test(r.error));
  assert.deepEqual(declined.asked, [venv.command]);
  assert.equal(store.values.get(ALLOWED_KEY), undefined);

  const allowed = asker('allow');
  assert.deepEqual(await chooseServer(venv, none, env(), allowed.ask, store), venv);
  assert.deepEqual(store.values.get(ALLOWED_KEY), [venv.command]);
  const again = asker(undefined);
  assert.deepEqual(await chooseServer(venv, none, env(), again.ask, store), venv); // remembered
  assert.deepEqual(again.asked, []);

  const path = asker('path');
  assert.deepEqual(await chooseServer(venv, none, env(), path.ask, memento()), { command: '/opt/bin/hexplore-lsp', args: [], origin: 'PATH' });
});

test('never in an untrusted workspace, even if allowed before', async () => {
  const store = memento();
  store.values.set(ALLOWED_KEY, [venv.command]);
  const { asked, ask } = asker('allow');
  const r = await chooseServer(venv, none, env({ trusted: false }), ask, store);
  assert.ok('error' in r && /not trusted/.test(r.error));
  assert.deepEqual(asked, []);
});

test('activate() asks before running the opened folder\'s server, and runs nothing when declined', async () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'hexplore-trust-'));
  const marker = path.join(folder, 'ran');
  const server = path.join(folder, '.venv', 'bin', 'hexplore-lsp');
  fs.mkdirSync(path.dirname(server), { recursive: true });
  fs.writeFileSync(server, `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 });
  const savedPath = process.env.PATH;
  process.env.PATH = '';
  const ws = vscode.workspace as unknown as { workspaceFolders: unknown; isTrusted: boolean };
  ws.workspaceFolders = [{ uri: vscode.Uri.file(folder) }];
  try {
    const ext = await import('../../src/extension');
    const context = { subscriptions: [] as { dispose(): unknown }[], extensionUri: vscode.Uri.file(folder), workspaceState: memento() };
    vscode.recorded.modalAnswer = undefined; // the user closes the question
    await ext.activate(context as never);
    assert.equal(vscode.recorded.modals.length, 1);
    assert.ok(vscode.recorded.modals[0].message.includes(server));
    assert.deepEqual(vscode.recorded.modals[0].items, ['Allow', 'Use hexplore-lsp on PATH']);
    assert.match(vscode.recorded.errors.at(-1) ?? '', /not starting the workspace's own server/);
    await ext.deactivate();

    ws.isTrusted = false; // Restricted Mode: not asked, not started, and Run is refused
    await ext.activate(context as never);
    assert.equal(vscode.recorded.modals.length, 1);
    assert.match(vscode.recorded.errors.at(-1) ?? '', /hexplore-lsp not found .*the workspace is not trusted/);
    const before = vscode.recorded.errors.length;
    await (vscode.recorded.commands.get('hexplore.run') as (a: unknown) => Promise<void>)({ uri: 'file:///x.c', function: 'f' });
    assert.match(vscode.recorded.errors[before] ?? '', /trust the workspace/);
    await ext.deactivate();
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!fs.existsSync(marker), 'the workspace server ran');
    for (const d of context.subscriptions) d.dispose();
  } finally {
    process.env.PATH = savedPath;
    ws.workspaceFolders = undefined;
    ws.isTrusted = true;
    fs.rmSync(folder, { recursive: true, force: true });
  }
});
