// package.json and extension.ts agree: every contributed command is registered, the code lens
// commands of lsp/code_lens.py are among them, and the document selector's languages activate it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const extension = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');
const registered = new Set([...extension.matchAll(/command\('([\w.]+)'/g)].map((m) => m[1]));

test('every contributed command is registered, and only those', () => {
  const contributed = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
  assert.deepEqual([...registered].sort(), [...contributed].sort());
});

test('the server code lens commands are implemented', () => {
  const lens = fs.readFileSync(path.join(root, '..', 'lsp', 'code_lens.py'), 'utf8');
  const commands = [...lens.matchAll(/"(hexplore\.\w+)"/g)].map((m) => m[1]);
  assert.deepEqual(commands, [
    'hexplore.showScheduleTree', 'hexplore.showPasses', 'hexplore.run',
    'hexplore.showCuda', 'hexplore.showOpenCL', 'hexplore.showC', 'hexplore.showPtx', 'hexplore.showLlvmIr',
  ]);
  for (const c of commands) assert.ok(registered.has(c), c);
});

test('activation on the selector languages', () => {
  assert.deepEqual(manifest.activationEvents, ['onLanguage:c', 'onLanguage:cpp', 'onLanguage:cuda-cpp']);
  assert.match(extension, /const LANGUAGES = \['c', 'cpp', 'cuda-cpp'\]/);
  assert.ok(fs.existsSync(path.join(root, 'README.md')));
});

test('untrusted workspaces: limited, and the server command is the user\'s to choose', () => {
  const policy = manifest.capabilities.untrustedWorkspaces;
  assert.equal(policy.supported, 'limited');
  const server = ['hexplore.server.path', 'hexplore.server.pythonPath', 'hexplore.server.args'];
  assert.deepEqual([...policy.restrictedConfigurations].sort(), [...server].sort());
  for (const key of server) assert.equal(manifest.contributes.configuration.properties[key].scope, 'machine', key);
});
