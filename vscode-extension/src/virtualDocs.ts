// Virtual documents under the `hexplore:` scheme: their URIs and their text. No `vscode` import:
// `contentProvider.ts` serves `renderView`'s text to the editor, and the integration test calls
// `renderView` with a real connection to hexplore-lsp.
//
// URI: hexplore:/<function>/<label>.<ext>?source=<document URI>&function=<name>&view=<view>[&pass=<pass>]
// The path only names the tab (and, by its extension, the language); the query says what to show.

import {
  ARTIFACT, type Artifact, errorMessage, PASSES, type PassInfo, type Requester, SCHEDULE_TREE, type ScheduleNode,
} from './protocol';

export const SCHEME = 'hexplore';

/** Generated-code views: each is the artifact of the passes whose language is this one. */
export const CODE_VIEWS = {
  cuda: { title: 'CUDA', language: 'cuda-cpp', ext: 'cu' },
  opencl: { title: 'OpenCL', language: 'opencl', ext: 'cl' },
  c: { title: 'C', language: 'c', ext: 'c' },
  ptx: { title: 'PTX', language: 'ptx', ext: 'ptx' },
  llvm: { title: 'LLVM IR', language: 'llvm', ext: 'll' },
} as const;
export type CodeView = keyof typeof CODE_VIEWS;
export type View = CodeView | 'scheduleTree' | 'artifact';

export interface ViewSpec {
  source: string; // URI of the C/CUDA document
  function: string;
  view: View;
  pass?: string; // for view 'artifact'
}

const VIEWS: readonly string[] = ['scheduleTree', 'artifact', ...Object.keys(CODE_VIEWS)];

/** The language hexplore-lsp gives a pass's artifact (lsp/custom_requests.py `_LANGUAGES`, same
 * patterns, same order), used here only to find a view's passes and name the tab. */
export function passLanguage(pass: string): string {
  if (/ptx/.test(pass)) return 'ptx';
  if (/llvm/.test(pass)) return 'llvm';
  if (/cuda/.test(pass)) return 'cuda-cpp';
  if (/opencl/.test(pass)) return 'opencl';
  if (/(^|-)(c|openmp)($|-|\[)|codegen-c/.test(pass)) return 'c';
  return 'plaintext';
}

function extFor(spec: ViewSpec): string {
  if (spec.view === 'scheduleTree') return 'txt';
  if (spec.view === 'artifact') {
    const lang = passLanguage(spec.pass ?? '');
    const code = Object.values(CODE_VIEWS).find((v) => v.language === lang);
    return code ? code.ext : 'txt';
  }
  return CODE_VIEWS[spec.view].ext;
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9_.\-[\]]+/g, '_');

/** The path and query of the view's URI (for vscode.Uri.from) … */
export function viewUriParts(spec: ViewSpec): { scheme: string; path: string; query: string } {
  const label = spec.view === 'artifact' ? safe(spec.pass ?? 'artifact') : spec.view === 'scheduleTree' ? 'schedule-tree' : spec.view;
  const query = new URLSearchParams({ source: spec.source, function: spec.function, view: spec.view });
  if (spec.pass !== undefined) query.set('pass', spec.pass);
  return { scheme: SCHEME, path: `/${safe(spec.function)}/${label}.${extFor(spec)}`, query: query.toString() };
}

/** … and as a string. */
export function viewUri(spec: ViewSpec): string {
  const p = viewUriParts(spec);
  return `${p.scheme}:${p.path}?${p.query}`;
}

