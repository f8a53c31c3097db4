// The hexplore VS Code extension: starts hexplore-lsp, draws its remarks inline, shows the
// status of the function at the cursor, and implements the client-side commands of
// lsp/PROTOCOL.md (code lenses) plus views of generated code and pass-by-pass diffs.
//
// The logic lives in modules without a `vscode` import (protocol, remarks, status, settings,
// serverCommand, virtualDocs, run); this file only wires it to the editor.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  type Executable,
  LanguageClient,
  type LanguageClientOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { ViewProvider } from './contentProvider';
import { RemarkDecorations, toRemark, type Toggles } from './decorations';
import {
  errorMessage, FUNCTIONS, type FunctionInfo, functionAt, PASSES, type PassInfo, type Requester, RUN, type RunResult,
} from './protocol';
import { SOURCE } from './remarks';
import { configuredSizes, formatRunResult, integerParameters, parseSize } from './run';
import { ScheduleTreeProvider, VIEW_ID } from './scheduleTreeView';
import { defaultEnvironment, resolveServerCommand, type ServerConfig } from './serverCommand';
import { REMARK_SECTION, remarkToggles, RESTART_SECTIONS, SERVER_SECTIONS, serverSettings } from './settings';
import { type ServerState, statusText } from './status';
import { chooseServer, type Consent } from './trust';
import { type CodeView, parseViewUri, SCHEME, type ViewSpec, viewUriParts } from './virtualDocs';

const LANGUAGES = ['c', 'cpp', 'cuda-cpp'];

interface Target { uri: string; function: string }
interface PassStep { target: Target; passes: PassInfo[]; index: number }

let client: LanguageClient | undefined;
let state: ServerState = 'stopped';
let stateDetail = '';
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let decorations: RemarkDecorations;
let views: ViewProvider;
let scheduleTree: ScheduleTreeProvider;
let lastStep: PassStep | undefined;
const functionsCache = new Map<string, { version: number; result: Promise<FunctionInfo[]> }>();
let statusTimer: NodeJS.Timeout | undefined;

function config(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('hexplore', scope);
}

function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

function isSource(doc: vscode.TextDocument): boolean {
  return doc.uri.scheme === 'file' && LANGUAGES.includes(doc.languageId);
}

/** Sends a request to the running server; rejects when there is none. */
function requester(): Requester | undefined {
  const c = client;
  if (!c || !c.isRunning()) return undefined;
  return (method, params) => c.sendRequest(method, params);
}

async function request<T>(method: string, params: object, token?: vscode.CancellationToken): Promise<T> {
  const c = client;
  if (!c || !c.isRunning()) throw new Error('hexplore-lsp is not running (see the "hexplore" output channel)');
  return (token ? c.sendRequest(method, params, token) : c.sendRequest(method, params)) as Promise<T>;
}

// ----------------------------------------------------------------------------- the server

