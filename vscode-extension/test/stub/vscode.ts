// A small stand-in for the `vscode` module: just what decorations.ts and contentProvider.ts use,
// recording what they do so that unit tests can check it.

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === 'number') {
      this.start = new Position(a, b as number);
      this.end = new Position(c as number, d as number);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export enum DiagnosticSeverity { Error = 0, Warning = 1, Information = 2, Hint = 3 }
export enum DecorationRangeBehavior { OpenOpen = 0, ClosedClosed = 1, OpenClosed = 2, ClosedOpen = 3 }

export class Diagnostic {
  code?: string | number | { value: string | number; target: Uri };
  source?: string;
  constructor(readonly range: Range, readonly message: string, readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class MarkdownString {
  constructor(readonly value: string = '') {}
}

export class Uri {
  constructor(readonly scheme: string, readonly path: string, readonly query: string) {}
  static from(c: { scheme: string; path?: string; query?: string }): Uri {
    return new Uri(c.scheme, c.path ?? '', c.query ?? '');
  }
  static parse(s: string): Uri {
    const m = /^([^:]+):([^?]*)(?:\?(.*))?$/.exec(s);
    if (!m) throw new Error(`bad URI ${s}`);
    return new Uri(m[1], m[2], m[3] ?? '');
  }
  static file(p: string): Uri {
    return new Uri('file', p, '');
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...parts].join('/'), '');
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}:${this.path}${this.query ? '?' + this.query : ''}`;
  }
}

type Listener<T> = (e: T) => void;
export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  readonly event = (l: Listener<T>) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export interface DecorationTypeStub { key: string; options: Record<string, unknown>; disposed: boolean; dispose(): void }
let decorationCount = 0;
export const window = {
  createdDecorationTypes: [] as DecorationTypeStub[],
  createTextEditorDecorationType(options: Record<string, unknown>): DecorationTypeStub {
    const t: DecorationTypeStub = { key: `decoration${decorationCount++}`, options, disposed: false, dispose: () => (t.disposed = true) };
    window.createdDecorationTypes.push(t);
    return t;
  },
};

export const workspace = {
  textDocuments: [] as { uri: Uri }[],
};

/** A text editor over `lines`, recording setDecorations calls by decoration type key. */
export function fakeEditor(lines: string[]) {
  const calls = new Map<string, { range: Range; hoverMessage: MarkdownString; renderOptions: { after: { contentText: string } } }[]>();
  return {
    calls,
    document: {
      lineCount: lines.length,
      lineAt: (n: number) => ({ range: new Range(n, 0, n, lines[n].length), text: lines[n] }),
    },
    setDecorations(type: DecorationTypeStub, options: never[]) {
      calls.set(type.key, options);
    },
  };
}

// ---- what activate() touches (test/unit/activate.test.ts) ---------------------------------------

export enum StatusBarAlignment { Left = 1, Right = 2 }
export enum ViewColumn { Active = -1, Beside = -2, One = 1 }
export enum ConfigurationTarget { Global = 1, Workspace = 2, WorkspaceFolder = 3 }
export enum ProgressLocation { SourceControl = 1, Window = 10, Notification = 15 }
export enum TreeItemCollapsibleState { None = 0, Collapsed = 1, Expanded = 2 }
export class TreeItem {
  description?: string;
  tooltip?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(public label: string, public collapsibleState: TreeItemCollapsibleState = TreeItemCollapsibleState.None) {}
}

const noEvent = () => ({ dispose() {} });
export const recorded = {
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  providers: new Map<string, unknown>(),
  errors: [] as string[],
  output: [] as string[],
  statusBar: { text: '', tooltip: '' as unknown, shown: false },
  settings: new Map<string, unknown>(),
  modals: [] as { message: string; items: string[] }[], // modal showWarningMessage calls
  modalAnswer: undefined as string | undefined, // what the user picks in them
  treeViews: new Map<string, unknown>(), // view id -> its TreeDataProvider
};

Object.assign(window, {
  visibleTextEditors: [],
  activeTextEditor: undefined,
  createOutputChannel: (name: string) => ({
    name, appendLine: (l: string) => recorded.output.push(l), append: (l: string) => recorded.output.push(l),
    show() {}, clear() {}, hide() {}, replace() {}, dispose() {},
  }),
  createStatusBarItem: () => {
    const item = {
      name: '', command: '' as unknown,
      set text(t: string) { recorded.statusBar.text = t; }, get text() { return recorded.statusBar.text; },
      set tooltip(t: unknown) { recorded.statusBar.tooltip = t; }, get tooltip() { return recorded.statusBar.tooltip; },
      show: () => (recorded.statusBar.shown = true), hide() {}, dispose() {},
    };
    return item;
  },
  showErrorMessage: async (m: string) => { recorded.errors.push(m); return undefined; },
  showWarningMessage: async (m: string, ...rest: unknown[]) => {
    const options = rest[0] as { modal?: boolean } | undefined;
    if (options && typeof options === 'object' && options.modal) {
      recorded.modals.push({ message: m, items: rest.slice(1) as string[] });
      return recorded.modalAnswer;
    }
    recorded.errors.push(m);
    return undefined;
  },
  showInformationMessage: async () => undefined,
  setStatusBarMessage: () => ({ dispose() {} }),
  onDidChangeVisibleTextEditors: noEvent,
  onDidChangeActiveTextEditor: noEvent,
  onDidChangeTextEditorSelection: noEvent,
  createTreeView: (id: string, options: { treeDataProvider: unknown }) => {
    recorded.treeViews.set(id, options.treeDataProvider);
    return { message: undefined as string | undefined, dispose() {} };
  },
});

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
    recorded.commands.set(id, fn);
    return { dispose: () => recorded.commands.delete(id) };
  },
  executeCommand: async () => undefined,
};

Object.assign(workspace, {
  workspaceFolders: undefined,
  isTrusted: true,
  onDidGrantWorkspaceTrust: noEvent,
  registerTextDocumentContentProvider(scheme: string, provider: unknown) {
    recorded.providers.set(scheme, provider);
    return { dispose: () => recorded.providers.delete(scheme) };
  },
  getConfiguration: () => ({
    get: <T>(key: string, dflt?: T) => (recorded.settings.has(key) ? recorded.settings.get(key) : dflt) as T,
    inspect: () => undefined,
    update: async (key: string, value: unknown) => { recorded.settings.set(key, value); },
  }),
  onDidChangeTextDocument: noEvent,
  onDidCloseTextDocument: noEvent,
  onDidChangeConfiguration: noEvent,
  getWorkspaceFolder: () => undefined,
});

export const languages = {
  onDidChangeDiagnostics: noEvent,
  getDiagnostics: () => [],
};

// vscode-languageclient builds classes on top of vscode's at import time (CompletionItem, …):
// anything not stubbed above is an empty class, enough to load it.
class Unstubbed {}
module.exports = new Proxy(module.exports, {
  get(target, key) {
    if (key in target || typeof key === 'symbol' || key === 'then' || key === '__esModule') return target[key as string];
    return Unstubbed;
  },
});
