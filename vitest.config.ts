import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// The examples import the package's public entry points by name, as a user's project does. Here
// each resolves to its source: `./dist/X.js` in package.json `exports` is `./src/X.ts`.
const { name, exports } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  name: string;
  exports: Record<string, { default?: string }>;
};
const alias = Object.entries(exports)
  .filter(([, target]) => target.default?.endsWith('.js'))
  .map(([key, target]) => ({
    find: new RegExp(`^${(name + key.slice(1)).replaceAll('/', '\\/')}$`),
    replacement: new URL(target.default!.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts'), import.meta.url)
      .pathname,
  }));

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['src/local/polyfills.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Integration tests start DynamoDB Local and synthesize CDK apps: give them room on shared machines.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: {
      CDK_VALIDATION: 'false',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      AWS_REGION: 'us-east-1',
      POWERTOOLS_DEV: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    },
  },
});
