#!/usr/bin/env node
// The CLI is TypeScript, run through tsx's loader so there is no build step.
import { register } from 'tsx/esm/api';
register();
await import('./cli/main.ts');
