import { existsSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct, IConstruct } from 'constructs';
import { ConfigError } from '../../core/errors.ts';
import { PROJECT_ROOT, STATE_DIR, STEPWISE_VERSION } from '../../core/paths.ts';
import { CLI_ONLY_FOLDERS } from '../../definitions/definition-file.ts';
import { INFERENCE_PROFILE } from '../../definitions/model-ids.ts';
import { declaresMcpTools } from '../../definitions/workflow/mcp.ts';
import type { EnvConfig } from '../../project/config.ts';
import { DEFAULT_METRICS_NAMESPACE } from '../../runtime/observability.ts';
import { ENTRY_METADATA, LAMBDA_STATEMACHINES_DIR, WORKFLOW_DIR_METADATA } from '../metadata.ts';
import { celInBundle } from './bundle-cel.ts';
import { generateEngineEntry, generateLambdaEntry } from './lambda-entry.ts';

/**
 * The environment of a function with the ADOT layer (the environment's `openTelemetry`): the
 * layer's wrapper starts the OpenTelemetry SDK before the handler; nothing when it is off.
 */
export function openTelemetryEnvironment(config: EnvConfig, serviceName: string): Record<string, string> {
  const otel = config.openTelemetry;
  if (!otel) return {};
  return {
    AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-instrument',
    OTEL_SERVICE_NAME: serviceName,
    ...(otel.endpoint && { OTEL_EXPORTER_OTLP_ENDPOINT: otel.endpoint }),
  };
}

/** How a function may use a table; see {@link StepwiseFunction.bindTable}. */
export type TableAccess = 'read' | 'write' | 'readWrite';

export interface StepwiseFunctionProps {
  /**
   * The engine's handler module, by its path in the engine's source (resolved to the compiled
   * module when the engine is installed). It exports `handler` and `createHandler`
   * (src/runtime/contracts/step.ts).
   * @example 'runtime/step-handler/handler.ts'
   */
  readonly entry: string;
  readonly config: EnvConfig;
  /** `POWERTOOLS_SERVICE_NAME`: groups logs, traces and metrics. */
  readonly serviceName: string;
  /**
   * A workflow folder shipped with the code at `/var/task/statemachines/<folder name>/`; sets
   * `STATEMACHINES_DIR` to match. The bundle also carries the folder's definition files compiled
   * to JSON and only that workflow's code, through an entry generated at synth (./lambda-entry.ts);
   * its `evals/`, `samples/` and `conversations/` ship only when the environment sets `shipEvalsAndSamples`.
   * @default no workflow files are bundled and STATEMACHINES_DIR is not set
   */
  readonly workflowDir?: string;
  /** Extra environment variables. @default none */
  readonly environment?: Record<string, string>;
  /** @default 'Stepwise <entry>' */
  readonly description?: string;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
}

// esbuild's ESM output has no `require`; CJS dependencies that call it need one.
const CREATE_REQUIRE_BANNER =
  "import { createRequire as __stepwiseCreateRequire } from 'node:module'; const require = __stepwiseCreateRequire(import.meta.url);";

/** The CloudWatch namespace of the functions' metrics: per environment, so dev and prod never mix in one account. */
export const metricsNamespace = (config: EnvConfig): string => `${DEFAULT_METRICS_NAMESPACE}/${config.name}`;

/**
 * The esbuild options every function is bundled with. `keepNames` matters: minification would
 * rename the error classes, and Lambda reports a thrown error's class name as its `errorType`,
 * which the ASL's Retry/Catch `ErrorEquals` match (`ModelThrottledError`, `VersionConflictError`).
 */
export const ESBUILD_DEFAULTS = { target: 'node22', minify: true, keepNames: true } as const;

