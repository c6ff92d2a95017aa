import { readFileSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';
import { LAYERS } from './docs/generate/architecture.ts';
import LongestFirst from './test/support/sequencer.ts';

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

// The engine's tests (test/<layer>/, one folder per layer of src/) run on the engine's fixture project: there the
// project (`PROJECT_ROOT`: what an in-process session, synth or command reads) is test/fixtures/project, never the
// examples at the root, which test/examples/ alone tests. Workers never run files of two projects.
const ENGINE_TESTS = LAYERS.map((layer) => `test/${layer.name}/**/*.test.ts`);
const FIXTURE_PROJECT = new URL('./test/fixtures/project', import.meta.url).pathname;

export default defineConfig({
  resolve: { alias },
  test: {
    // No per-file isolation: a worker runs its files one after another in one module graph, so a file skips the
    // transform and import of what an earlier one loaded (the engine, the CDK, the SDK): 3 s per integration file.
    // Test files therefore leave no state behind (environment variables restored, sessions closed, SDK mocks
    // restored; test/setup.ts restores spies, stubs and timers after each file).
    projects: [
      {
        extends: true,
        test: { name: 'engine', include: ENGINE_TESTS, env: { STEPWISE_PROJECT_ROOT: FIXTURE_PROJECT } },
      },
      {
        extends: true,
        test: {
          name: 'examples',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ENGINE_TESTS],
        },
      },
    ],
    isolate: false,
    setupFiles: ['src/local/asl/polyfills.ts', 'test/setup.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Most integration time is spent waiting on child processes, the emulator and npm, not on a core: more workers
    // than the 2 cores of a CI machine keep both busy. STEPWISE_TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.STEPWISE_TEST_WORKERS) || 3,
    sequence: { sequencer: LongestFirst },
    // `npm run coverage`: what the unit tests cover of the step runner (with the contracts it speaks: the prompt protocol,
    // the model port, the transcript), the step handler and the evals.
    // Lines, statements and functions are held at 80%; branches at their level when this was set
    // (the eval runner's session paths run in the integration tier only).
    coverage: {
      provider: 'v8',
      include: [
        'src/runtime/steps/**/*.ts',
        'src/runtime/contracts/**/*.ts',
        'src/runtime/step-handler/**/*.ts',
        'src/evals/**/*.ts',
      ],
      reporter: ['text-summary', 'text'],
      thresholds: { lines: 80, statements: 80, functions: 80, branches: 65 },
    },
    // Integration tests start DynamoDB Local and synthesize CDK apps: give them room on shared machines.
    testTimeout: 120_000,
    // A hook may also wait for the compiled package (test/support/built-package.ts), built once per run.
    hookTimeout: 600_000,
    env: {
      CDK_VALIDATION: 'false',
      // The cdk CLIs the tests start (cdk synth) send the CDK team no usage data from a test run.
      CDK_DISABLE_CLI_TELEMETRY: 'true',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // The CLIs the tests start may run on Node 20 (a machine's own): their one-line errors stay one line.
      STEPWISE_NODE_WARNING: 'off',
      AWS_REGION: 'us-east-1',
      POWERTOOLS_DEV: 'true',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    },
  },
});
