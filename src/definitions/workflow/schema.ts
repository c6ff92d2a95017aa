/**
 * The definition format of a workflow: the manifest (`workflow.yaml`) and each step's frontmatter.
 * The `.describe()` texts are the documentation: the README's reference tables are generated from
 * them (`stepwise reference`), and a test keeps the two equal.
 */
import { normalize } from 'node:path';
import * as z from 'zod';
import { MapOptionSchema, ParallelOptionSchema, WaitOptionSchema, WorkflowCallSchema } from './construct-options.ts';
import { EventOptionSchema } from './event-option.ts';
import { McpSchema } from './mcp.ts';
import { StatePath } from './state-path.ts';
import { StepName } from './step-name.ts';

/** The route value that ends a workflow. */
export const DONE = 'DONE';

/** The `guard` option of a step's frontmatter. */
export const GuardOptionSchema = z
  .object({
    rules: z
      .string()
      .regex(/^[A-Za-z0-9_./-]+\.ya?ml$/, 'a .yaml file of the workflow folder')
      .refine((p) => !normalize(p).startsWith('..') && !p.startsWith('/'), 'inside the workflow folder')
      .describe(
        'The rules file, relative to the workflow folder (`guards/reply.yaml`): the checks and the fallback template.',
      ),
    tools: z
      .array(z.string())
      .optional()
      .describe(
        "The tools whose outgoing text is checked before they run. Default: the step's tools that declare a `replyArg`.",
      ),
    onViolation: z
      .enum(['regenerate', 'fallback'])
      .default('regenerate')
      .describe(
        '`regenerate`: the call is refused and the model is told the violations (up to `maxRegenerations` times), then the fallback is sent. `fallback`: the fallback is sent at once.',
      ),
    maxRegenerations: z
      .number()
      .int()
      .min(0)
      .max(3)
      .default(1)
      .describe('Refused attempts the model may rewrite before the fallback template is sent instead.'),
  })
  .strict();
export type GuardOption = z.infer<typeof GuardOptionSchema>;

export { StepName };

const RetryPolicy = z
  .object({
    maxAttempts: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(3)
      .describe('ASL `MaxAttempts`: retries after the first attempt.'),
    intervalSeconds: z.number().int().min(1).default(2).describe('Wait before the first retry.'),
    backoffRate: z.number().min(1).default(2).describe('Each further wait is this many times longer.'),
    maxDelaySeconds: z.number().int().min(1).default(30).describe('Cap of a wait; waits have full jitter.'),
  })
  .strict();

const EnvVarName = z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'UPPER_SNAKE_CASE');

export { StatePath };

/**
 * How executions of the workflow start. Each becomes AWS resources in the workflow's stack:
 * `email` an SES receipt rule and the email ingress (the execution input is `{ email }`, the body
 * is untrusted and read from the emails table), `eventbridge` a rule on `bus` whose matching
 * events start an execution with the event's `detail` as input, `api` direct `StartExecution`
 * (the state machine ARN is a stack output).
 */
export const TriggerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('email') }).strict(),
  z
    .object({
      type: z.literal('eventbridge'),
      bus: z
        .string()
        .regex(/^[A-Za-z0-9._\-/]{1,256}$/)
        .default('default')
        .describe("`eventbridge`: the bus the rule is on; `default` is the account's default bus."),
      pattern: z
        .record(z.string(), z.unknown())
        .refine((p) => Object.keys(p).length > 0, 'an empty pattern matches nothing')
        .describe('`eventbridge`: the event pattern; a matching event starts an execution with its `detail` as input.'),
    })
    .strict(),
  z.object({ type: z.literal('api') }).strict(),
]);

/**
 * Counter and outcome names: `iteration`, `IterationLimit`. Outcomes are PascalCase, like the other terminal states.
 */
const CounterName = z.string().regex(/^[a-z][a-zA-Z0-9]*$/, 'camelCase');
const OutcomeName = z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'PascalCase, like the terminal states');

/**
 * A counter in the execution state (`$.counters.<name>`), compiled into a Choice and a Pass before the steps that
 * change it (see `src/cdk/constructs/compile/counters.ts`).
 */
const CounterSchema = z
  .object({
    max: z
      .number()
      .int()
      .min(1)
      .max(100)
      .describe(
        'The cap: when the counter is at `max`, entering an `increment` step ends the execution in `outcome` instead.',
      ),
    increment: z
      .array(StepName)
      .min(1)
      .describe('Steps that add 1 when they are entered, before they run (the step sees the new value in `counters`).'),
    reset: z
      .array(StepName)
      .default([])
      .describe(
        'Steps that set the counter back to 0 when they are entered (before any increment, so a step may do both and start at 1).',
      ),
    outcome: OutcomeName.describe(
      'The Succeed state reached at the cap, named so: the execution ends there with its state as output (`result.data` holds the partial work).',
    ),
    then: StepName.optional().describe(
      'A step that answers at the cap instead: the outcome becomes a Pass state of that name that puts `{ Error: <outcome>, Cause }` in `$.error` and goes on to this step (it words the partial work as the reply); the execution then ends as that step routes.',
    ),
  })
  .strict();

