// VS Code settings -> the configuration hexplore-lsp reads (lsp/PROTOCOL.md "Configuration";
// explorer/settings.py). The server reads the `hexplore` section: includePaths, defines, target,
// tileSizes, maxIslOperations. No `vscode` import.

import type { KindToggles } from './remarks';

export const SERVER_KEYS = ['includePaths', 'defines', 'target', 'tileSizes', 'maxIslOperations'] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];

export type ServerSettings = Partial<Record<ServerKey, unknown>>;

/** Reads one setting under `hexplore.` (a WorkspaceConfiguration's `get`, or a test's map). */
export type Getter = (key: string) => unknown;

/** The object sent as `initializationOptions` and, nested under "hexplore", in
 * `workspace/didChangeConfiguration` and answers to `workspace/configuration`: exactly the keys
 * the server reads. Values are passed as they are, so that the server's own check warns about a
 * wrong one, naming the key; unset keys are left out (the server keeps its default).
 * `${workspaceFolder}` in include paths is expanded; relative paths are left for the server,
 * which resolves them against the workspace root. */
export function serverSettings(get: Getter, workspaceFolder?: string): ServerSettings {
  const out: ServerSettings = {};
  for (const key of SERVER_KEYS) {
    let value = get(key);
    if (value === undefined || value === null) continue;
    if (key === 'includePaths' && Array.isArray(value) && workspaceFolder !== undefined) {
      value = value.map((p) => (typeof p === 'string' ? p.replace(/\$\{workspaceFolder\}/g, workspaceFolder) : p));
    }
    out[key] = value;
  }
  return out;
}

/** Which settings changes need what: a server restart, a configuration push, a redraw. */
export const RESTART_SECTIONS = ['hexplore.server'];
export const SERVER_SECTIONS = SERVER_KEYS.map((k) => `hexplore.${k}`);
export const REMARK_SECTION = 'hexplore.remarks';

export function remarkToggles(get: Getter): KindToggles & { inline: boolean; maxLength: number } {
  const flag = (k: string) => get(k) !== false;
  const max = get('remarks.maxLength');
  return {
    inline: flag('remarks.inline'),
    passed: flag('remarks.passed'),
    missed: flag('remarks.missed'),
    analysis: flag('remarks.analysis'),
    maxLength: typeof max === 'number' && max >= 20 ? max : 120,
  };
}
