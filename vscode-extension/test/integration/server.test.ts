// Integration: the real hexplore-lsp (the repository's .venv, or $HEXPLORE_LSP), driven over stdio
// by vscode-languageserver-protocol, the library vscode-languageclient is built on. No mocks:
// diagnostics, a custom request and the text of virtual documents come from the Python server.
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  createProtocolConnection, type ProtocolConnection, StreamMessageReader, StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { FUNCTIONS, type FunctionInfo, functionAt, PASSES, type PassInfo, type Requester, RUN, type RunResult } from '../../src/protocol';
import { fromLspSeverity, lineDecorations } from '../../src/remarks';
import { formatRunResult } from '../../src/run';
import { defaultEnvironment, resolveServerCommand } from '../../src/serverCommand';
import { serverSettings } from '../../src/settings';
import { statusText } from '../../src/status';
import { passLanguage, renderView } from '../../src/virtualDocs';

const extRoot = path.resolve(__dirname, '../../..');
const repo = path.dirname(extRoot);
const manifest = JSON.parse(fs.readFileSync(path.join(extRoot, 'package.json'), 'utf8'));

interface Diag {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity?: number; code?: string; source?: string; message: string;
  codeDescription?: { href: string };
  relatedInformation?: { location: { uri: string; range: Diag['range'] }; message: string }[];
}
interface Published { uri: string; version?: number; diagnostics: Diag[] }

// The server: $HEXPLORE_LSP, else what the extension itself would pick for a workspace at the repository root.
const resolved = process.env.HEXPLORE_LSP
  ? { command: process.env.HEXPLORE_LSP, args: [] as string[], origin: '$HEXPLORE_LSP' }
  : resolveServerCommand({ serverPath: '', pythonPath: '', args: [] }, defaultEnvironment([repo], true)); // the test trusts its own repository
const skip = 'error' in resolved ? `no hexplore-lsp: ${resolved.error}` : false;
const opts = { skip, timeout: 60_000 };