/** What decides a bundle's content besides its entry. */
export interface BundleOptions {
  /** The environment's `sdkTraces`. @default false */
  readonly sdkTraces?: boolean;
  /** The environment's `bundleAwsSdk`. @default true */
  readonly bundleAwsSdk?: boolean;
  /** The function runs a workflow with MCP tools: the MCP SDK comes along. @default false */
  readonly mcp?: boolean;
  /**
   * The function may compile CEL expressions (a guard rule of type `expression`, `compileExpression` in the workflow's
   * code; see {@link celInBundle}): cel-js comes along. Without it, compiling one throws ExpressionsNotBundledError.
   * @default true
   */
  readonly cel?: boolean;
  /** The environment's `sourceMaps`. @default false */
  readonly sourceMaps?: boolean;
}

/** The esbuild settings of a bundle beyond {@link ESBUILD_DEFAULTS}. */
export interface BundleSettings {
  readonly define: Record<string, string>;
  readonly external: string[];
}

/**
 * What esbuild `define`s and leaves out in a bundle.
 *
 * Defined (see src/definitions/definition-file.ts and src/runtime/observability.ts): that it is a
 * Lambda bundle, which parses no YAML (its definitions come compiled, see ./lambda-entry.ts), and
 * whether the X-Ray SDK comes along. esbuild folds the constants and leaves out what they rule out.
 *
 * Bundled unless the environment sets `bundleAwsSdk: false`: AWS SDK v3, tree-shaken. Importing it from the
 * bundle costs a cold start less than loading the runtime's copy from its node_modules (docs/internals/bundles.md);
 * left out, the runtime's SDK has every call the functions make (Converse with cache points, conditional writes
 * and transactions, Scheduler, SES v2, PutEvents).
 */
export function bundleSettings({
  sdkTraces = false,
  bundleAwsSdk = true,
  mcp = false,
  cel = true,
}: BundleOptions): BundleSettings {
  const define: Record<string, string> = {
    'process.env.STEPWISE_LAMBDA_BUNDLE': '"true"',
    'process.env.STEPWISE_SDK_TRACES': sdkTraces ? '"on"' : '"off"',
    'process.env.STEPWISE_MCP': mcp ? '"on"' : '"off"',
    'process.env.STEPWISE_CEL': cel ? '"on"' : '"off"',
    'process.env.STEPWISE_VERSION': JSON.stringify(STEPWISE_VERSION),
  };
  return { define, external: bundleAwsSdk ? [] : ['@aws-sdk/*'] };
}

/** Where generated entries go: the project's state folder (NodejsFunction wants an entry under the project root; a local synth's assembly is in a temporary folder). */
const ENTRIES_DIR = join(STATE_DIR, 'entries');

/** Per app, the entry generated for each (handler, workflow folder): the step functions of a workflow share one. */
const entriesPerApp = new WeakMap<IConstruct, Map<string, string>>();

/** The file esbuild bundles for `entry`: the entry generated for it with its workflow folder, or alone (once per app). */
function bundleEntry(scope: IConstruct, entry: string, workflowDir: string | undefined): string {
  let known = entriesPerApp.get(scope.node.root);
  if (!known) entriesPerApp.set(scope.node.root, (known = new Map()));
  const key = `${entry}\0${workflowDir ?? ''}`;
  let file = known.get(key);
  if (!file)
    known.set(
      key,
      (file =
        workflowDir === undefined
          ? generateEngineEntry(entry, ENTRIES_DIR)
          : generateLambdaEntry(entry, workflowDir, ENTRIES_DIR)),
    );
  return file;
}

/** The lock files NodejsFunction knows (npm, pnpm, yarn, bun), in the order it looks for them. */
const LOCK_FILES = ['package-lock.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lockb', 'bun.lock'];

/**
 * The project's lock file, or its workspace's (a monorepo has one, at its root): NodejsFunction
 * needs one to pick the package manager.
 * @throws ConfigError naming the files looked for, when there is none (not installed yet).
 */