/** `statemachines/<workflow>/workflow.yaml` */
export const ManifestSchema = z
  .object({
    name: StepName.describe('The workflow name: equals the folder name; the stack is `Stepwise-<Name>-<env>`.'),
    description: z.string().min(1).describe('What the workflow does (the stack description).'),
    version: z.string().min(1).describe('The definition version.'),
    entry: StepName.describe('The first step.'),
    maxSteps: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(10)
      .describe(
        'Circuit breaker: an execution that ran this many steps and still routes on ends in `MaxStepsExceeded`.',
      ),
    fallback: StepName.describe(
      'The step caught errors and undeclared routes go to (best a code step: it works when the model is down).',
    ),
    model: z
      .object({
        id: z.string().min(1).describe('The pinned Bedrock model id (the environment config may override it).'),
        maxTokens: z.number().int().positive().default(1024).describe('Output token cap of one model call.'),
      })
      .strict()
      .describe('The model LLM steps call.'),
    retry: RetryPolicy.default({ maxAttempts: 3, intervalSeconds: 2, backoffRate: 2, maxDelaySeconds: 30 }).describe(
      'Retry of transient errors (model throttling or timeout, tool outages) before the fallback takes over.',
    ),
    fastPaths: z
      .record(StepName, z.string().regex(/^[a-z0-9-]+$/))
      .default({})
      .describe(
        "Per LLM step, a fast path tried before its model: the module `lambdas/workflows/<workflow>/steps/<handler>.ts` (default export `defineFastPath`) decides the step without a model call or abstains (`null`) and the model decides. `FAST_PATHS=off` in the functions' environment turns them off (A/B against the model path).",
      ),
    tools: z
      .array(z.string().regex(/^[a-z][a-z0-9_]*$/, 'snake_case tool name'))
      .default([])
      .describe('The tools steps may use; each is the module `lambdas/workflows/<workflow>/tools/<name, _ as ->.ts`.'),
    mcp: McpSchema.optional().describe(
      'Tools from MCP servers, beside the tool modules: the servers and the tools steps may use from them (see "MCP tools").',
    ),
    input: z
      .object({
        schema: z
          .record(z.string(), z.unknown())
          .describe('JSON Schema of the execution input, checked at start and by every step.'),
        untrusted: z
          .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/))
          .default([])
          .describe(
            'Top-level input fields written by outsiders: shown to LLM steps as untrusted data, hidden from steps with `readsUntrusted: false`.',
          ),
      })
      .strict()
      .optional()
      .describe(
        'The execution input (not for `email` workflows: the email trigger defines theirs). Default: any JSON object.',
      ),
    triggers: z
      .array(TriggerSchema)
      .min(1)
      .default([{ type: 'api' }])
      .describe(
        'How executions start: `email` (SES receipt rule + ingress), `eventbridge` (a rule on a bus), `api` (StartExecution).',
      ),
    local: z
      .object({
        env: z
          .record(EnvVarName, z.string())
          .default({})
          .describe(
            'Environment variables added to every function in local runs; a value naming a file of the workflow folder becomes its path.',
          ),
      })
      .strict()
      .default({ env: {} })
      .describe('Local runs only.'),
    singlePrompt: z
      .boolean()
      .default(false)
      .describe(
        "Email workflows: also deploy the single-prompt agent (the whole workflow as one LLM step with every tool) beside the step workflow; the environment's `orchestration` setting and its rollback alarm choose which one inbound mail starts.",
      ),
    counters: z
      .record(CounterName, CounterSchema)
      .default({})
      .describe(
        'Counters kept in the state (`$.counters`), each checked by a generated Choice: an iteration cap per group that ends in a named outcome, not in `MaxStepsExceeded`.',
      ),
    summary: z
      .object({
        identify: z
          .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/, 'a dotted path'))
          .min(1)
          .optional()
          .describe(
            'Paths of the execution input that tell a person which execution it is (`customer.name`). Default: `email.subject` and `email.from` for email workflows, else the first three top-level input fields.',
          ),
        outcome: z
          .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an output field name'))
          .min(1)
          .optional()
          .describe(
            'Step output fields (in `result.data`) that say how it ended, the first one set wins (`ticketId`). Default: the last step before the end.',
          ),
      })
      .strict()
      .default({})
      .describe('What the executions list (Studio, `stepwise executions --all`) shows of each execution.'),
  })
  .strict()
  .meta({ title: 'workflow.yaml' });