let proc: cp.ChildProcess;
let conn: ProtocolConnection;
let stderr = '';
const published: Published[] = [];
const waiters: { pred: (p: Published) => boolean; resolve: (p: Published) => void }[] = [];
const messages: { type: number; message: string }[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hexplore-vscode-'));
const file = path.join(dir, 'demo.c');
const uri = pathToFileURL(file).href;
let request: Requester;

function diagnosticsWhere(pred: (p: Published) => boolean, ms = 30000): Promise<Published> {
  const found = published.find(pred);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no matching publishDiagnostics in ${ms} ms; stderr:\n${stderr}`)), ms);
    waiters.push({ pred, resolve: (p) => { clearTimeout(timer); resolve(p); } });
  });
}

/** The package.json default of every contributed `hexplore.*` setting. */
const defaults = (key: string) => manifest.contributes.configuration.properties[`hexplore.${key}`]?.default;

before(async () => {
  if ('error' in resolved) return;
  fs.copyFileSync(path.join(extRoot, 'test', 'fixtures', 'demo.c'), file);
  proc = cp.spawn(resolved.command, resolved.args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: dir });
  proc.stderr!.on('data', (d) => (stderr += d));
  await new Promise<void>((resolve, reject) => {
    proc.once('spawn', () => resolve());
    proc.once('error', (e) => reject(new Error(`cannot start hexplore-lsp (${resolved.origin}): ${resolved.command}: ${e.message}`)));
  });
  conn = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onNotification('textDocument/publishDiagnostics', (p: Published) => {
    published.push(p);
    for (const w of waiters.splice(0)) (w.pred(p) ? w.resolve(p) : waiters.push(w));
  });
  conn.onNotification('window/showMessage', (m: { type: number; message: string }) => messages.push(m));
  conn.onNotification('window/logMessage', () => undefined);
  conn.onNotification('$/progress', () => undefined);
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/configuration', (p: { items: { section?: string }[] }) =>
    p.items.map((i) => (i.section === 'hexplore' ? serverSettings(defaults, dir) : null)));
  conn.listen();
  request = (method, params) => conn.sendRequest(method, params) as Promise<unknown>;
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    capabilities: { general: { positionEncodings: ['utf-16'] }, workspace: { configuration: true }, textDocument: { publishDiagnostics: { relatedInformation: true } } },
    initializationOptions: serverSettings(defaults, dir), // the extension's mapping of its default settings
  });
  conn.sendNotification('initialized', {});
  conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'c', version: 1, text: fs.readFileSync(file, 'utf8') } });
}, { timeout: 60_000 });

after(async () => {
  if (!conn) return;
  try {
    await Promise.race([conn.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 3000))]);
    conn.sendNotification('exit');
  } catch {
    // the process may already be gone
  }
  await new Promise((r) => {
    if (proc.exitCode !== null) return r(null);
    const t = setTimeout(() => { proc.kill(); r(null); }, 3000);
    proc.on('exit', () => { clearTimeout(t); r(null); });
  });
  conn.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

// Observed from hexplore-lsp on examples/demo.c: [start line, char, end line, char, severity, code, message].
const EXPECTED = [
  [12, 2, 17, 5, 4, 'NoAliasAssumption', 'assuming the arrays `A`, `B`, `C` do not overlap in memory (mark the pointers `restrict` to make it explicit)'],
  [12, 2, 12, 29, 4, 'ParallelLoop', 'loop `i` is parallel: no iteration depends on another'],
  [12, 2, 17, 5, 4, 'ScopDetected', 'modeled loop nest: 2 statement(s), 3 loop(s); sizes (parameters): `n`'],
  [13, 4, 13, 31, 4, 'ParallelLoop', 'loop `j` is parallel: no iteration depends on another'],
  [15, 6, 15, 33, 4, 'ReductionLoop', 'loop `k` carries only the reduction into `C`: it can run in parallel as a reduction'],
  [16, 8, 16, 44, 4, 'Reduction', '`C[i][j]` is a `+` reduction over loop(s) `k`'],
  [22, 2, 22, 34, 4, 'LoopCarriedDependence', 'loop `t` is not parallel: it carries the flow dependence S1 -> S0 on `A` (distance (1)) and 3 more'],
  [22, 2, 29, 3, 4, 'NoAliasAssumption', 'assuming the arrays `A`, `B` do not overlap in memory (mark the pointers `restrict` to make it explicit)'],
  [22, 2, 29, 3, 4, 'ScopDetected', 'modeled loop nest: 2 statement(s), 5 loop(s); sizes (parameters): `n`, `tsteps`'],
  [23, 4, 23, 35, 4, 'ParallelLoop', 'loop `i` is parallel: no iteration depends on another'],
  [24, 6, 24, 37, 4, 'ParallelLoop', 'loop `j` is parallel: no iteration depends on another'],
  [26, 4, 26, 35, 4, 'ParallelLoop', 'loop `i` is parallel: no iteration depends on another'],
  [27, 6, 27, 37, 4, 'ParallelLoop', 'loop `j` is parallel: no iteration depends on another'],
  [35, 6, 35, 12, 2, 'IndirectAccess', '`y[idx[i]]` takes its subscript from the array `idx`, so which element it touches is only known at run time'],
  [43, 2, 43, 29, 4, 'ParallelLoop', 'loop `i` is parallel: no iteration depends on another'],
  [43, 2, 49, 3, 4, 'ScopDetected', 'modeled loop nest: 3 statement(s), 2 loop(s); sizes (parameters): none'],
  [45, 4, 45, 31, 4, 'ParallelLoop', 'loop `j` is parallel: no iteration depends on another'],
  [52, 2, 52, 33, 2, 'IndirectAccess', '`C[0][idx[scatter_add_i]]` takes its subscript from the array `idx`, so which element it touches is only known at run time'],
  [52, 2, 52, 33, 4, 'InlinedCall', "the call to `scatter_add` is read as the helper's body with its parameters bound to the arguments (`n` = `256`, `idx` = `idx`, `x` = `A[0]`, `y` = `C[0]`): its loops and assignments are modeled like the caller's"],
];

// The schedule tree view of matmul, as renderView shows it: the scheduler's tree (the GPU
// schedule, which fuses S0 into the k band at k = 0).
const SCHEDULE_TREE_MATMUL = [
  'function matmul    (line 12)',
  '  domain matmul#scop0    (line 13)',
  '    [n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n; S1[i, j, k] : 0 <= i < n and 0 <= j < n and 0 <= k < n }',
  '    band i (parallel)    (line 13)',
  '      [n] -> { S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }',
  '      band j (parallel)    (line 14)',
  '        [n] -> { S0[i, j] -> [(j)]; S1[i, j, k] -> [(j)] }',
  '        band k (reduction)    (line 16)',
  '          [n] -> { S0[i, j] -> [(0)]; S1[i, j, k] -> [(k)] }',
  '          carries: flow S1→S1 (0,0,1); anti S1→S1 (0,0,1); output S1→S1 (0,0,1)',
  '          sequence',
  '            filter S0',
  '              [n] -> { S0[i, j] }',
  '              leaf S0: C[i][j] = 0.0    (line 15)',
  '            filter S1',
  '              [n] -> { S1[i, j, k] }',
  '              leaf S1: C[i][j] += (alpha * A[i][k]) * B[k][j]    (line 17)',
  '',
].join('\n');

test('diagnostics of demo.c: exact ranges, severities, codes and messages', opts, async () => {
  const p = await diagnosticsWhere((x) => x.uri === uri && x.version === 1);
  const got = p.diagnostics.map((d) => [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.severity, d.code, d.message]);
  assert.deepEqual(got, EXPECTED);
  for (const d of p.diagnostics) {
    assert.equal(d.source, 'hexplore');
    assert.match(d.codeDescription!.href, new RegExp(`^file://.*/lsp/REMARKS\\.md#${d.code}$`));
  }
  const carried = p.diagnostics.find((d) => d.code === 'LoopCarriedDependence')!;
  assert.deepEqual(carried.relatedInformation!.map((r) => [r.location.uri, r.location.range.start.line, r.message]), [
    [uri, 28, 'source of the flow dependence: statement S1'],
    [uri, 25, 'sink of the flow dependence: statement S0'],
  ]);
  assert.deepEqual(messages, [], 'the default settings are accepted without warnings');
});