/** The modal question before a workspace's own `.venv/bin/hexplore-lsp` starts (trust.ts). */
async function askWorkspaceServer(command: string): Promise<Consent> {
  const allow = 'Allow';
  const onPath = 'Use hexplore-lsp on PATH';
  const choice = await vscode.window.showWarningMessage(
    `hexplore: start the language server of this workspace, ${command}? It is a program from the folder you opened: allow it only if you trust that folder.`,
    { modal: true },
    allow,
    onPath,
  );
  return choice === allow ? 'allow' : choice === onPath ? 'path' : undefined;
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const cfg = config();
  const roots = workspaceRoots();
  const serverConfig: ServerConfig = {
    serverPath: cfg.get<string>('server.path', ''), pythonPath: cfg.get<string>('server.pythonPath', ''), args: cfg.get<string[]>('server.args', []),
  };
  const env = defaultEnvironment(roots, vscode.workspace.isTrusted);
  let resolved = resolveServerCommand(serverConfig, env);
  if (!('error' in resolved)) resolved = await chooseServer(resolved, serverConfig, env, askWorkspaceServer, context.workspaceState);
  if ('error' in resolved) {
    setState('failed', resolved.error);
    output.appendLine(resolved.error);
    const choice = await vscode.window.showErrorMessage(`hexplore: ${resolved.error}`, 'Open Settings');
    if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'hexplore.server');
    return;
  }
  output.appendLine(`starting ${resolved.command} ${resolved.args.join(' ')} (from ${resolved.origin})`);
  const executable: Executable = {
    command: resolved.command,
    args: resolved.args,
    transport: TransportKind.stdio,
    options: roots.length ? { cwd: roots[0] } : undefined,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
    outputChannel: output,
    traceOutputChannel: output,
    diagnosticCollectionName: 'hexplore',
    // clientCommands: the lenses' commands are this extension's own (the server would register
    // them for workspace/executeCommand, and the language client registers those a second time).
    initializationOptions: { ...serverSettings((k) => cfg.get(k), roots[0]), clientCommands: true },
    middleware: {
      workspace: {
        // The server pulls the `hexplore` section: answer with exactly its keys.
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) return answer;
          return params.items.map((item, i) => {
            if (item.section !== 'hexplore') return answer[i];
            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
            const folder = scope ? vscode.workspace.getWorkspaceFolder(scope)?.uri.fsPath : roots[0];
            return serverSettings((k) => config(scope).get(k), folder);
          });
        },
      },
    },
  };
  const c = new LanguageClient('hexplore', 'hexplore', { run: executable, debug: executable }, clientOptions);
  client = c;
  c.onDidChangeState((e) => {
    if (client !== c) return;
    setState(e.newState === State.Running ? 'running' : e.newState === State.Starting ? 'starting' : 'stopped');
  });
  setState('starting');
  try {
    await c.start();
    setState('running');
    context.subscriptions.push({ dispose: () => void c.stop().catch(() => undefined) });
  } catch (e) {
    setState('failed', errorMessage(e));
    output.appendLine(`hexplore-lsp failed to start: ${errorMessage(e)}`);
  }
  functionsCache.clear();
  views.refreshAll();
  scheduleStatus();
  scheduleTree.schedule(true);
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  functionsCache.clear();
  if (c) {
    try {
      await c.stop(5000);
    } catch (e) {
      output.appendLine(`stopping hexplore-lsp: ${errorMessage(e)}`);
    }
    await c.dispose().catch(() => undefined);
  }
  setState('stopped');
}

function setState(s: ServerState, detail = ''): void {
  state = s;
  stateDetail = detail;
  scheduleStatus();
}

function pushConfiguration(): void {
  const c = client;
  if (!c || !c.isRunning()) return;
  const settings = serverSettings((k) => config().get(k), workspaceRoots()[0]);
  void c.sendNotification(DidChangeConfigurationNotification.type, { settings: { hexplore: settings } });
}

// ----------------------------------------------------------------------------- status and remarks

function functionsOf(doc: vscode.TextDocument): Promise<FunctionInfo[]> {
  const key = doc.uri.toString();
  const cached = functionsCache.get(key);
  if (cached && cached.version === doc.version) return cached.result;
  const result = request<FunctionInfo[]>(FUNCTIONS, { uri: key });
  functionsCache.set(key, { version: doc.version, result });
  result.catch(() => {
    if (functionsCache.get(key)?.result === result) functionsCache.delete(key);
  });
  return result;
}

function scheduleStatus(): void {
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => void updateStatus(), 150);
}

async function updateStatus(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  let fn: FunctionInfo | undefined;
  let remarks: ReturnType<typeof toRemark>[] = [];
  if (state === 'running' && editor && isSource(editor.document)) {
    try {
      const fns = await functionsOf(editor.document);
      const pos = editor.selection.active;
      fn = functionAt(fns, { line: pos.line, character: pos.character });
      remarks = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.source === SOURCE).map(toRemark);
    } catch {
      fn = undefined; // the document changed meanwhile, or the server failed; the next update says
    }
    if (vscode.window.activeTextEditor !== editor) return;
  }
  const s = statusText(state, fn, remarks, stateDetail);
  status.text = s.text;
  status.tooltip = s.tooltip;
  status.show();
}

function toggles(scope?: vscode.Uri): Toggles {
  const cfg = config(scope);
  return remarkToggles((k) => cfg.get(k));
}

function redraw(editor: vscode.TextEditor): void {
  if (!isSource(editor.document)) return;
  const diags = vscode.languages.getDiagnostics(editor.document.uri);
  decorations.update(editor, diags, toggles(editor.document.uri));
}