const OutputField = z
  .object({
    type: z.enum(['string', 'number', 'boolean', 'object']).describe('The value type.'),
    description: z.string().min(1).describe('What the model is told to put there.'),
    pii: z.boolean().default(false).describe("Personal data: kept out of INFO logs and the event log's plain fields."),
    from: z
      .string()
      .regex(/^[a-z][a-z0-9_]*\.[a-zA-Z][a-zA-Z0-9_]*$/, '<tool>.<resultKey>, e.g. create_ticket.ticketId')
      .optional()
      .describe(
        "`<tool>.<resultKey>`: taken from the step's last successful call of the tool, never from what the model reported.",
      ),
    metric: z
      .object({
        name: z
          .string()
          .regex(/^[A-Z][A-Za-z0-9]*$/, 'PascalCase')
          .describe('The metric: one count per step run that reports the output.'),
        values: z
          .array(z.string().min(1))
          .min(1)
          .max(30)
          .describe(
            'The values counted by name (dimension `value`); any other counts as `other`, so a model cannot grow the dimension.',
          ),
      })
      .strict()
      .optional()
      .describe(
        "String outputs: count each run's value as a CloudWatch metric (EMF) with dimensions workflow, step and value (e.g. the intent of every turn).",
      ),
    enum: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        'String outputs: the only values allowed. A value that differs only in case or surrounding spaces (`Continue`) is normalised to the declared one; any other fails the route check like an undeclared edge (the model is told once, then the step fails).',
      ),
    routes: z
      .record(z.string(), z.array(z.union([StepName, z.literal('DONE')])).min(1))
      .optional()
      .describe(
        'With `enum`, one entry per value: the declared edges that value may route to (`{ continue: [02-select-tool], done: [05-respond] }`). The output is then required, and a route that disagrees with it is refused.',
      ),
  })
  .strict();

/**
 * Sampling an LLM step several times in a Step Functions Map and voting (see `src/runtime/steps/consensus.ts` for the
 * vote).
 */