test('the inline decorations and the status bar for these diagnostics', opts, async () => {
  const p = await diagnosticsWhere((x) => x.uri === uri && x.version === 1);
  const remarks = p.diagnostics.map((d) => ({ line: d.range.start.line, severity: fromLspSeverity(d.severity), code: d.code ?? '', message: d.message, source: d.source }));
  const decos = lineDecorations(remarks, { passed: true, missed: true, analysis: true }, 80);
  assert.deepEqual(decos.map((d) => [d.line, d.kind]), [
    [12, 'analysis'], [13, 'analysis'], [15, 'analysis'], [16, 'analysis'], [22, 'analysis'], [23, 'analysis'],
    [24, 'analysis'], [26, 'analysis'], [27, 'analysis'], [35, 'missed'], [43, 'analysis'], [45, 'analysis'],
    [52, 'missed'], // main's call of scatter_add, inlined (InlinedCall) and not modeled (IndirectAccess)
  ]);
  assert.equal(decos[9].text, '`y[idx[i]]` takes its subscript from the array `idx`, so which element it touch…');
  assert.deepEqual(lineDecorations(remarks, { passed: true, missed: true, analysis: false }).map((d) => d.line), [35, 52]);

  const fns = (await request(FUNCTIONS, { uri })) as FunctionInfo[];
  assert.deepEqual(fns.map((f) => [f.name, f.scops, f.loops, f.remarks.missed, f.analysed]), [
    ['matmul', 1, 3, 0, true], ['jacobi_2d', 1, 5, 0, true], ['scatter_add', 0, 0, 1, true], ['main', 1, 2, 1, true],
  ]);
  const at = (line: number) => statusText('running', functionAt(fns, { line, character: 4 }), remarks).text;
  assert.equal(at(35), '$(check) scatter_add: not offloaded (IndirectAccess)');
  assert.equal(at(14), '$(check) matmul: modeled, not offloaded');
  assert.equal(at(20), '$(check) hexplore');
});

