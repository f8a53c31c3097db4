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

test('menus and keybindings name contributed commands; the tree view and its refresh exist', () => {
  const contributed = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
  const menus = manifest.contributes.menus;
  const submenu = manifest.contributes.submenus[0].id;
  for (const where of ['editor/title', 'editor/context']) assert.ok(menus[where].some((m: { submenu?: string }) => m.submenu === submenu), where);
  const inMenu = menus[submenu].map((m: { command: string }) => m.command);
  for (const c of ['hexplore.showPasses', 'hexplore.showScheduleTree', 'hexplore.showCuda', 'hexplore.run']) assert.ok(inMenu.includes(c), c);
  for (const m of [...inMenu, ...menus['view/title'].map((m: { command: string }) => m.command)]) assert.ok(contributed.has(m), m);
  const keys = manifest.contributes.keybindings as { command: string; key: string }[];
  assert.ok(keys.length >= 8);
  for (const k of keys) {
    assert.ok(contributed.has(k.command), k.command);
    assert.match(k.key, /^ctrl\+alt\+h [a-z]$/);
  }
  assert.equal(new Set(keys.map((k) => k.key)).size, keys.length); // no key twice
  assert.deepEqual(manifest.contributes.views.explorer.map((v: { id: string }) => v.id), ['hexplore.scheduleTree']);
  assert.match(extension, /createTreeView\(VIEW_ID/);
});

test('packaging: one bundled file, an icon, a license, run settings for the server', () => {
  assert.equal(manifest.main, './dist/extension.js');
  assert.match(manifest.scripts.bundle, /^esbuild src\/extension\.ts --bundle --outfile=dist\/extension\.js --external:vscode /);
  assert.match(manifest.scripts['vscode:prepublish'], /npm run bundle/);
  const ignore = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8').split('\n');
  for (const p of ['node_modules/**', 'out/**', 'src/**']) assert.ok(ignore.includes(p), p);
  const icon = fs.readFileSync(path.join(root, manifest.icon));
  assert.equal(icon.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual([icon.readUInt32BE(16), icon.readUInt32BE(20)], [128, 128]);
  assert.equal(typeof manifest.license, 'string');
  const props = manifest.contributes.configuration.properties;
  assert.deepEqual(props['hexplore.run.device'].enum, ['cpu', 'opencl', 'cuda']);
  assert.equal(props['hexplore.run.sizes'].type, 'object');
  assert.match(extension, /configuredSizes\(config\(uri\)\.get\('run\.sizes'/);
});
