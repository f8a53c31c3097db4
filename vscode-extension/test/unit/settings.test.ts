import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { remarkToggles, SERVER_KEYS, serverSettings } from '../../src/settings';

const root = path.resolve(__dirname, '../../..'); // vscode-extension/
const repo = path.dirname(root);
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const getter = (values: Record<string, unknown>) => (k: string) => values[k];

test('the server keys are the ones explorer/settings.py reads', () => {
  const py = fs.readFileSync(path.join(repo, 'explorer', 'settings.py'), 'utf8');
  const m = /SETTING_KEYS = \(([^)]*)\)/.exec(py);
  assert.ok(m, 'SETTING_KEYS in explorer/settings.py');
  const keys = [...m[1].matchAll(/"(\w+)"/g)].map((x) => x[1]);
  assert.deepEqual([...SERVER_KEYS].sort(), keys.sort());
});

test('every server key is a contributed setting in the `hexplore` section', () => {
  const props = manifest.contributes.configuration.properties;
  for (const k of SERVER_KEYS) assert.ok(props[`hexplore.${k}`], `hexplore.${k}`);
  assert.deepEqual(props['hexplore.target'].enum, ['cuda', 'opencl', 'c']);
  assert.equal(props['hexplore.trace.server'].default, 'off');
});

test('settings -> initializationOptions: exactly the server keys, values as set', () => {
  const values = {
    includePaths: ['inc', '${workspaceFolder}/third_party'],
    defines: ['N=100', 'DEBUG'],
    target: 'opencl',
    tileSizes: [32, 8],
    maxIslOperations: 1000,
    'server.path': '/opt/hexplore-lsp',
    'remarks.inline': false,
  };
  assert.deepEqual(serverSettings(getter(values), '/ws'), {
    includePaths: ['inc', '/ws/third_party'],
    defines: ['N=100', 'DEBUG'],
    target: 'opencl',
    tileSizes: [32, 8],
    maxIslOperations: 1000,
  });
});

test('unset keys are left out; wrong values are passed on for the server to reject by name', () => {
  assert.deepEqual(serverSettings(getter({ target: 'cuda' })), { target: 'cuda' });
  assert.deepEqual(serverSettings(getter({ tileSizes: [32, 0] })), { tileSizes: [32, 0] });
  assert.deepEqual(serverSettings(getter({ includePaths: ['${workspaceFolder}/x'] })), { includePaths: ['${workspaceFolder}/x'] });
});

test('remark toggles default on', () => {
  assert.deepEqual(remarkToggles(getter({})), { inline: true, passed: true, missed: true, analysis: true, maxLength: 120 });
  assert.deepEqual(remarkToggles(getter({ 'remarks.missed': false, 'remarks.maxLength': 60 })), { inline: true, passed: true, missed: false, analysis: true, maxLength: 60 });
});