function redrawAll(): void {
  for (const e of vscode.window.visibleTextEditors) redraw(e);
}

async function toggle(key: 'inline' | 'passed' | 'missed' | 'analysis'): Promise<void> {
  const cfg = config();
  const now = cfg.get<boolean>(`remarks.${key}`, true);
  const inspected = cfg.inspect(`remarks.${key}`);
  const where = inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await cfg.update(`remarks.${key}`, !now, where);
  vscode.window.setStatusBarMessage(`hexplore: inline ${key === 'inline' ? 'remarks' : key + ' remarks'} ${now ? 'off' : 'on'}`, 2500);
}

// ----------------------------------------------------------------------------- commands

function isTarget(x: unknown): x is Target {
  return !!x && typeof (x as Target).uri === 'string' && typeof (x as Target).function === 'string';
}

/** The function a command is about: the code lens argument, else the one at the cursor (or the
 * one a hexplore: view shows), else the user's pick. */
async function target(arg: unknown): Promise<Target | undefined> {
  if (isTarget(arg)) return { uri: arg.uri, function: arg.function };
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.uri.scheme === SCHEME) {
    const spec = parseViewUri({ scheme: SCHEME, query: editor.document.uri.query });
    if (!('error' in spec)) return { uri: spec.source, function: spec.function };
  }
  const doc = editor && isSource(editor.document) ? editor.document : vscode.window.visibleTextEditors.find((e) => isSource(e.document))?.document;
  if (!doc) {
    void vscode.window.showWarningMessage('hexplore: open a C, C++ or CUDA file first.');
    return undefined;
  }
  let fns: FunctionInfo[];
  try {
    fns = await functionsOf(doc);
  } catch (e) {
    void vscode.window.showErrorMessage(`hexplore: ${errorMessage(e)}`);
    return undefined;
  }
  if (editor && editor.document === doc) {
    const pos = editor.selection.active;
    const at = functionAt(fns, { line: pos.line, character: pos.character });
    if (at) return { uri: doc.uri.toString(), function: at.name };
  }
  if (fns.length === 0) {
    void vscode.window.showWarningMessage('hexplore: this file defines no functions.');
    return undefined;
  }
  const sorted = [...fns].sort((a, b) => Number(b.scops > 0) - Number(a.scops > 0));
  const pick = await vscode.window.showQuickPick(
    sorted.map((f) => ({ label: f.name, description: `${f.scops} loop nest(s), ${f.loops} loop(s)`, fn: f })),
    { placeHolder: 'hexplore: which function?' },
  );
  return pick ? { uri: doc.uri.toString(), function: pick.fn.name } : undefined;
}

function viewUri(spec: ViewSpec): vscode.Uri {
  return vscode.Uri.from(viewUriParts(spec));
}

async function openView(spec: ViewSpec): Promise<void> {
  const uri = viewUri(spec);
  views.refresh(uri); // an already open view shows the current answer
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
}

async function showView(arg: unknown, view: 'scheduleTree' | CodeView): Promise<void> {
  const t = await target(arg);
  if (t) await openView({ source: t.uri, function: t.function, view });
}

async function passesOf(t: Target): Promise<PassInfo[] | undefined> {
  try {
    return await request<PassInfo[]>(PASSES, { uri: t.uri, function: t.function });
  } catch (e) {
    void vscode.window.showErrorMessage(`hexplore: ${errorMessage(e)}`);
    return undefined;
  }
}

async function pickPass(t: Target, passes: PassInfo[], diff: boolean): Promise<number | undefined> {
  const items = passes.map((p, index) => ({
    label: p.name,
    description: `${p.elapsed_ms} ms · ${p.remark_count} remark(s)`,
    detail: diff ? (index === 0 ? 'the first pass: shown alone' : `diff against ${passes[index - 1].name}`) : undefined,
    index,
  }));
  const pick = await vscode.window.showQuickPick(items, { placeHolder: `hexplore: passes of ${t.function}` });
  return pick?.index;
}

