import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['infra/local/polyfills.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Integration tests start DynamoDB Local and synthesize CDK apps: give them room on shared machines.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    env: { CDK_VALIDATION: 'false', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', AWS_REGION: 'us-east-1', POWERTOOLS_DEV: 'true', POWERTOOLS_LOG_LEVEL: 'SILENT' },
  },
});
