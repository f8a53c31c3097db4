import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Environment, resolveServerCommand } from '../../src/serverCommand';

const env = (executables: string[], more: Partial<Environment> = {}): Environment => ({
  workspaceFolders: ['/ws'], pathEnv: '/usr/bin:/opt/bin', platform: 'linux', isExecutable: (f) => executables.includes(f), trusted: true, ...more,
});
const none = { serverPath: '', pythonPath: '', args: [] as string[] };

test('explicit path first, with ${workspaceFolder} and relative paths resolved', () => {
  assert.deepEqual(resolveServerCommand({ ...none, serverPath: '${workspaceFolder}/bin/lsp', args: ['--log-level', 'INFO'] }, env([])), {
    command: '/ws/bin/lsp', args: ['--log-level', 'INFO'], origin: 'hexplore.server.path',
  });
  assert.equal((resolveServerCommand({ ...none, serverPath: 'tools/hexplore-lsp' }, env([])) as { command: string }).command, '/ws/tools/hexplore-lsp');
  assert.equal((resolveServerCommand({ ...none, serverPath: 'hexplore-lsp' }, env([])) as { command: string }).command, 'hexplore-lsp');
});

test('pythonPath runs the module behind the hexplore-lsp script', () => {
  assert.deepEqual(resolveServerCommand({ ...none, pythonPath: '/usr/bin/python3' }, env([])), {
    command: '/usr/bin/python3', args: ['-m', 'lsp.server'], origin: 'hexplore.server.pythonPath',
  });
});

test('then the workspace .venv, then PATH', () => {
  assert.deepEqual(resolveServerCommand(none, env(['/ws/.venv/bin/hexplore-lsp', '/opt/bin/hexplore-lsp'])), {
    command: '/ws/.venv/bin/hexplore-lsp', args: [], origin: 'workspace .venv',
  });
  assert.deepEqual(resolveServerCommand(none, env(['/opt/bin/hexplore-lsp'])), { command: '/opt/bin/hexplore-lsp', args: [], origin: 'PATH' });
  // Windows venvs keep scripts in Scripts\, as .exe
  const seen: string[] = [];
  resolveServerCommand(none, env([], { platform: 'win32', pathEnv: '', isExecutable: (f) => (seen.push(f), false) }));
  assert.equal(seen.length, 1);
  assert.match(seen[0], /\.venv.Scripts.hexplore-lsp\.exe$/);
});

test('not found: say what was tried', () => {
  const r = resolveServerCommand(none, env([]));
  assert.ok('error' in r);
  assert.match(r.error, /tried \/ws\/.venv\/bin\/hexplore-lsp, hexplore-lsp on PATH/);
  assert.match(r.error, /hexplore\.server\.path/);
});

test('an untrusted workspace: never its .venv, nor a configured path inside it', () => {
  const untrusted = { trusted: false };
  assert.deepEqual(resolveServerCommand(none, env(['/ws/.venv/bin/hexplore-lsp', '/opt/bin/hexplore-lsp'], untrusted)), {
    command: '/opt/bin/hexplore-lsp', args: [], origin: 'PATH',
  });
  const r = resolveServerCommand(none, env(['/ws/.venv/bin/hexplore-lsp'], untrusted));
  assert.ok('error' in r);
  assert.match(r.error, /tried hexplore-lsp on PATH\) \(a workspace \.venv is not used: the workspace is not trusted\)/);
  for (const serverPath of ['${workspaceFolder}/.venv/bin/hexplore-lsp', 'tools/hexplore-lsp', '/ws/x']) {
    const e = resolveServerCommand({ ...none, serverPath }, env([], untrusted));
    assert.ok('error' in e, serverPath);
    assert.match(e.error, /inside the workspace folder \/ws, which is not trusted/);
  }
  const py = resolveServerCommand({ ...none, pythonPath: '.venv/bin/python' }, env([], untrusted));
  assert.ok('error' in py && /hexplore\.server\.pythonPath/.test(py.error));
  // outside the workspace, a user's path is used as given
  assert.deepEqual(resolveServerCommand({ ...none, serverPath: '/opt/hx/hexplore-lsp' }, env([], untrusted)), {
    command: '/opt/hx/hexplore-lsp', args: [], origin: 'hexplore.server.path',
  });
  assert.ok(!('error' in resolveServerCommand({ ...none, serverPath: '/wsx/hexplore-lsp' }, env([], untrusted))));
});
