// The schedule-tree view's items, from `hexplore/scheduleTree` (lsp/PROTOCOL.md): one item per
// node, its kind and detail as the label, its status (parallel, reduction, …) as the
// description, its isl text and carried dependences in the tooltip. No `vscode` import: the
// view (scheduleTreeView.ts) turns these into TreeItems.

import type { LspRange, ScheduleNode } from './protocol';

export interface NodeItem {
  label: string;
  description: string;
  tooltip: string;
  expanded: boolean; // has children, shown open
  leaf: boolean;
  range?: LspRange; // where it is in the source: a click reveals it
}

export function nodeItem(node: ScheduleNode): NodeItem {
  const label = `${node.kind}${node.detail ? ' ' + node.detail : ''}`;
  const parts: string[] = [];
  if (node.status) parts.push(node.status);
  if (node.range) parts.push(`line ${node.range.start.line + 1}`);
  const tip: string[] = [label];
  if (node.arcana) tip.push(node.arcana);
  if (node.carried && node.carried.length) tip.push(`carries: ${node.carried.join('; ')}`);
  const children = node.children ?? [];
  return {
    label,
    description: parts.join(' · '),
    tooltip: tip.join('\n'),
    expanded: children.length > 0,
    leaf: children.length === 0,
    range: node.range,
  };
}

/** What the view says instead of a tree. */
export function emptyMessage(why: 'noEditor' | 'noFunction' | 'noServer' | 'error', detail = ''): string {
  switch (why) {
    case 'noEditor': return 'Open a C, C++ or CUDA file to see the schedule tree of the function at the cursor.';
    case 'noFunction': return 'Move the cursor into a function.';
    case 'noServer': return 'hexplore-lsp is not running (see the "hexplore" output channel).';
    default: return `hexplore: ${detail}`;
  }
}