async function showPassStep(step: PassStep): Promise<void> {
  lastStep = step;
  const { target: t, passes, index } = step;
  const right: ViewSpec = { source: t.uri, function: t.function, view: 'artifact', pass: passes[index].name };
  if (index === 0) return openView(right);
  const left: ViewSpec = { ...right, pass: passes[index - 1].name };
  views.refresh(viewUri(left));
  views.refresh(viewUri(right));
  await vscode.commands.executeCommand(
    'vscode.diff',
    viewUri(left),
    viewUri(right),
    `${t.function}: ${passes[index - 1].name} ↔ ${passes[index].name} (${index + 1}/${passes.length})`,
    { preview: true, viewColumn: vscode.ViewColumn.Beside },
  );
}

async function stepThroughPasses(arg: unknown): Promise<void> {
  const t = await target(arg);
  if (!t) return;
  const passes = await passesOf(t);
  if (!passes) return;
  if (passes.length === 0) {
    void vscode.window.showInformationMessage(`hexplore: ${t.function} has no passes.`);
    return;
  }
  const index = await pickPass(t, passes, true);
  if (index !== undefined) await showPassStep({ target: t, passes, index });
}

async function stepBy(delta: number): Promise<void> {
  if (!lastStep) return stepThroughPasses(undefined);
  const passes = (await passesOf(lastStep.target)) ?? lastStep.passes; // the trace may have changed
  const current = passes.findIndex((p) => p.name === lastStep!.passes[lastStep!.index].name);
  const index = Math.min(Math.max((current < 0 ? lastStep.index : current) + delta, 0), passes.length - 1);
  await showPassStep({ target: lastStep.target, passes, index });
}

async function showArtifact(arg: unknown): Promise<void> {
  const t = await target(arg);
  if (!t) return;
  const passes = await passesOf(t);
  if (!passes) return;
  const index = await pickPass(t, passes, false);
  if (index !== undefined) await openView({ source: t.uri, function: t.function, view: 'artifact', pass: passes[index].name });
}

async function runKernel(arg: unknown): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage('hexplore: Run builds and runs code of this workspace; trust the workspace to use it.');
    return;
  }
  const t = await target(arg);
  if (!t) return;
  const uri = vscode.Uri.parse(t.uri);
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === t.uri) ?? (await vscode.workspace.openTextDocument(uri));
  let params: string[] = [];
  try {
    const fn = (await functionsOf(doc)).find((f) => f.name === t.function);
    if (fn) {
      const text = doc.getText(new vscode.Range(fn.range.start.line, fn.range.start.character, fn.range.end.line, fn.range.end.character));
      params = integerParameters(text.split('{')[0]);
    }
  } catch (e) {
    void vscode.window.showErrorMessage(`hexplore: ${errorMessage(e)}`);
    return;
  }
  // Sizes the `hexplore.run.sizes` setting gives are used as they are; the others are asked for.
  const { sizes, ask } = configuredSizes(config(uri).get('run.sizes', {}), params);
  for (const [i, p] of ask.entries()) {
    const answer = await vscode.window.showInputBox({
      title: `hexplore: run ${t.function} (${i + 1}/${ask.length})`,
      prompt: `value of the size parameter \`${p}\` (empty: 64, halved to fit fixed-size arrays)`,
      placeHolder: '64',
      validateInput: (s) => parseSize(s).error,
      ignoreFocusOut: true,
    });
    if (answer === undefined) return; // Escape cancels the run
    const v = parseSize(answer).value;
    if (v !== undefined) sizes[p] = v;
  }
  const timeoutSeconds = config(uri).get<number>('run.timeoutSeconds', 120);
  const device = config(uri).get<string>('run.device', 'cpu');
  output.show(true);
  output.appendLine(`hexplore: running ${t.function} (${Object.entries(sizes).map(([k, v]) => `${k}=${v}`).join(', ') || 'default sizes'}) …`);
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `hexplore: running ${t.function} on ${device}`, cancellable: true },
      (_progress, token) => request<RunResult>(RUN, { uri: t.uri, function: t.function, sizes, timeoutSeconds, device }, token),
    );
    for (const line of formatRunResult(t.function, result)) output.appendLine(line);
    const msg = `hexplore: ${t.function}: ${result.status} — ${result.message}`;
    if (result.status === 'ok') void vscode.window.showInformationMessage(msg);
    else void vscode.window.showWarningMessage(msg, 'Show Output').then((c) => c && output.show());
  } catch (e) {
    output.appendLine(`hexplore run ${t.function}: ${errorMessage(e)}`);
    void vscode.window.showErrorMessage(`hexplore: run ${t.function}: ${errorMessage(e)}`);
  }
}

