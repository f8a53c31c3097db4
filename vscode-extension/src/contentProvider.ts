// Serves `hexplore:` documents (schedule tree, pass artifacts, generated code) from the server,
// and refreshes the open ones shortly after their source document is edited.

import * as vscode from 'vscode';
import type { Requester } from './protocol';
import { parseViewUri, renderView, SCHEME } from './virtualDocs';

export class ViewProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** `requester()` is undefined while the server is not running. */
  constructor(private readonly requester: () => Requester | undefined, private readonly delayMs = 400) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const spec = parseViewUri({ scheme: uri.scheme, query: uri.query });
    if ('error' in spec) return `hexplore: cannot show ${uri.toString()}: ${spec.error}\n`;
    const request = this.requester();
    if (!request) return 'hexplore: the language server (hexplore-lsp) is not running; see the "hexplore" output channel.\n';
    return renderView(request, spec);
  }

  /** The open views of a source document. */
  viewsOf(source: string): vscode.Uri[] {
    return vscode.workspace.textDocuments
      .map((d) => d.uri)
      .filter((u) => {
        if (u.scheme !== SCHEME) return false;
        const spec = parseViewUri({ scheme: u.scheme, query: u.query });
        return !('error' in spec) && spec.source === source;
      });
  }

  /** Call on every edit of a source document: its views refresh once the edits pause. */
  sourceChanged(source: string): void {
    clearTimeout(this.timers.get(source));
    this.timers.set(
      source,
      setTimeout(() => {
        this.timers.delete(source);
        for (const u of this.viewsOf(source)) this.emitter.fire(u);
      }, this.delayMs),
    );
  }

  refresh(uri: vscode.Uri): void {
    this.emitter.fire(uri);
  }

  refreshAll(): void {
    for (const d of vscode.workspace.textDocuments) if (d.uri.scheme === SCHEME) this.emitter.fire(d.uri);
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.emitter.dispose();
  }
}