test('hexplore/passes lists the pipeline of a function', opts, async () => {
  const passes = (await request(PASSES, { uri, function: 'matmul' })) as PassInfo[];
  assert.deepEqual(passes.slice(0, 4).map((p) => p.name), ['frontend', 'scop-detect', 'polyhedral-model[0]', 'dependences[0]']);
  for (const p of passes) {
    assert.equal(typeof p.elapsed_ms, 'number');
    assert.equal(typeof p.remark_count, 'number');
  }
  await assert.rejects(request(PASSES, { uri, function: 'nosuch' }), (e: { code: number; message: string }) =>
    e.code === -32602 && e.message === `hexplore/passes: ${uri} defines no function \`nosuch\` (functions: matmul, jacobi_2d, scatter_add, main)`);
});

test('virtual documents: the provider text from the real server, and after an edit', opts, async () => {
  const tree = await renderView(request, { source: uri, function: 'matmul', view: 'scheduleTree' });
  assert.equal(tree, SCHEDULE_TREE_MATMUL);

  assert.equal(await renderView(request, { source: uri, function: 'matmul', view: 'artifact', pass: 'scop-detect' }), 'scop 0: lines 13-18, 2 statements, 3 loops, parameters [n]\n');

  // Generated CUDA: the server's CUDA passes if it has them; until then, its answer.
  const passes = (await request(PASSES, { uri, function: 'matmul' })) as PassInfo[];
  const cuda = await renderView(request, { source: uri, function: 'matmul', view: 'cuda' });
  if (passes.some((p) => passLanguage(p.name) === 'cuda-cpp')) {
    assert.doesNotMatch(cuda, /produced no CUDA/);
  } else {
    assert.equal(cuda, [
      '// hexplore-lsp produced no CUDA for `matmul`.',
      `// hexplore/artifact {"pass": "cuda"} answered: \`matmul\` has no pass \`cuda\` (passes: ${passes.map((p) => p.name).join(', ')})`,
      '',
    ].join('\n'));
  }
  const missing = await renderView(request, { source: uri, function: 'nosuch', view: 'scheduleTree' });
  assert.equal(missing, `hexplore: scheduleTree of \`nosuch\` failed:\nhexplore/scheduleTree: ${uri} defines no function \`nosuch\` (functions: matmul, jacobi_2d, scatter_add, main)\n`);

  // An edit (two lines inserted above matmul) moves what the views show.
  conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ range: { start: { line: 10, character: 0 }, end: { line: 10, character: 0 } }, text: '/* moved */\n\n' }],
  });
  const after = await renderView(request, { source: uri, function: 'matmul', view: 'scheduleTree' });
  assert.equal(after, SCHEDULE_TREE_MATMUL.replace(/\(line (\d+)\)/g, (_, n) => `(line ${Number(n) + 2})`));
  const p2 = await diagnosticsWhere((x) => x.uri === uri && x.version === 2);
  // the analysis' diagnostics; the offload decisions of unchanged functions may come with them
  const codes = new Set(EXPECTED.map((e) => e[5]));
  const analysis = p2.diagnostics.filter((d) => codes.has(d.code ?? ""));
  assert.deepEqual(analysis.map((d) => d.range.start.line), EXPECTED.map((e) => (e[0] as number) + 2));
});

test('hexplore/run answers what the run command prints', opts, async () => {
  // scatter_add cannot be checked (no modeled nest): a quick, deterministic answer.
  const r = (await request(RUN, { uri, function: 'scatter_add', sizes: { n: 12 }, timeoutSeconds: 60 })) as RunResult;
  const lines = formatRunResult('scatter_add', r);
  assert.deepEqual(lines.map((l) => l.replace(/; [\d.]+ ms$/, '; … ms')), [
    'hexplore run scatter_add: not-checkable — `scatter_add` has 0 loop nests hexplore models; a run checks a function that is one such nest (plus scalar set-up and a return)',
    '  sizes: n=12; kernels: 0; … ms',
  ]);
});

test('settings reach the server under the `hexplore` section', opts, async () => {
  const wrong = serverSettings((k) => (k === 'tileSizes' ? [32, 0] : defaults(k)), dir);
  conn.sendNotification('workspace/didChangeConfiguration', { settings: { hexplore: wrong } });
  const deadline = Date.now() + 10000;
  while (!messages.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(messages, [{ type: 2, message: 'hexplore: ignoring tileSizes: expected a list of positive integers, got [32, 0]' }]);
});
