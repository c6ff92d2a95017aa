import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as z from 'zod';
import { ConfigError } from '../lambdas/lib/errors.ts';

/**
 * Typed per-environment deployment config. `cdk deploy -c env=NAME` selects one (context key `env`,
 * default `dev`); `infra/app.ts` reads it once and passes it down as props — constructs never read
 * `process.env` or context themselves, so a test can synthesize any environment in-process.
 */
export const EnvConfigSchema = z
  .object({
    name: z.enum(['dev', 'staging', 'prod']),
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
        apiKeyParameter: z.string().regex(/^\/[A-Za-z0-9_.\-/]+$/, 'an SSM parameter name starting with /').optional(),
      })
      .strict()
      .optional(),
    /**
     * The embedding model of tools that declare `resources.embeddings` (the turn pipeline's
     * retrieval and relevance check): Titan Text Embeddings V2 on Bedrock, or the lexical adapter
     * (word overlap, no model). Local runs without `--model bedrock` use the lexical adapter.
     */
    embeddings: z
      .object({ provider: z.enum(['bedrock', 'lexical']).default('bedrock'), modelId: z.string().min(1).default('amazon.titan-embed-text-v2:0') })
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
    executionDataInLogs: z.boolean(),
    /**
     * Every AWS SDK call as an X-Ray subsegment (Powertools Tracer). Functions and state machines
     * are traced either way; this adds the X-Ray SDK to every bundle, about 127 KB and 30 ms of
     * each cold start, so it is for an environment where someone is reading the traces.
     */
    sdkTraces: z.boolean().default(false),
    /**
     * Ship AWS SDK v3 inside every bundle instead of using the Lambda runtime's. Bundled and
     * minified, the SDK starts faster (about 50–110 ms less module initialisation, measured
     * locally by `npm run bench -- bundles`) but adds 350–560 KB to each function; with the
     * runtime's, bundles stay under 500 KB and the SDK version is the runtime's.
     */
    bundleAwsSdk: z.boolean().default(false),
    /** Retention of every Lambda and state machine log group. */
    logRetention: z.enum(RetentionDays),
    /** What happens to tables and log groups when the stack is deleted. */
    removalPolicy: z.enum([RemovalPolicy.DESTROY, RemovalPolicy.RETAIN]),
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
        /** Subscribed (by email, after confirmation) to an SNS topic that every alarm notifies. @default no notification */
        email: z.email().optional(),
      })
      .strict(),
    email: z
      .object({
        /** Domain whose MX points at SES inbound; the receipt rule accepts mail for `recipients`. */
        receivingDomain: z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'a lower-case domain name'),
        recipients: z.array(z.email()).min(1),
        /** The verified SES identity replies are sent from; `send_email` is only allowed to use this address. */
        mailFrom: z.email(),
        /** Larger inbound mail is refused by the ingress. */
        maxEmailBytes: z.number().int().min(1024).max(40 * 1024 * 1024),
        /**
         * The stricter sender policy: answer only mail whose From is authenticated (DMARC pass, or
         * an SPF or DKIM pass aligned with the From domain); anything else is stored and held for a
         * person (`unauthenticated_sender`), with no automatic reply.
         * @default false (dev and staging answer unauthenticated mail that did not fail a check); on in prod
         */
        requireAuthenticatedSender: z.boolean().default(false),
      })
      .strict()
      .refine((e) => e.recipients.every((r) => r.endsWith(`@${e.receivingDomain}`)), {
        message: 'every recipient must be an address of receivingDomain',
        path: ['recipients'],
      }),
    leads: z
      .object({
        /** The agent config the lifecycle applies: `statemachines/lead-lifecycle/agents/<agent>.json`. */
        agent: z.string().regex(/^[a-z0-9-]+$/).default('book-meeting'),
        /** Where the CRM sync POSTs each lead state change. */
        crmWebhookUrl: z.url({ protocol: /^https$/ }),
        /** Where the follow-up sender POSTs a due follow-up for the agent's channel. @default `/stepwise/follow-up` on the CRM webhook's host */
        followUpWebhookUrl: z.url({ protocol: /^https$/ }).optional(),
        /** Who the notifier emails. @default email.mailFrom (verified in SES, so it works in the sandbox too) */
        notifyEmail: z.email().optional(),
      })
      .strict(),
    /**
     * Seed 000 AC7, for workflows with `singlePrompt`: where inbound mail goes (`useStepOrchestrator`:
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
      .default({ useStepOrchestrator: true, rollback: { failureRatePercent: 5, windowMinutes: 60, minExecutions: 20 } }),
    /** Applied to every stack (and so to every taggable resource). */
    tags: z.record(z.string(), z.string()).default({}),
  })
  .strict()
  .refine((c) => c.modelProvider !== 'openai' || c.openai !== undefined, { message: 'modelProvider openai needs the openai endpoint (baseUrl, model)', path: ['openai'] });