export function lockFile(root: string): string {
  for (let dir = resolve(root); ; dir = dirname(dir)) {
    const found = LOCK_FILES.map((f) => join(dir, f)).find((f) => existsSync(f));
    if (found) return found;
    if (dirname(dir) === dir)
      throw new ConfigError(
        `${root}: no lock file (${LOCK_FILES.join(', ')}): install the project's dependencies first (npm install)`,
      );
  }
}

/**
 * The one Lambda construct with the project's defaults: Node.js 22 on ARM64, ESM bundle built by
 * the local esbuild (minified, source maps when the environment asks, {@link bundleSettings}), X-Ray active tracing,
 * its own log group with the
 * environment's retention and removal policy, its own role (no managed policies; it may only write
 * to its log group until something is bound), Powertools settings (service name, log level, metrics
 * namespace), and the `stepwise:entry` metadata the local runtime maps back to the handler module.
 *
 * Node.js 22 rather than 20: the nodejs20.x runtime is deprecated since 2026-04-30, and 22 is the
 * closest supported LTS to the Node 20 that runs the code locally.
 *
 * @example
 * const fn = new StepwiseFunction(this, 'Ingress', { entry: 'runtime/triggers/email/handler.ts', config, serviceName: 'ingress' });
 * fn.bindTable(emailsTable, 'write', 'EMAILS_TABLE');
 */
export class StepwiseFunction extends NodejsFunction {
  /** The engine handler it runs, as given (`src/runtime/step-handler/handler.ts`): the `stepwise:entry` metadata. */
  readonly entryPath: string;

