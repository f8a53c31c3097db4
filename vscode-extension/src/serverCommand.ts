// Which command starts hexplore-lsp. No `vscode` import.
//
// Order: `hexplore.server.path` if set; else `hexplore.server.pythonPath -m lsp.server` if set
// (the module behind pyproject.toml's `hexplore-lsp = "lsp.server:main"` script); else
// `.venv/bin/hexplore-lsp` in a workspace folder; else `hexplore-lsp` on PATH.

import * as fs from 'fs';
import * as path from 'path';

export interface ServerConfig {
  serverPath: string;
  pythonPath: string;
  args: string[];
}

export interface ServerCommand { command: string; args: string[]; origin: string }

export interface Environment {
  workspaceFolders: string[];
  pathEnv: string;
  platform: NodeJS.Platform;
  isExecutable: (file: string) => boolean;
}

export function defaultEnvironment(workspaceFolders: string[]): Environment {
  return {
    workspaceFolders,
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

/** The command, or a message saying what was tried. */
export function resolveServerCommand(config: ServerConfig, env: Environment): ServerCommand | { error: string } {
  const args = [...config.args];
  if (config.serverPath.trim()) {
    return { command: expand(config.serverPath.trim(), env), args, origin: 'hexplore.server.path' };
  }
  if (config.pythonPath.trim()) {
    return { command: expand(config.pythonPath.trim(), env), args: ['-m', 'lsp.server', ...args], origin: 'hexplore.server.pythonPath' };
  }
  const win = env.platform === 'win32';
  const exe = win ? 'hexplore-lsp.exe' : 'hexplore-lsp';
  const tried: string[] = [];
  for (const folder of env.workspaceFolders) {
    const candidate = path.join(folder, '.venv', win ? 'Scripts' : 'bin', exe);
    tried.push(candidate);
    if (env.isExecutable(candidate)) return { command: candidate, args, origin: 'workspace .venv' };
  }
  for (const dir of env.pathEnv.split(win ? ';' : ':').filter(Boolean)) {
    const candidate = path.join(dir, exe);
    if (env.isExecutable(candidate)) return { command: candidate, args, origin: 'PATH' };
  }
  tried.push(`${exe} on PATH`);
  return {
    error: `hexplore-lsp not found (tried ${tried.join(', ')}). Install hexplore (\`pip install -e .\`) or set hexplore.server.path or hexplore.server.pythonPath.`,
  };
}
