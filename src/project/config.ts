import { join } from 'node:path';
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as z from 'zod';
import { ConfigError } from '../core/errors.ts';
import { PROJECT_ROOT } from '../core/paths.ts';
import { importProjectModule } from '../core/project-modules.ts';

/** What one lifecycle needs in one environment (`lifecycles.<name>`). */
export const LifecycleSettingsSchema = z
  .object({
    /**
     * The agent config the lifecycle applies: `statemachines/<lifecycle>/agents/<agent>.json`. @default none: no goal,
     * no stops, no timers
     */
    agent: z
      .string()
      .regex(/^[a-z0-9-]+$/, 'an agent config name')
      .optional(),
    /** The `crmSync` feature: where the CRM sync POSTs each state change. */
    crmWebhookUrl: z.url({ protocol: /^https$/ }).optional(),
    /**
     * The `followUps` feature: where the follow-up sender POSTs a due follow-up for the agent's channel.
     * @default `/stepwise/follow-up` on the CRM webhook's host
     */
    followUpWebhookUrl: z.url({ protocol: /^https$/ }).optional(),
    /**
     * The `notify` feature: who the notifier emails. @default email.mailFrom (verified in SES, so it works in the
     * sandbox too)
     */
    notifyEmail: z.email().optional(),
  })
  .strict();
export type LifecycleSettings = z.infer<typeof LifecycleSettingsSchema>;

/**
 * Typed per-environment deployment config. It belongs to the project: `stepwise.config.ts` at the
 * project root default-exports `defineConfig({ environments: { dev: {...}, prod: {...} } })`, and
 * `cdk deploy -c env=NAME` selects one (context key `env`, default `dev`). The app reads it once and
 * passes it down as props: constructs never read `process.env` or context themselves, so a test can
 * synthesize any environment in-process. The engine holds no domain, address or account of its own.
 */
/**
 * The retention periods CloudWatch Logs accepts, in days (`RetentionDays`; 9999 keeps logs forever).
 * Written out so that reading a config does not load the CDK; a test keeps them equal.
 */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653, 9999,
] as const;

