// `node --require ./out/test/stub/register.js`: `require('vscode')` loads the stub next to this
// file. Only unit tests use what it provides; the integration test never imports `vscode`.
import Module = require('module');
import * as path from 'path';

const stub = path.join(__dirname, 'vscode.js');
const M = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const original = M._resolveFilename;
M._resolveFilename = function (request: string, ...rest: unknown[]) {
  if (request === 'vscode') return stub;
  return original.call(this, request, ...rest);
};
