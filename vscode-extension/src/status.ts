// The status bar text: the server's state and the offload decision of the function at the cursor.
// No `vscode` import.

import type { FunctionInfo } from './protocol';
import { type Remark, summarize } from './remarks';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

export interface StatusText { text: string; tooltip: string }

const STATE_ICON: Record<ServerState, string> = {
  starting: '$(sync~spin)',
  running: '$(check)',
  stopped: '$(circle-slash)',
  failed: '$(error)',
};

/** What the function's remarks say about offloading it. */
export function offloadDecision(fn: FunctionInfo, remarks: readonly Remark[]): { short: string; detail: string } {
  const { counts, missedCodes, passedMessages } = summarize(remarks, fn.range.start.line, fn.range.end.line);
  const passed = Math.max(counts.passed, fn.remarks.passed);
  const missed = Math.max(counts.missed, fn.remarks.missed);
  const nests = `${fn.scops} loop nest${fn.scops === 1 ? '' : 's'} modeled (${fn.loops} loop${fn.loops === 1 ? '' : 's'})`;
  if (!fn.analysed) {
    return { short: 'not analysed (syntax errors)', detail: `\`${fn.name}\` has syntax errors; hexplore skipped it.` };
  }
  if (passed > 0) {
    return {
      short: 'offloaded',
      detail: `${nests}; ${passed} passed remark(s)${passedMessages.length ? ': ' + passedMessages.join('; ') : ''}`,
    };
  }
  if (missed > 0) {
    const why = missedCodes.length ? missedCodes.join(', ') : `${missed} missed remark(s)`;
    return {
      short: fn.scops > 0 ? `partly modeled (${why})` : `not offloaded (${why})`,
      detail: `${nests}; missed: ${why}`,
    };
  }
  if (fn.scops > 0) {
    return { short: `${fn.scops === 1 ? 'modeled' : `${fn.scops} nests modeled`}, not offloaded`, detail: `${nests}; no offload (passed) remark from the server` };
  }
  return { short: 'no loop nests', detail: `\`${fn.name}\` has no loop nest hexplore models.` };
}

export function statusText(state: ServerState, fn?: FunctionInfo, remarks: readonly Remark[] = [], detail = ''): StatusText {
  const icon = STATE_ICON[state];
  if (state !== 'running') {
    const tooltip = `hexplore-lsp: ${state}${detail ? ` — ${detail}` : ''}`;
    return { text: `${icon} hexplore`, tooltip };
  }
  if (!fn) return { text: `${icon} hexplore`, tooltip: 'hexplore-lsp: running' };
  const d = offloadDecision(fn, remarks);
  return { text: `${icon} ${fn.name}: ${d.short}`, tooltip: `hexplore-lsp: running\n${fn.name}: ${d.detail}` };
}