export const EnvConfigSchema = z
  .object({
    /** The environment's name (the key in `environments`): stack, bus and metric names carry it. */
    name: z.string().regex(/^[a-z][a-z0-9-]{0,19}$/, 'lower-case letters, digits and -, at most 20 characters'),
    /**
     * The AWS account the stacks deploy to. Required outside `dev`, where stacks are environment-agnostic without it.
     */
    account: z
      .string()
      .regex(/^\d{12}$/, 'a 12-digit AWS account id')
      .optional(),
    /** The AWS region the stacks deploy to. @default the CLI's region at deploy time */
    region: z
      .string()
      .regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, 'an AWS region such as eu-west-1')
      .optional(),
    /** Overrides the pinned Bedrock model id of every workflow manifest. @default the manifest's `model.id` */
    modelId: z.string().min(1).optional(),
    /**
     * `offline` deploys the deterministic stand-in (no Bedrock access needed, no Bedrock permission
     * granted); `openai` an OpenAI-compatible chat-completions endpoint (see `openai`).
     */
    modelProvider: z.enum(['bedrock', 'offline', 'openai']).default('bedrock'),
    /**
     * The OpenAI-compatible endpoint of `modelProvider: openai`. Base URL and model reach the step
     * functions as environment variables; the API key never does: it is an SSM SecureString
     * parameter (`apiKeyParameter`, a name like `/stepwise/prod/openai-api-key`) that each LLM step
     * may read (`ssm:GetParameter` on that parameter only) and reads once per container.
     * @default none (needed only with `modelProvider: openai`)
     */
    openai: z
      .object({
        baseUrl: z.url({ protocol: /^https?$/ }),
        model: z.string().min(1),
        apiKeyParameter: z
          .string()
          .regex(/^\/[A-Za-z0-9_.\-/]+$/, 'an SSM parameter name starting with /')
          .optional(),
      })
      .strict()
      .optional(),
    /**
     * The embedding model of tools that declare `resources.embeddings` (the turn pipeline's
     * retrieval and relevance check): Titan Text Embeddings V2 on Bedrock, or the lexical adapter
     * (word overlap, no model). Local runs without `--model bedrock` use the lexical adapter.
     */
    embeddings: z
      .object({
        provider: z.enum(['bedrock', 'lexical']).default('bedrock'),
        modelId: z.string().min(1).default('amazon.titan-embed-text-v2:0'),
      })
      .strict()
      .default({ provider: 'bedrock', modelId: 'amazon.titan-embed-text-v2:0' }),
    /** Powertools log level. Customer data is only logged at DEBUG. */
    logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
    /**
     * Whether state machine logs (level ALL) include each state's input and output, and whether a
     * step Lambda returns its tool calls' arguments and results and its reply text (Step Functions
     * records a Lambda's whole output in the execution history, whatever the logging settings).
     * They hold the sender's address, reply text and tool arguments: useful in dev, personal data
     * in prod, where steps return a summary and the details stay in the event log.
     */
    executionDataInLogs: z.boolean().default(false),
    /**
     * Every AWS SDK call as an X-Ray subsegment (Powertools Tracer). Functions and state machines
     * are traced either way; this adds the X-Ray SDK to every bundle, about 127 KB and 30 ms of
     * each cold start, so it is for an environment where someone is reading the traces.
     */
    sdkTraces: z.boolean().default(false),
    /**
     * OpenTelemetry through the ADOT Lambda layer (AWS Distro for OpenTelemetry, JavaScript): every
     * function gets the layer and `AWS_LAMBDA_EXEC_WRAPPER`, `OTEL_SERVICE_NAME` (and
     * `OTEL_EXPORTER_OTLP_ENDPOINT` when `endpoint` is set). The layer carries the SDK, so no bundle
     * grows. Off by default.
     */
    openTelemetry: z
      .object({
        /** The layer's ARN for the environment's region and arm64 (layer versions differ per region). */
        layerArn: z.string().regex(/^arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+$/),
        /** The collector the layer exports to. @default the layer's own (X-Ray and CloudWatch) */
        endpoint: z.url().optional(),
      })
      .strict()
      .optional(),
    /**
     * Ship AWS SDK v3 inside every bundle, tree-shaken and minified, instead of loading the Lambda runtime's from its
     * node_modules. The default: a cold start imports the bundled SDK in about 0.6× the time (see
     * docs/internals/bundles.md, measured by `npm run bench -- bundles`), at the price of bigger bundles (under 1.5 MB).
     * `false` keeps bundles small and the SDK version the runtime's.
     */
    bundleAwsSdk: z.boolean().default(true),
    /**
     * Ship source maps with every bundle and turn them on (`NODE_OPTIONS=--enable-source-maps`):
     * stack traces name the TypeScript source, at the price of about 18 MB in `cdk.out` and a slower
     * error path. @default false
     */
    sourceMaps: z.boolean().default(false),
    /**
     * Ship each workflow's `evals/`, `samples/` and `conversations/` folders with its functions (no Lambda reads them).
     * @default false
     */
    shipEvalsAndSamples: z.boolean().default(false),
    /**
     * Retention of every Lambda and state machine log group, in days (a CloudWatch Logs retention value). @default 30
     */
    logRetention: z
      .union(LOG_RETENTION_DAYS.map((days) => z.literal(days)))
      .default(30)
      .transform((days) => days as RetentionDays),
    /** What happens to tables and log groups when the stack is deleted. */
    removalPolicy: z
      .enum(['destroy', 'retain'])
      .default('retain')
      // RemovalPolicy's values are these strings.
      .transform((policy) => policy as RemovalPolicy),
    terminationProtection: z.boolean().default(false),
    alarms: z
      .object({
        /** Failed executions per 5-minute period that raise the alarm. */
        failedExecutionsThreshold: z.number().int().min(1),
        /**
         * Emails handed to a person by the fallback (caught errors, rejected routes) per 5-minute
         * period that raise the alarm: executions still succeed then, so nothing else would notice
         * a model that is down or misconfigured.
         */
        handoffsThreshold: z.number().int().min(1).default(5),
        evaluationPeriods: z.number().int().min(1),
        /**
         * Errors of one Lambda function (a step, the email ingress) per 5-minute period that raise
         * its alarm. Errors the ASL retries count too: a model that keeps timing out shows here first.
         */
        functionErrorsThreshold: z.number().int().min(1).default(1),
        /**
         * Throttled invocations of one Lambda function, or throttled model calls of one workflow (`ModelThrottled`),
         * per 5-minute period that raise their alarm.
         */
        throttlesThreshold: z.number().int().min(1).default(1),
        /**
         * Subscribed (by email, after confirmation) to an SNS topic of each stack that every alarm notifies.
         * @default no notification
         */
        email: z.email().optional(),
        /**
         * An existing SNS topic that every alarm notifies instead (one shared with the on-call
         * tooling); its policy must let CloudWatch publish (and use its key, if encrypted).
         * @default no notification
         */
        topicArn: z
          .string()
          .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/, 'an SNS topic ARN')
          .optional(),
      })
      .strict()
      .refine((a) => !(a.email && a.topicArn), {
        message: 'give email or topicArn, not both: with a topic of your own, subscribe the address to it',
        path: ['topicArn'],
      })
      .default({
        failedExecutionsThreshold: 1,
        handoffsThreshold: 5,
        functionErrorsThreshold: 1,
        throttlesThreshold: 1,
        evaluationPeriods: 1,
      }),
    email: z
      .object({
        /** Domain whose MX points at SES inbound; the receipt rule accepts mail for `recipients`. */
        receivingDomain: z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'a lower-case domain name'),
        recipients: z.array(z.email()).min(1),
        /** The verified SES identity replies are sent from; `send_email` is only allowed to use this address. */
        mailFrom: z.email(),
        /** Larger inbound mail is refused by the ingress. */
        maxEmailBytes: z
          .number()
          .int()
          .min(1024)
          .max(40 * 1024 * 1024),
        /**
         * The stricter sender policy: answer only mail whose From is authenticated (DMARC pass, or
         * an SPF or DKIM pass aligned with the From domain); anything else is stored and held for a
         * person (`unauthenticated_sender`), with no automatic reply.
         * @default false (dev and staging answer unauthenticated mail that did not fail a check); on in prod
         */
        requireAuthenticatedSender: z.boolean().default(false),
        /**
         * S3 server access logs of the raw-mail bucket, into a bucket of their own: who read or
         * deleted which stored mail (the bucket holds every inbound mail, personal data included).
         * @default false; on in prod
         */
        accessLogs: z.boolean().default(false),
      })
      .strict()
      .refine((e) => e.recipients.every((r) => r.endsWith(`@${e.receivingDomain}`)), {
        message: 'every recipient must be an address of receivingDomain',
        path: ['recipients'],
      })
      .optional(),
    /**
     * Per-lifecycle settings, by lifecycle name (the folder of its `statechart.yaml`): what the
     * features its statechart opts into need in this environment. A lifecycle without an entry
     * runs with no agent and no feature endpoints. @default {}
     */
    lifecycles: z
      .record(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'a lifecycle name'), LifecycleSettingsSchema)
      .default({}),
    /**
     * For workflows with `singlePrompt`: where inbound mail goes (`useStepOrchestrator`:
     * the step workflow, else the single-prompt agent; both are deployed), written to an SSM
     * parameter the ingress reads, and the rollback: when fallbacks and failed executions of the
     * step workflow exceed `failureRatePercent` of its executions over `windowMinutes` (with at least
     * `minExecutions`), an alarm flips the parameter to the single-prompt agent.
     */
    orchestration: z
      .object({
        useStepOrchestrator: z.boolean().default(true),
        rollback: z
          .object({
            failureRatePercent: z.number().min(0.1).max(100).default(5),
            windowMinutes: z.number().int().min(5).max(1440).default(60),
            minExecutions: z.number().int().min(1).default(20),
          })
          .strict()
          .default({ failureRatePercent: 5, windowMinutes: 60, minExecutions: 20 }),
      })
      .strict()
      .default({
        useStepOrchestrator: true,
        rollback: { failureRatePercent: 5, windowMinutes: 60, minExecutions: 20 },
      }),
    /** Applied to every stack (and so to every taggable resource). */
    tags: z.record(z.string(), z.string()).default({}),
  })
  .strict()
  .refine((c) => c.modelProvider !== 'openai' || c.openai !== undefined, {
    message: 'modelProvider openai needs the openai endpoint (baseUrl, model)',
    path: ['openai'],
  });

