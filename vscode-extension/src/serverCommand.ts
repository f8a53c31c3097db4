// Which command starts hexplore-lsp. No `vscode` import.
//
// Order: `hexplore.server.path` if set; else `hexplore.server.pythonPath -m lsp.server` if set
// (the module behind pyproject.toml's `hexplore-lsp = "lsp.server:main"` script); else
// `.venv/bin/hexplore-lsp` in a workspace folder; else `hexplore-lsp` on PATH.
//
// A workspace's own server is a program from the folder that was opened: it is never used in an
// untrusted workspace (nor is a configured path inside one), and extension.ts asks before it
// starts one (`needsConsent`, trust.ts). The path settings are `machine` scoped (package.json),
// so a repository's .vscode/settings.json cannot choose them.

import * as fs from 'fs';
import * as path from 'path';

export interface ServerConfig {
  serverPath: string;
  pythonPath: string;
  args: string[];
}

export interface ServerCommand { command: string; args: string[]; origin: string }

export const WORKSPACE_VENV = 'workspace .venv';

export interface Environment {
  workspaceFolders: string[];
  pathEnv: string;
  platform: NodeJS.Platform;
  isExecutable: (file: string) => boolean;
  /** VS Code's workspace trust: false in Restricted Mode. */
  trusted: boolean;
}

export function defaultEnvironment(workspaceFolders: string[], trusted: boolean): Environment {
  return {
    workspaceFolders,
    trusted,
    pathEnv: process.env.PATH ?? '',
    platform: process.platform,
    isExecutable: (file) => {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
  };
}

function expand(p: string, env: Environment): string {
  const root = env.workspaceFolders[0] ?? '';
  let out = p.replace(/\$\{workspaceFolder\}/g, root);
  if (out.startsWith('~/') && process.env.HOME) out = path.join(process.env.HOME, out.slice(2));
  if (!path.isAbsolute(out) && root && (out.includes('/') || out.includes('\\'))) out = path.join(root, out);
  return out;
}

function inside(file: string, folders: string[]): string | undefined {
  return folders.find((f) => {
    const rel = path.relative(f, file);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
}

/** Starting `cmd` runs a program of the workspace: ask first. */
export function needsConsent(cmd: ServerCommand): boolean {
  return cmd.origin === WORKSPACE_VENV;
}

/** The command, or a message saying what was tried. */
export function resolveServerCommand(config: ServerConfig, env: Environment): ServerCommand | { error: string } {
  const args = [...config.args];
  const explicit = (setting: string, value: string, extra: string[]): ServerCommand | { error: string } => {
    const command = expand(value, env);
    const folder = env.trusted ? undefined : inside(command, env.workspaceFolders);
    if (folder) {
      return { error: `${setting} (${command}) is inside the workspace folder ${folder}, which is not trusted: not starting it. Trust the workspace or set a path outside it.` };
    }
    return { command, args: [...extra, ...args], origin: setting };
  };
  if (config.serverPath.trim()) return explicit('hexplore.server.path', config.serverPath.trim(), []);
  if (config.pythonPath.trim()) return explicit('hexplore.server.pythonPath', config.pythonPath.trim(), ['-m', 'lsp.server']);
  const win = env.platform === 'win32';
  const exe = win ? 'hexplore-lsp.exe' : 'hexplore-lsp';
  const tried: string[] = [];
  for (const folder of env.trusted ? env.workspaceFolders : []) {
    const candidate = path.join(folder, '.venv', win ? 'Scripts' : 'bin', exe);
    tried.push(candidate);
    if (env.isExecutable(candidate)) return { command: candidate, args, origin: WORKSPACE_VENV };
  }
  for (const dir of env.pathEnv.split(win ? ';' : ':').filter(Boolean)) {
    const candidate = path.join(dir, exe);
    if (env.isExecutable(candidate)) return { command: candidate, args, origin: 'PATH' };
  }
  tried.push(`${exe} on PATH`);
  const untrusted = env.trusted ? '' : ' (a workspace .venv is not used: the workspace is not trusted)';
  return {
    error: `hexplore-lsp not found (tried ${tried.join(', ')})${untrusted}. Install hexplore (\`pip install -e .\`) or set hexplore.server.path or hexplore.server.pythonPath.`,
  };
}
