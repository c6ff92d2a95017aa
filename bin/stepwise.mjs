#!/usr/bin/env node
// The CLI is TypeScript, run through tsx's loader so there is no build step.
import { register } from 'tsx/esm/api';

// The AWS SDK warns on every client creation under Node 20 (multi-line, on stderr); the CLI promises one-line errors.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
await import('./cli/main.ts');