/** The view a URI names, or a message saying what is wrong with it. */
export function parseViewUri(uri: { scheme: string; query: string } | string): ViewSpec | { error: string } {
  let scheme: string;
  let query: string;
  if (typeof uri === 'string') {
    const colon = uri.indexOf(':');
    scheme = colon < 0 ? '' : uri.slice(0, colon);
    const q = uri.indexOf('?');
    query = q < 0 ? '' : uri.slice(q + 1);
  } else {
    ({ scheme, query } = uri);
  }
  if (scheme !== SCHEME) return { error: `not a ${SCHEME}: URI (scheme \`${scheme}\`)` };
  const q = new URLSearchParams(query);
  const source = q.get('source');
  const fn = q.get('function');
  const view = q.get('view');
  const pass = q.get('pass');
  if (!source) return { error: 'the URI names no source document (`source=`)' };
  if (!fn) return { error: 'the URI names no function (`function=`)' };
  if (!view || !VIEWS.includes(view)) return { error: `unknown view \`${view ?? ''}\` (views: ${VIEWS.join(', ')})` };
  if (view === 'artifact' && !pass) return { error: 'an artifact view needs a pass (`pass=`)' };
  const spec: ViewSpec = { source, function: fn, view: view as View };
  if (pass) spec.pass = pass;
  return spec;
}

function commentPrefix(spec: ViewSpec): string {
  const ext = extFor(spec);
  return ext === 'txt' ? '' : ext === 'll' ? '; ' : '// ';
}

function comment(spec: ViewSpec, lines: string[]): string {
  const prefix = commentPrefix(spec);
  return lines.flatMap((l) => l.split('\n')).map((l) => prefix + l).join('\n') + '\n';
}

/** The text of a view, from the server. Failures become the document's text (the server's error
 * message, as a comment in the view's language): a view never shows made-up content. */
export async function renderView(request: Requester, spec: ViewSpec): Promise<string> {
  const base = { uri: spec.source, function: spec.function };
  try {
    if (spec.view === 'scheduleTree') {
      const tree = (await request(SCHEDULE_TREE, base)) as ScheduleNode;
      return renderScheduleTree(tree);
    }
    if (spec.view === 'artifact') {
      const a = (await request(ARTIFACT, { ...base, pass: spec.pass })) as Artifact;
      return a.text;
    }
    return await renderCode(request, spec, spec.view);
  } catch (e) {
    return comment(spec, [`hexplore: ${spec.view} of \`${spec.function}\` failed:`, errorMessage(e)]);
  }
}

async function renderCode(request: Requester, spec: ViewSpec, view: CodeView): Promise<string> {
  const base = { uri: spec.source, function: spec.function };
  const { title, language } = CODE_VIEWS[view];
  const passes = (await request(PASSES, base)) as PassInfo[];
  const mine = passes.filter((p) => passLanguage(p.name) === language);
  if (mine.length === 0) {
    // Ask for it anyway, and show whatever the server says (today: which passes exist).
    try {
      const a = (await request(ARTIFACT, { ...base, pass: view })) as Artifact;
      return a.text;
    } catch (e) {
      return comment(spec, [
        `hexplore-lsp produced no ${title} for \`${spec.function}\`.`,
        `hexplore/artifact {"pass": "${view}"} answered: ${errorMessage(e)}`,
      ]);
    }
  }
  const parts: string[] = [];
  for (const p of mine) {
    const a = (await request(ARTIFACT, { ...base, pass: p.name })) as Artifact;
    parts.push(mine.length > 1 ? comment(spec, [`---- ${p.name} ----`]) + a.text : a.text);
  }
  return parts.join('\n');
}

/** The schedule tree as indented text, one node a line, its isl text below it. */
export function renderScheduleTree(node: ScheduleNode, depth = 0): string {
  const pad = '  '.repeat(depth);
  let head = `${pad}${node.kind}${node.detail ? ' ' + node.detail : ''}`;
  if (node.range) head += `    (line ${node.range.start.line + 1})`;
  const lines = [head];
  if (node.arcana) lines.push(`${pad}  ${node.arcana}`);
  if (node.carried && node.carried.length) lines.push(`${pad}  carries: ${node.carried.join('; ')}`);
  let out = lines.join('\n') + '\n';
  for (const c of node.children ?? []) out += renderScheduleTree(c, depth + 1);
  return out;
}
