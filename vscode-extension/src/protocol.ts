// The hexplore/* requests of hexplore-lsp (lsp/PROTOCOL.md), as TypeScript types.
// No `vscode` import: the extension and the Node integration test share this module.

export const FUNCTIONS = 'hexplore/functions';
export const PASSES = 'hexplore/passes';
export const ARTIFACT = 'hexplore/artifact';
export const SCHEDULE_TREE = 'hexplore/scheduleTree';
export const RUN = 'hexplore/run';

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }

export interface FunctionInfo {
  name: string;
  range: LspRange;
  selectionRange: LspRange;
  scops: number;
  loops: number;
  remarks: { passed: number; missed: number; analysis: number };
  analysed: boolean;
}

export interface PassInfo { name: string; elapsed_ms: number; remark_count: number }

export interface Artifact { text: string; language: string }

export interface ScheduleNode {
  kind: string;
  detail: string;
  arcana?: string;
  range?: LspRange;
  loop?: string;
  status?: string;
  carried?: string[];
  children: ScheduleNode[];
}

export interface RunArray { name: string; ok: boolean; message: string; maxAbsError: number | null }

export interface RunResult {
  status: string;
  message: string;
  sizes: Record<string, number>;
  kernels: number;
  elapsed_ms: number;
  arrays: RunArray[];
}

/** Sends one request and resolves with its result; a LanguageClient's or a protocol
 * connection's `sendRequest`, bound. Rejects with an error whose `message` is the server's. */
export type Requester = (method: string, params: object) => Promise<unknown>;

export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  return String(e);
}

/** The function whose range contains the position (the innermost, if ranges nest). */
export function functionAt(functions: readonly FunctionInfo[], pos: LspPosition): FunctionInfo | undefined {
  let best: FunctionInfo | undefined;
  for (const f of functions) {
    if (contains(f.range, pos) && (!best || contains(best.range, f.range.start))) best = f;
  }
  return best;
}

export function contains(r: LspRange, p: LspPosition): boolean {
  const afterStart = p.line > r.start.line || (p.line === r.start.line && p.character >= r.start.character);
  const beforeEnd = p.line < r.end.line || (p.line === r.end.line && p.character <= r.end.character);
  return afterStart && beforeEnd;
}