  constructor(scope: Construct, id: string, props: StepwiseFunctionProps) {
    const role = new iam.Role(scope, `${id}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    const logGroup = new logs.LogGroup(scope, `${id}LogGroup`, {
      retention: props.config.logRetention,
      removalPolicy: props.config.removalPolicy,
    });
    const workflowDir = props.workflowDir && resolve(props.workflowDir);
    const { sdkTraces, bundleAwsSdk, sourceMaps, shipEvalsAndSamples } = props.config;
    const mcp = workflowDir !== undefined && declaresMcpTools(workflowDir);
    const bundle = bundleSettings({ sdkTraces, bundleAwsSdk, mcp, cel: celInBundle(workflowDir) });
    // Evals, samples and conversations are for the CLI and tests; they reach a bundle only when the environment asks.
    const excluded = shipEvalsAndSamples ? [] : [...CLI_ONLY_FOLDERS];

    const entry = bundleEntry(scope, props.entry, workflowDir);
    super(scope, id, {
      entry,
      // The project root defaults to the lock file's folder: the project's, or its workspace's above it.
      depsLockFilePath: lockFile(PROJECT_ROOT),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      role,
      logGroup,
      description: props.description ?? `Stepwise ${props.entry}`,
      environment: {
        ...(sourceMaps && { NODE_OPTIONS: '--enable-source-maps' }),
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_LOG_LEVEL: props.config.logLevel,
        POWERTOOLS_METRICS_NAMESPACE: metricsNamespace(props.config),
        ...(workflowDir === undefined ? {} : { STATEMACHINES_DIR: LAMBDA_STATEMACHINES_DIR }),
        ...openTelemetryEnvironment(props.config, props.serviceName),
        ...props.environment,
      },
      bundling: {
        ...ESBUILD_DEFAULTS,
        sourceMap: sourceMaps,
        format: OutputFormat.ESM,
        mainFields: ['module', 'main'],
        banner: CREATE_REQUIRE_BANNER,
        define: bundle.define,
        externalModules: bundle.external,
        ...(workflowDir !== undefined && {
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            // esbuild is a project dependency, so CDK bundles locally (not in Docker): the host paths are valid.
            afterBundling: (_inputDir: string, outputDir: string) => [
              `mkdir -p "${outputDir}/statemachines/${basename(workflowDir)}" && tar -C "${workflowDir}" ${excluded.map((f) => `--exclude=./${f}`).join(' ')} -cf - . | tar -C "${outputDir}/statemachines/${basename(workflowDir)}" -xf -`,
            ],
          },
        }),
      },
    });
    this.entryPath = props.entry;
    logGroup.grantWrite(role);
    const cfn = this.node.defaultChild as lambda.CfnFunction;
    cfn.addMetadata(ENTRY_METADATA, props.entry);
    if (workflowDir !== undefined)
      cfn.addMetadata(WORKFLOW_DIR_METADATA, relative(PROJECT_ROOT, workflowDir).split(sep).join('/'));
    this.enableActiveTracing(scope, id, role, cfn);
    const otel = props.config.openTelemetry;
    if (otel) this.addLayers(lambda.LayerVersion.fromLayerVersionArn(scope, `${id}OtelLayer`, otel.layerArn));
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x, the LTS closest to the Node 20 the code is tested on locally; raise it with the local Node version.',
    });
  }

  /**
   * X-Ray active tracing. Its permissions accept no resource scoping, so they live in their own
   * policy: the cdk-nag acknowledgment covers exactly that policy, and a wildcard granted through
   * the role's default policy is still reported.
   */
  private enableActiveTracing(scope: Construct, id: string, role: iam.IRole, cfn: lambda.CfnFunction): void {
    cfn.tracingConfig = { mode: lambda.Tracing.ACTIVE };
    const policy = new iam.Policy(scope, `${id}Tracing`, {
      roles: [role],
      statements: [
        new iam.PolicyStatement({ actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] }),
      ],
    });
    this.node.addDependency(policy);
    Validations.of(policy).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    });
  }

  /**
   * Grant this function `access` to `table` and expose its name as the environment variable
   * `envName`, in one call (so a function never knows a table it may not use).
   * @example fn.bindTable(ticketsTable, 'write', 'TICKETS_TABLE')
   */
  bindTable(table: ITable, access: TableAccess, envName: string): this {
    if (access === 'read') table.grantReadData(this);
    else if (access === 'write') table.grantWriteData(this);
    else table.grantReadWriteData(this);
    this.addEnvironment(envName, table.tableName);
    return this;
  }

  /**
   * Allow `ses:SendEmail` from exactly `mailFrom` (the `ses:FromAddress` condition, on that address's
   * SES identities only) and expose it as `MAIL_FROM`.
   */
  bindEmailSender(mailFrom: string): this {
    const stack = Stack.of(this);
    const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1);
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [domain, mailFrom].map((identity) =>
          stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
        ),
        conditions: { StringEquals: { 'ses:FromAddress': mailFrom } },
      }),
    );
    this.addEnvironment('MAIL_FROM', mailFrom);
    return this;
  }

  /**
   * Allow calling one pinned Bedrock model. The Converse API is authorized by `bedrock:InvokeModel`
   * (there is no separate Converse action). A cross-region inference profile id also needs the
   * underlying foundation model in every region the profile may route to.
   */
  grantInvokeModel(modelId: string): iam.Grant {
    const stack = Stack.of(this);
    const foundationModel = (id: string, region?: string) =>
      stack.formatArn({ service: 'bedrock', account: '', region, resource: 'foundation-model', resourceName: id });
    const profile = INFERENCE_PROFILE.exec(modelId);
    const resourceArns = profile
      ? [
          stack.formatArn({ service: 'bedrock', resource: 'inference-profile', resourceName: modelId }),
          foundationModel(profile[2]!, '*'),
        ]
      : [foundationModel(modelId)];
    if (profile) {
      Validations.of(this.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${profile[2]}]`,
        reason:
          'A cross-region inference profile routes to its foundation model in any of its regions; the model id is pinned.',
      });
    }
    return iam.Grant.addToPrincipal({ grantee: this, actions: ['bedrock:InvokeModel'], resourceArns });
  }
}
