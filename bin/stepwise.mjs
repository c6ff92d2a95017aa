#!/usr/bin/env node
// The `stepwise` command. Installed from npm it runs the compiled CLI (dist/) on plain Node; in
// this repository, where the TypeScript source is, it runs that through tsx's loader instead.
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1+: V8 keeps the compiled code of the modules a command loads (in the OS temp folder), so the next command
// compiles none of them again; most of a command's start is loading modules.
module.enableCompileCache?.();

// The AWS SDK warns on every client creation under Node 20 (multi-line, on stderr); the CLI promises one-line errors.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const source = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli/main.js');
}