/** A validated environment config. */
export type EnvConfig = z.infer<typeof EnvConfigSchema>;
export type EnvName = EnvConfig['name'];

const MiB = 1024 * 1024;

/**
 * The model every environment pins: Claude Haiku 4.5 through its US cross-region inference profile
 * (Bedrock serves it on demand only through an inference profile; use the `eu.`/`apac.` profile in
 * those regions). Claude 3.5 Haiku, the manifests' default, is a legacy model past its end-of-life
 * date (19 June 2026, Bedrock model card). Pinned per environment so one can move first.
 */
const HAIKU_4_5 = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';

// example.com addresses are placeholders: set the real receiving domain, sender, alarm address and CRM endpoint before deploying.
const ENVIRONMENTS: Record<EnvName, Omit<z.input<typeof EnvConfigSchema>, 'name'>> = {
  dev: {
    modelId: HAIKU_4_5,
    logLevel: 'DEBUG',
    logRetention: RetentionDays.TWO_WEEKS,
    executionDataInLogs: true,
    removalPolicy: RemovalPolicy.DESTROY,
    alarms: { failedExecutionsThreshold: 5, evaluationPeriods: 1 },
    email: {
      receivingDomain: 'dev.warranty.example.com',
      recipients: ['claims@dev.warranty.example.com'],
      mailFrom: 'claims@dev.warranty.example.com',
      maxEmailBytes: 10 * MiB,
    },
    leads: { crmWebhookUrl: 'https://crm.dev.example.com/stepwise/lead-state' },
    tags: { project: 'stepwise', environment: 'dev' },
  },
  staging: {
    modelId: HAIKU_4_5,
    logRetention: RetentionDays.ONE_MONTH,
    executionDataInLogs: true,
    removalPolicy: RemovalPolicy.RETAIN,
    alarms: { failedExecutionsThreshold: 3, evaluationPeriods: 1 },
    email: {
      receivingDomain: 'staging.warranty.example.com',
      recipients: ['claims@staging.warranty.example.com'],
      mailFrom: 'claims@staging.warranty.example.com',
      maxEmailBytes: 10 * MiB,
    },
    leads: { crmWebhookUrl: 'https://crm.staging.example.com/stepwise/lead-state' },
    tags: { project: 'stepwise', environment: 'staging' },
  },
  prod: {
    modelId: HAIKU_4_5,
    logRetention: RetentionDays.ONE_YEAR,
    executionDataInLogs: false,
    removalPolicy: RemovalPolicy.RETAIN,
    terminationProtection: true,
    alarms: { failedExecutionsThreshold: 1, evaluationPeriods: 1, email: 'stepwise-alerts@example.com' },
    email: {
      receivingDomain: 'warranty.example.com',
      recipients: ['claims@warranty.example.com'],
      mailFrom: 'claims@warranty.example.com',
      maxEmailBytes: 10 * MiB,
      requireAuthenticatedSender: true,
    },
    leads: { crmWebhookUrl: 'https://crm.example.com/stepwise/lead-state' },
    tags: { project: 'stepwise', environment: 'prod' },
  },
};

/** The environment names `-c env=NAME` accepts. */
export const ENV_NAMES = Object.keys(ENVIRONMENTS) as EnvName[];

/**
 * The validated config of one environment.
 * @throws ConfigError for an unknown name (the message lists the known ones) or an invalid config.
 * @example getEnvConfig(app.node.tryGetContext('env') ?? 'dev')
 */
export function getEnvConfig(name: string): EnvConfig {
  if (!Object.hasOwn(ENVIRONMENTS, name)) {
    throw new ConfigError(`unknown environment "${name}" (known: ${ENV_NAMES.join(', ')}); select one with -c env=NAME`);
  }
  const parsed = EnvConfigSchema.safeParse({ name, ...ENVIRONMENTS[name as EnvName] });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`environment "${name}": ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}
