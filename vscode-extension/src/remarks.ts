// Remarks (hexplore's diagnostics) -> what the editor draws inline: one after-line text and one
// gutter icon per line. No `vscode` import; `decorations.ts` applies the result.

export type RemarkKind = 'passed' | 'missed' | 'analysis' | 'error';
export type Severity = 'error' | 'warning' | 'information' | 'hint';
export const INLINE_KINDS = ['passed', 'missed', 'analysis'] as const;
export type InlineKind = (typeof INLINE_KINDS)[number];

/** A diagnostic reduced to what the inline view needs. */
export interface Remark {
  line: number; // 0-based line of the range start
  severity: Severity;
  code: string;
  message: string;
  source?: string;
}

export const SOURCE = 'hexplore';

/** vscode.DiagnosticSeverity (Error = 0 … Hint = 3). */
export function fromVscodeSeverity(s: number): Severity {
  return (['error', 'warning', 'information', 'hint'] as const)[s] ?? 'hint';
}

/** LSP DiagnosticSeverity (Error = 1 … Hint = 4). */
export function fromLspSeverity(s: number | undefined): Severity {
  return (['error', 'warning', 'information', 'hint'] as const)[(s ?? 1) - 1] ?? 'error';
}

/** A diagnostic's code as a string: LSP sends a string, vscode may wrap it as {value, target}. */
export function codeOf(code: unknown): string {
  if (code === undefined || code === null) return '';
  if (typeof code === 'object' && 'value' in (code as object)) return String((code as { value: unknown }).value);
  return String(code);
}

/** The remark kind, as the server's severities say it (lsp/diagnostics.py): Warning = missed,
 * Information = passed (except FunctionHasErrors, which explains a missed function), Hint =
 * analysis, Error = a syntax or internal error (left to the editor's squiggles). */
export function remarkKind(r: Pick<Remark, 'severity' | 'code'>): RemarkKind {
  if (r.code === 'FunctionHasErrors') return 'missed';
  switch (r.severity) {
    case 'error': return 'error';
    case 'warning': return 'missed';
    case 'information': return 'passed';
    default: return 'analysis';
  }
}

export type KindToggles = Record<InlineKind, boolean>;

export interface LineDecoration {
  line: number;
  kind: InlineKind; // the line's most important kind: missed > passed > analysis
  text: string; // after-line text, cut to maxLength
  hover: string; // markdown: every remark of the line, with its code
}

const RANK: Record<InlineKind, number> = { missed: 0, passed: 1, analysis: 2 };

/** One decoration per line that has remarks of an enabled kind; lines in ascending order.
 * Remarks of other sources, errors and disabled kinds are left out. Several remarks on one line
 * are joined with " · " in kind order, then source order. */
export function lineDecorations(remarks: readonly Remark[], enabled: KindToggles, maxLength = 120): LineDecoration[] {
  const byLine = new Map<number, { kind: InlineKind; r: Remark; i: number }[]>();
  remarks.forEach((r, i) => {
    if (r.source !== undefined && r.source !== SOURCE) return;
    const kind = remarkKind(r);
    if (kind === 'error' || !enabled[kind]) return;
    const list = byLine.get(r.line) ?? [];
    list.push({ kind, r, i });
    byLine.set(r.line, list);
  });
  const out: LineDecoration[] = [];
  for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
    const list = byLine.get(line)!.sort((a, b) => RANK[a.kind] - RANK[b.kind] || a.i - b.i);
    const seen = new Set<string>();
    const texts: string[] = [];
    for (const { r } of list) {
      if (seen.has(r.message)) continue; // the same text twice on a line is said once
      seen.add(r.message);
      texts.push(r.message);
    }
    out.push({
      line,
      kind: list[0].kind,
      text: truncate(texts.join(' · '), maxLength),
      hover: list.map(({ kind, r }) => `**${kind}** \`${r.code}\`: ${r.message}`).join('\n\n'),
    });
  }
  return out;
}

export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : flat.slice(0, Math.max(1, max - 1)).trimEnd() + '…';
}

/** Counts and codes of the remarks on lines [first, last], for the status bar. */
export function summarize(remarks: readonly Remark[], first: number, last: number) {
  const counts: Record<RemarkKind, number> = { passed: 0, missed: 0, analysis: 0, error: 0 };
  const missedCodes: string[] = [];
  const passedMessages: string[] = [];
  for (const r of remarks) {
    if (r.line < first || r.line > last || (r.source !== undefined && r.source !== SOURCE)) continue;
    const k = remarkKind(r);
    counts[k]++;
    if (k === 'missed' && !missedCodes.includes(r.code)) missedCodes.push(r.code);
    if (k === 'passed') passedMessages.push(r.message);
  }
  return { counts, missedCodes, passedMessages };
}
