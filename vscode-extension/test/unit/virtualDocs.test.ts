import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Requester, ScheduleNode } from '../../src/protocol';
import { parseViewUri, passLanguage, renderScheduleTree, renderView, viewUri, viewUriParts } from '../../src/virtualDocs';

const source = 'file:///work/a%20b/demo.c';

test('view URIs round-trip', () => {
  for (const spec of [
    { source, function: 'matmul', view: 'scheduleTree' as const },
    { source, function: 'matmul', view: 'cuda' as const },
    { source, function: 'matmul', view: 'artifact' as const, pass: 'dependences[0]' },
  ]) {
    assert.deepEqual(parseViewUri(viewUri(spec)), spec);
    const parts = viewUriParts(spec);
    assert.deepEqual(parseViewUri({ scheme: parts.scheme, query: parts.query }), spec);
  }
});

test('view URI paths name the tab and the language', () => {
  assert.equal(viewUriParts({ source, function: 'matmul', view: 'cuda' }).path, '/matmul/cuda.cu');
  assert.equal(viewUriParts({ source, function: 'matmul', view: 'opencl' }).path, '/matmul/opencl.cl');
  assert.equal(viewUriParts({ source, function: 'matmul', view: 'llvm' }).path, '/matmul/llvm.ll');
  assert.equal(viewUriParts({ source, function: 'matmul', view: 'scheduleTree' }).path, '/matmul/schedule-tree.txt');
  assert.equal(viewUriParts({ source, function: 'f', view: 'artifact', pass: 'polyhedral-model[0]' }).path, '/f/polyhedral-model[0].txt');
  assert.equal(viewUriParts({ source, function: 'f', view: 'artifact', pass: 'codegen-cuda[0]' }).path, '/f/codegen-cuda[0].cu');
  assert.equal(viewUri({ source: 'file:///x.c', function: 'f', view: 'c' }), 'hexplore:/f/c.c?source=file%3A%2F%2F%2Fx.c&function=f&view=c');
});

test('malformed view URIs say what is wrong', () => {
  assert.match((parseViewUri('file:///x?view=cuda') as { error: string }).error, /not a hexplore: URI/);
  assert.match((parseViewUri('hexplore:/x?function=f&view=cuda') as { error: string }).error, /no source/);
  assert.match((parseViewUri('hexplore:/x?source=s&view=cuda') as { error: string }).error, /no function/);
  assert.match((parseViewUri('hexplore:/x?source=s&function=f&view=asm') as { error: string }).error, /unknown view `asm`/);
  assert.match((parseViewUri('hexplore:/x?source=s&function=f&view=artifact') as { error: string }).error, /needs a pass/);
});

test('pass languages follow the server table, in its order', () => {
  assert.equal(passLanguage('dependences[0]'), 'plaintext');
  assert.equal(passLanguage('codegen-cuda[0]'), 'cuda-cpp');
  assert.equal(passLanguage('codegen-opencl'), 'opencl');
  assert.equal(passLanguage('codegen-c[1]'), 'c');
  assert.equal(passLanguage('openmp'), 'c');
  assert.equal(passLanguage('llvm-ir'), 'llvm');
  assert.equal(passLanguage('cuda-ptx'), 'ptx');
  assert.equal(passLanguage('scop-detect'), 'plaintext');
});

/** A scripted requester (unit tests only; the integration test talks to the real server). */
function scripted(answers: Record<string, (p: Record<string, unknown>) => unknown>): { request: Requester; calls: [string, object][] } {
  const calls: [string, object][] = [];
  const request: Requester = async (method, params) => {
    calls.push([method, params]);
    const a = answers[method];
    if (!a) throw new Error(`no answer for ${method}`);
    return a(params as Record<string, unknown>);
  };
  return { request, calls };
}

test('a code view shows the artifacts of the passes in its language', async () => {
  const { request, calls } = scripted({
    'hexplore/passes': () => [{ name: 'frontend' }, { name: 'codegen-cuda[0]' }, { name: 'codegen-cuda[1]' }, { name: 'codegen-opencl[0]' }],
    'hexplore/artifact': (p) => ({ text: `text of ${p.pass}\n`, language: 'cuda-cpp' }),
  });
  const text = await renderView(request, { source, function: 'f', view: 'cuda' });
  assert.equal(text, '// ---- codegen-cuda[0] ----\ntext of codegen-cuda[0]\n\n// ---- codegen-cuda[1] ----\ntext of codegen-cuda[1]\n');
  assert.deepEqual(calls.map(([m, p]) => [m, (p as { pass?: string }).pass]), [
    ['hexplore/passes', undefined],
    ['hexplore/artifact', 'codegen-cuda[0]'],
    ['hexplore/artifact', 'codegen-cuda[1]'],
  ]);
});

test('a view the server cannot produce shows its answer, as a comment', async () => {
  const { request } = scripted({
    'hexplore/passes': () => [{ name: 'frontend' }],
    'hexplore/artifact': () => {
      throw Object.assign(new Error('`f` has no pass `llvm` (passes: frontend)'), { code: -32602 });
    },
  });
  assert.equal(
    await renderView(request, { source, function: 'f', view: 'llvm' }),
    '; hexplore-lsp produced no LLVM IR for `f`.\n; hexplore/artifact {"pass": "llvm"} answered: `f` has no pass `llvm` (passes: frontend)\n',
  );
  const failing = scripted({});
  assert.equal(
    await renderView(failing.request, { source, function: 'f', view: 'scheduleTree' }),
    'hexplore: scheduleTree of `f` failed:\nno answer for hexplore/scheduleTree\n',
  );
});

test('schedule trees as indented text', () => {
  const at = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 9 } });
  const tree: ScheduleNode = {
    kind: 'function', detail: 'f', range: at(0), children: [
      { kind: 'domain', detail: 'f#scop0', arcana: '{ S0[i] : 0 <= i < 8 }', range: at(1), children: [
        { kind: 'band', detail: 'i (sequential)', arcana: '[{ S0[i] -> [(i)] }]', range: at(1), loop: 'i', status: 'sequential', carried: ['flow S0→S0 (1)'], children: [
          { kind: 'leaf', detail: 'S0: a[i] = a[i-1]', range: at(2), children: [] },
        ] },
      ] },
    ],
  };
  assert.equal(renderScheduleTree(tree), [
    'function f    (line 1)',
    '  domain f#scop0    (line 2)',
    '    { S0[i] : 0 <= i < 8 }',
    '    band i (sequential)    (line 2)',
    '      [{ S0[i] -> [(i)] }]',
    '      carries: flow S0→S0 (1)',
    '      leaf S0: a[i] = a[i-1]    (line 3)',
    '',
  ].join('\n'));
});
