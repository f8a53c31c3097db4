// The "hexplore: Schedule Tree" view (Explorer side bar): the scheduler's tree of the function at
// the cursor, as `hexplore/scheduleTree` answers it, refreshed when the cursor moves to another
// function and when the server publishes new diagnostics for the file. A node with a source
// range reveals it when clicked.

import * as vscode from 'vscode';
import { errorMessage, type FunctionInfo, functionAt, type Requester, SCHEDULE_TREE, type ScheduleNode } from './protocol';
import { emptyMessage, nodeItem } from './scheduleTree';

export const VIEW_ID = 'hexplore.scheduleTree';

interface Shown { uri: string; function: string }

export class ScheduleTreeProvider implements vscode.TreeDataProvider<ScheduleNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ScheduleNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private roots: ScheduleNode[] = [];
  private shown: Shown | undefined;
  private timer: NodeJS.Timeout | undefined;
  message: string | undefined = emptyMessage('noEditor');
  onMessage: (m: string | undefined) => void = () => undefined;

  constructor(
    private readonly requester: () => Requester | undefined,
    private readonly functionsOf: (doc: vscode.TextDocument) => Promise<FunctionInfo[]>,
    private readonly isSource: (doc: vscode.TextDocument) => boolean,
    private readonly delayMs = 300,
  ) {}

  getTreeItem(node: ScheduleNode): vscode.TreeItem {
    const it = nodeItem(node);
    const state = it.leaf ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Expanded;
    const item = new vscode.TreeItem(it.label, state);
    item.description = it.description;
    item.tooltip = it.tooltip;
    if (it.range && this.shown) {
      const r = it.range;
      item.command = {
        command: 'vscode.open',
        title: 'Reveal in the source',
        arguments: [vscode.Uri.parse(this.shown.uri), { selection: new vscode.Range(r.start.line, r.start.character, r.start.line, r.start.character) }],
      };
    }
    return item;
  }

  getChildren(node?: ScheduleNode): ScheduleNode[] {
    return node ? node.children ?? [] : this.roots;
  }

  /** Follow the active editor, after a pause; `force` asks the server again for the same function. */
  schedule(force = false): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(force), this.delayMs);
  }

  async refresh(force = false): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !this.isSource(editor.document)) return; // keep the last tree while another view has focus
    const request = this.requester();
    if (!request) return this.show([], undefined, emptyMessage('noServer'));
    let fn: FunctionInfo | undefined;
    try {
      const pos = editor.selection.active;
      fn = functionAt(await this.functionsOf(editor.document), { line: pos.line, character: pos.character });
    } catch (e) {
      return this.show([], undefined, emptyMessage('error', errorMessage(e)));
    }
    if (!fn) return this.show([], undefined, emptyMessage('noFunction'));
    const target = { uri: editor.document.uri.toString(), function: fn.name };
    if (!force && this.shown && this.shown.uri === target.uri && this.shown.function === target.function) return;
    try {
      const tree = (await request(SCHEDULE_TREE, target)) as ScheduleNode;
      this.show(tree.children ?? [], target, tree.children?.length ? undefined : `\`${fn.name}\` has no modeled loop nest.`);
    } catch (e) {
      this.show([], target, emptyMessage('error', errorMessage(e)));
    }
  }

  /** The source document changed on the server's side (new diagnostics): ask again if it is shown. */
  sourceChanged(uri: string): void {
    if (this.shown?.uri === uri) this.schedule(true);
  }

  private show(roots: ScheduleNode[], shown: Shown | undefined, message: string | undefined): void {
    this.roots = roots;
    this.shown = shown;
    this.message = shown && message === undefined ? undefined : message;
    this.onMessage(this.message);
    this.emitter.fire(undefined);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.emitter.dispose();
  }
}