// ----------------------------------------------------------------------------- activation

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('hexplore');
  status = vscode.window.createStatusBarItem('hexplore.status', vscode.StatusBarAlignment.Left, 50);
  status.name = 'hexplore';
  status.command = 'hexplore.showOutput';
  decorations = new RemarkDecorations((file) => vscode.Uri.joinPath(context.extensionUri, 'media', file));
  views = new ViewProvider(requester);
  context.subscriptions.push(output, status, decorations, views, vscode.workspace.registerTextDocumentContentProvider(SCHEME, views));

  const command = (id: string, fn: (...args: unknown[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  command('hexplore.restartServer', async () => {
    await stopClient();
    await startClient(context);
  });
  command('hexplore.showOutput', () => output.show());
  command('hexplore.showScheduleTree', (arg) => showView(arg, 'scheduleTree'));
  command('hexplore.showCuda', (arg) => showView(arg, 'cuda'));
  command('hexplore.showOpenCL', (arg) => showView(arg, 'opencl'));
  command('hexplore.showC', (arg) => showView(arg, 'c'));
  command('hexplore.showPtx', (arg) => showView(arg, 'ptx'));
  command('hexplore.showLlvmIr', (arg) => showView(arg, 'llvm'));
  command('hexplore.showPasses', (arg) => stepThroughPasses(arg));
  command('hexplore.nextPass', () => stepBy(1));
  command('hexplore.previousPass', () => stepBy(-1));
  command('hexplore.showArtifact', (arg) => showArtifact(arg));
  command('hexplore.run', (arg) => runKernel(arg));
  command('hexplore.toggleRemarks', () => toggle('inline'));
  command('hexplore.togglePassedRemarks', () => toggle('passed'));
  command('hexplore.toggleMissedRemarks', () => toggle('missed'));
  command('hexplore.toggleAnalysisRemarks', () => toggle('analysis'));
  command('hexplore.refreshScheduleTree', () => scheduleTree.refresh(true));

  scheduleTree = new ScheduleTreeProvider(requester, functionsOf, isSource);
  const treeView = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: scheduleTree, showCollapseAll: true });
  scheduleTree.onMessage = (m) => (treeView.message = m);
  treeView.message = scheduleTree.message;
  context.subscriptions.push(scheduleTree, treeView);

  context.subscriptions.push(
    vscode.languages.onDidChangeDiagnostics((e) => {
      const changed = new Set(e.uris.map((u) => u.toString()));
      for (const editor of vscode.window.visibleTextEditors) if (changed.has(editor.document.uri.toString())) redraw(editor);
      for (const uri of changed) scheduleTree.sourceChanged(uri);
      scheduleStatus();
    }),
    vscode.window.onDidChangeVisibleTextEditors(() => redrawAll()),
    vscode.window.onDidChangeActiveTextEditor(() => {
      scheduleStatus();
      scheduleTree.schedule();
    }),
    vscode.window.onDidChangeTextEditorSelection(() => {
      scheduleStatus();
      scheduleTree.schedule();
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (isSource(e.document) && e.contentChanges.length) views.sourceChanged(e.document.uri.toString());
    }),
    vscode.workspace.onDidCloseTextDocument((d) => functionsCache.delete(d.uri.toString())),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      output.appendLine('workspace trusted: restarting hexplore-lsp');
      await stopClient();
      await startClient(context);
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (RESTART_SECTIONS.some((s) => e.affectsConfiguration(s))) {
        output.appendLine('hexplore.server settings changed: restarting hexplore-lsp');
        await stopClient();
        await startClient(context);
        return;
      }
      if (SERVER_SECTIONS.some((s) => e.affectsConfiguration(s))) {
        pushConfiguration();
        functionsCache.clear();
      }
      if (e.affectsConfiguration(REMARK_SECTION)) redrawAll();
    }),
    { dispose: () => clearTimeout(statusTimer) },
  );
  scheduleStatus();
  await startClient(context);
  redrawAll();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