/** A validated environment config. */
export type EnvConfig = z.infer<typeof EnvConfigSchema>;
export type EnvName = EnvConfig['name'];

/** The settings of one environment as `stepwise.config.ts` writes them (defaults not applied yet). */
export type EnvironmentSettings = Omit<z.input<typeof EnvConfigSchema>, 'name'>;

/** A project's `stepwise.config.ts`: its environments by name. */
export interface StepwiseConfig {
  readonly environments: Readonly<Record<string, EnvironmentSettings>>;
}

const StepwiseConfigSchema = z.strictObject({ environments: z.record(z.string(), z.looseObject({})) });

/**
 * Type the project's config (`stepwise.config.ts` default-exports it).
 * @example
 * export default defineConfig({
 *   environments: {
 *     dev: { logLevel: 'DEBUG', executionDataInLogs: true, removalPolicy: 'destroy' },
 *     prod: { account: '123456789012', region: 'eu-west-1', alarms: { failedExecutionsThreshold: 1, evaluationPeriods: 1, email: 'oncall@acme.io' } },
 *   },
 * });
 */
export const defineConfig = (config: StepwiseConfig): StepwiseConfig => config;

/** The config file at the project root. */
export const CONFIG_FILE = 'stepwise.config.ts';

/** Without a config file a project has one environment, `dev`, with every default. */
const NO_CONFIG: StepwiseConfig = { environments: { dev: {} } };

