// Asking before a workspace's own server starts. No `vscode` import: extension.ts passes the
// modal question (`ask`) and where answers are kept (`store`, the workspace's Memento).
//
// `.venv/bin/hexplore-lsp` of the opened folder is a program the repository provides: it starts
// only once the user allowed that path for this workspace (kept, so a restart does not ask
// again); the alternative is `hexplore-lsp` on PATH. Declining starts nothing.

import { type Environment, needsConsent, resolveServerCommand, type ServerCommand, type ServerConfig } from './serverCommand';

export type Consent = 'allow' | 'path' | undefined;

export interface ConsentStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

export const ALLOWED_KEY = 'hexplore.allowedWorkspaceServers';

export async function chooseServer(
  resolved: ServerCommand,
  config: ServerConfig,
  env: Environment,
  ask: (command: string) => Promise<Consent>,
  store: ConsentStore,
): Promise<ServerCommand | { error: string }> {
  if (!needsConsent(resolved)) return resolved;
  if (!env.trusted) return { error: `not starting ${resolved.command}: the workspace is not trusted` };
  const allowed = store.get<string[]>(ALLOWED_KEY) ?? [];
  if (allowed.includes(resolved.command)) return resolved;
  const answer = await ask(resolved.command);
  if (answer === 'allow') {
    await store.update(ALLOWED_KEY, [...allowed, resolved.command]);
    return resolved;
  }
  if (answer === 'path') return resolveServerCommand(config, { ...env, workspaceFolders: [] });
  return {
    error: `not starting the workspace's own server ${resolved.command} (not allowed). Run "hexplore: Restart Language Server" to be asked again, or set hexplore.server.path.`,
  };
}