const ConsensusSchema = z
  .object({
    samples: z.number().int().min(2).max(40).default(7).describe('How many times the step is sampled at most.'),
    temperatures: z
      .array(z.number().min(0).max(1))
      .min(1)
      .default([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
      .describe(
        'The temperature of each sample, in sample order (repeated from the start when shorter than `samples`).',
      ),
    waves: z
      .array(z.number().int().min(1))
      .min(1)
      .optional()
      .describe(
        'Samples per Map state, summing to `samples`; after each wave the vote stops early when the leader can no longer be overtaken or tied. Default: a majority first, then the rest.',
      ),
    maxConcurrency: z.number().int().min(1).max(40).default(4).describe('`MaxConcurrency` of each Map state.'),
    vote: z
      .string()
      .regex(/^[a-zA-Z][a-zA-Z0-9]*$/)
      .optional()
      .describe(
        'A declared output voted on together with the route (`selectedTool`); without it the route alone is voted on.',
      ),
    choices: z
      .union([z.literal('tools'), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe(
        "The values `vote` may take (`tools`: the manifest's tools); a sample with another value (an invented tool) is discarded, never counted.",
      ),
  })
  .strict();

/**
 * A human/agent checkpoint after a step (see `src/cdk/constructs/pause.ts`): deployed, a
 * `.waitForTaskToken` Task that publishes the token; locally, a suspended execution (`stepwise resume`).
 */
export const PauseSchema = z
  .object({
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .max(31_536_000)
      .describe('ASL `TimeoutSeconds`: how long the checkpoint waits for `SendTaskSuccess`/`SendTaskFailure`.'),
    heartbeatSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'ASL `HeartbeatSeconds`: the resumer must call `SendTaskHeartbeat` this often (less than `timeoutSeconds`).',
      ),
    onTimeout: StepName.describe(
      'The escalation step a timed-out checkpoint goes to (Catch `States.Timeout`, `States.HeartbeatTimeout`), with the error at `$.error`.',
    ),
    edges: z
      .array(StepName)
      .min(1)
      .optional()
      .describe('Pause only when the step routes to one of these; default: every declared edge but `DONE`.'),
    when: z
      .string()
      .optional()
      .describe(
        'A boolean output of the step: pause only when the step sets it to `true`; default: on every paused edge.',
      ),
    actions: z
      .string()
      .optional()
      .describe(
        'The step output listing what the resumer must do (shown by `stepwise executions`, sent in the event).',
      ),
    instructions: z.string().min(1).optional().describe('Fixed text for the resumer, sent with every checkpoint.'),
  })
  .strict();

/** The YAML frontmatter of `statemachines/<workflow>/steps/<step>.md`. */
export const StepFrontmatterSchema = z
  .object({
    name: StepName.describe("The step name: equals the file name; also the Task state's name."),
    description: z.string().min(1).describe('What the step does (the Lambda description).'),
    version: z.string().min(1).describe('The step version.'),
    kind: z
      .enum(['llm', 'code', 'map', 'parallel', 'workflow', 'wait', 'event'])
      .describe(
        '`llm`: the markdown body is the system prompt. `code`: a deterministic handler, no model. `map`, `parallel`, `workflow`, `wait`, `event`: a construct, configured by the option of the same name (see "Workflow constructs").',
      ),
    handler: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .optional()
      .describe('Code steps: the module `lambdas/workflows/<workflow>/steps/<handler>.ts` (its default export).'),
    next: z
      .array(z.union([StepName, z.literal('DONE')]))
      .min(1)
      .describe(
        'The steps this step may route to (`DONE` ends the workflow); the Choice after it takes no other route. One edge: no route call needed.',
      ),
    tools: z.array(z.string()).default([]).describe("The step's allow-list; any other call is refused and recorded."),
    expects: z
      .array(StatePath)
      .default([])
      .describe(
        'State paths the step works on (`data.serialNumber`): one that is missing is logged at WARN (`Step input missing`) and the step still runs, deciding what to do without it.',
      ),
    requires: z
      .array(z.string())
      .default([])
      .describe(
        'Tools that must have succeeded before the step may route on (else it fails and the fallback takes over).',
      ),
    outputs: z
      .record(z.string().regex(/^[a-zA-Z][a-zA-Z0-9_]*$/, 'camelCase or snake_case'), OutputField)
      .default({})
      .describe("Structured outputs, merged into the state's `data` for later steps."),
    bind: z
      .record(z.string(), z.record(z.string(), StatePath))
      .default({})
      .describe(
        'LLM steps: tool arguments filled from state, per tool (`create_ticket: { serialNumber: data.device.serial }`); the model never sees them and a call that sets one is refused.',
      ),
    readsUntrusted: z
      .boolean()
      .default(true)
      .describe('LLM steps: whether the prompt includes the input the trigger marks untrusted.'),
    temperature: z.number().min(0).max(1).default(0).describe('LLM steps: the sampling temperature.'),
    models: z
      .array(z.string().min(1))
      .min(2)
      .optional()
      .describe(
        "LLM steps: a panel of models instead of the manifest's. The step runs once per model, in order, with the same prompt; the first model's route is taken and every model's outputs are in the `panel` output (`[{ model, fields }]`) for a later step to combine. Each is granted like the manifest's model.",
      ),
    promptFiles: z
      .array(z.string().regex(/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*\.yaml$/, 'a .yaml file of the workflow folder'))
      .default([])
      .describe(
        'LLM steps: YAML files of the workflow folder appended to the system prompt as definitions the model must know (e.g. profile fields with their extraction hints); read at load time, so the prompt stays static and cacheable.',
      ),
    guard: GuardOptionSchema.optional().describe(
      'LLM steps: check outgoing text against the rules of a file before the tool sends it (see "Output guards").',
    ),
    consensus: ConsensusSchema.optional().describe(
      'LLM steps: sample the step at several temperatures in an inline Map state and take the majority decision (ties: the value whose coldest sample is coldest).',
    ),
    pause: PauseSchema.optional().describe(
      'A checkpoint after the step, before it routes on: the execution waits for a person or agent to resume it.',
    ),
    map: MapOptionSchema.optional().describe(
      '`map` steps: run a chain of steps once per element of a state array, in an inline Map state.',
    ),
    parallel: ParallelOptionSchema.optional().describe(
      '`parallel` steps: run two or more chains of steps at once (a Parallel state) and join their outputs.',
    ),
    workflow: WorkflowCallSchema.optional().describe(
      '`workflow` steps: start another workflow of the project and wait for its result (`startExecution.sync:2`).',
    ),
    wait: WaitOptionSchema.optional().describe(
      '`wait` steps: wait a fixed time or until a timestamp of the state (a Wait state).',
    ),
    event: EventOptionSchema.optional().describe(
      '`event` steps: wait until an outside event carrying the correlation key arrives, or take `onTimeout` at the deadline (a `.waitForTaskToken` Task).',
    ),
  })
  .strict()
  .meta({ title: 'step frontmatter' });

export type Manifest = z.infer<typeof ManifestSchema>;
export type Counter = z.infer<typeof CounterSchema>;
export type Consensus = z.infer<typeof ConsensusSchema>;
export type StepFrontmatter = z.infer<typeof StepFrontmatterSchema>;

export interface StepDefinition extends StepFrontmatter {
  /** The markdown body: the instruction (system prompt) for LLM steps, documentation/templates for code steps. */
  instruction: string;
  /** Path of the step file, relative to the project root. */
  file: string;
}

export interface WorkflowDefinition {
  manifest: Manifest;
  /** Steps in file-name order. */
  steps: StepDefinition[];
  /** Absolute path of the workflow folder. */
  dir: string;
}