/**
 * The project's config: the default export of `stepwise.config.ts` at `root`.
 * @throws ConfigError when the file exports no `{ environments }`.
 */
export async function loadProjectConfig(root: string = PROJECT_ROOT): Promise<StepwiseConfig> {
  const mod = await importProjectModule<{ default?: unknown }>(join(root, 'stepwise.config'), root);
  if (!mod) return NO_CONFIG;
  const parsed = StepwiseConfigSchema.safeParse(mod.default);
  if (!parsed.success)
    throw new ConfigError(
      `${CONFIG_FILE}: the default export must be defineConfig({ environments: { <name>: {...} } }) (${parsed.error.issues[0]!.message})`,
    );
  return parsed.data as StepwiseConfig;
}

/** Reserved example domains (RFC 2606): a value on one of them was never filled in. */
const PLACEHOLDER = /(^|[.@/])example\.(com|org|net)($|[/:?#]|\b)|\.example$/i;

/** The first string value of `value` on a placeholder domain, as (dotted path, value). */
function firstPlaceholder(value: unknown, path: string[] = []): { path: string; value: string } | undefined {
  if (typeof value === 'string') return PLACEHOLDER.test(value) ? { path: path.join('.'), value } : undefined;
  if (value && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) {
      const found = firstPlaceholder(inner, [...path, key]);
      if (found) return found;
    }
  return undefined;
}

export interface ResolveOptions {
  /** Accept placeholder values and no account in any environment (tests of prod-only resources). @default only in `dev` */
  readonly allowPlaceholders?: boolean;
}

/**
 * The validated config of one environment of the project.
 * @throws ConfigError, one line naming the field: an unknown environment (the message lists the
 * known ones), an invalid value, or (outside `dev`) a placeholder value or no `account`.
 * @example resolveEnvironment(config, app.node.tryGetContext('env') ?? 'dev')
 */
export function resolveEnvironment(config: StepwiseConfig, name: string, options: ResolveOptions = {}): EnvConfig {
  const known = Object.keys(config.environments);
  if (!Object.hasOwn(config.environments, name)) {
    throw new ConfigError(
      `unknown environment "${name}" (${CONFIG_FILE} defines: ${known.join(', ') || 'none'}); select one with -c env=NAME`,
    );
  }
  const settings = config.environments[name]!;
  const parsed = EnvConfigSchema.safeParse({ name, ...settings });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`environment "${name}": ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  if (name !== 'dev' && !options.allowPlaceholders) {
    const placeholder = firstPlaceholder(settings);
    if (placeholder)
      throw new ConfigError(
        `environment "${name}": ${placeholder.path}: "${placeholder.value}" is a placeholder: set the real value in ${CONFIG_FILE}`,
      );
    if (!parsed.data.account)
      throw new ConfigError(
        `environment "${name}": account: required outside dev (the 12-digit AWS account to deploy to), in ${CONFIG_FILE}`,
      );
  }
  return parsed.data;
}

/**
 * The environment's email settings, which a workflow with an email trigger (and anything that sends
 * mail) needs.
 * @throws ConfigError naming the field and who needs it.
 */
export function emailSettings(config: EnvConfig, neededBy: string): NonNullable<EnvConfig['email']> {
  if (!config.email)
    throw new ConfigError(
      `environment "${config.name}": email: required by ${neededBy} (receivingDomain, recipients, mailFrom, maxEmailBytes), in ${CONFIG_FILE}`,
    );
  return config.email;
}
