// `hexplore: Run Kernel`: which sizes to ask for, checking the answers, and the result as text.
// No `vscode` import.

import type { RunResult } from './protocol';

const INT_TYPE = /^(?:(?:const|volatile|register|signed|unsigned|short|long|int|char|size_t|ssize_t|ptrdiff_t|u?int(?:8|16|32|64)_t)\s*)+$/;

/** The integer parameters of a function, from its signature text (from the return type to the
 * closing parenthesis or further): the sizes `hexplore/run` accepts. Pointers and arrays are not. */
export function integerParameters(signature: string): string[] {
  const open = signature.indexOf('(');
  if (open < 0) return [];
  let depth = 0;
  let end = -1;
  for (let i = open; i < signature.length; i++) {
    if (signature[i] === '(') depth++;
    else if (signature[i] === ')' && --depth === 0) { end = i; break; }
  }
  const inner = signature.slice(open + 1, end < 0 ? undefined : end);
  const params: string[] = [];
  let cur = '';
  depth = 0;
  for (const ch of inner) {
    if (ch === '(' || ch === '[') depth++;
    if (ch === ')' || ch === ']') depth--;
    if (ch === ',' && depth === 0) { params.push(cur); cur = ''; } else cur += ch;
  }
  params.push(cur);
  const out: string[] = [];
  for (const raw of params) {
    const p = raw.replace(/\/\*.*?\*\//g, ' ').replace(/\s+/g, ' ').trim();
    if (!p || p === 'void' || /[*[&(]/.test(p)) continue;
    const m = /^(.*?)\b([A-Za-z_]\w*)$/.exec(p);
    if (!m || !INT_TYPE.test(m[1].trim()) || m[1].trim() === '') continue;
    out.push(m[2]);
  }
  return out;
}

/** An input box answer: '' (use the server's default, 64), or a positive integer. */
export function parseSize(text: string): { value?: number; error?: string } {
  const t = text.trim();
  if (t === '') return {};
  if (!/^\d+$/.test(t) || Number(t) <= 0 || !Number.isSafeInteger(Number(t))) {
    return { error: 'a positive integer, or empty for the default (64)' };
  }
  return { value: Number(t) };
}

/** The sizes of `params` that the `hexplore.run.sizes` setting gives (an object such as
 * `{"n": 128}`; other keys and values that are not positive integers are left out), and the
 * parameters still to ask for. */
export function configuredSizes(setting: unknown, params: string[]): { sizes: Record<string, number>; ask: string[] } {
  const given = setting && typeof setting === 'object' && !Array.isArray(setting) ? (setting as Record<string, unknown>) : {};
  const sizes: Record<string, number> = {};
  const ask: string[] = [];
  for (const p of params) {
    const v = given[p];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) sizes[p] = v;
    else ask.push(p);
  }
  return { sizes, ask };
}

export function formatRunResult(fn: string, r: RunResult): string[] {
  const sizes = Object.entries(r.sizes ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || 'none';
  const lines = [
    `hexplore run ${fn}: ${r.status} — ${r.message}`,
    `  sizes: ${sizes}; kernels: ${r.kernels}; ${r.elapsed_ms} ms`,
  ];
  for (const a of r.arrays ?? []) {
    const err = a.maxAbsError === null || a.maxAbsError === undefined ? '' : ` (max abs error ${a.maxAbsError})`;
    lines.push(`  ${a.ok ? 'ok      ' : 'MISMATCH'} ${a.name}: ${a.message}${err}`);
  }
  return lines;
}
