/**
 * `stepwise run --mode single-prompt`: a local session's inputs run by the workflow's single-prompt
 * agent (see ./single-prompt.ts) instead of its state machine. Its tools are the step functions'
 * (the environment of every step function of the workflow, as the local runtime gives it: the
 * tables on DynamoDB Local, the outbox, the manifest's `local.env`), so what it does is what the
 * step workflow's tools would do; an email goes through the real ingress first, which starts the
 * agent where it would start the state machine.
 */

import { ENTRY_METADATA } from '../../cdk/metadata.ts';
import { STEP_ENTRY } from '../../cdk/names.ts';
import { isEmailWorkflow } from '../../definitions/workflow/input.ts';
import type { WorkflowDefinition } from '../../definitions/workflow/schema.ts';
import type { ModelProvider } from '../../runtime/contracts/model-port.ts';
import { loadPlugin } from '../../runtime/plugin.ts';
import { SINGLE_PROMPT_STEP } from '../../runtime/steps/single-prompt.ts';
import { createToolbox } from '../../runtime/tools/toolbox.ts';
import { emailUntrusted } from '../../runtime/triggers/email/context.ts';
import { readOutbox } from '../../runtime/triggers/email/mail.ts';
import type { ExecutionStarter } from '../../runtime/triggers/email/starter.ts';
import { dynamoEmailStore } from '../../runtime/triggers/email/store.ts';
import type { DynamoDbLocal } from '../cloud/dynamodb-local.ts';
import { FunctionRegistry, type FunctionRegistryOptions } from '../cloud/function-registry.ts';
import type { SynthesizedApp } from '../cloud/synth.ts';
import { describeError, type RunResult } from './run-result.ts';
import { runSinglePrompt, untrustedOfInput } from './single-prompt.ts';

/** The environment of every step function of `def` in `app`, merged (the agent may call every tool), without `STEP`. */
function stepFunctionsEnvironment(
  app: SynthesizedApp,
  def: WorkflowDefinition,
  options: FunctionRegistryOptions,
): Record<string, string> {
  const registry = new FunctionRegistry(app, options);
  const merged: Record<string, string> = {};
  for (const [stack, template] of Object.entries(app.templates))
    for (const [id, resource] of Object.entries(template.Resources ?? {})) {
      if (resource.Type !== 'AWS::Lambda::Function' || resource.Metadata?.[ENTRY_METADATA] !== STEP_ENTRY) continue;
      const env = registry.env(`${stack}/${id}`);
      if (env.WORKFLOW === def.manifest.name) Object.assign(merged, env);
    }
  delete merged.STEP;
  return merged;
}

/** The single-prompt agent of a session's workflow, over the session's tools. */
export class SinglePromptAgent {
  private readonly started = new Set<string>();

  private constructor(
    private readonly def: WorkflowDefinition,
    private readonly env: Record<string, string>,
    private readonly model: ModelProvider,
    private readonly outboxFile: string,
    private readonly dynamo: DynamoDbLocal,
  ) {}

  /** The agent of `def` in the session's app, with the functions' environment the session's runtime gives them. */
  static create(
    app: SynthesizedApp,
    def: WorkflowDefinition,
    session: { model: ModelProvider; outboxFile: string; dynamo: DynamoDbLocal; runtime: FunctionRegistryOptions },
  ): SinglePromptAgent {
    const env = stepFunctionsEnvironment(app, def, session.runtime);
    return new SinglePromptAgent(def, env, session.model, session.outboxFile, session.dynamo);
  }

  /** Run the agent on one execution input and report it like a state machine's execution. Never throws. */
  async run(file: string, input: Record<string, unknown>, name: string): Promise<RunResult> {
    const sent = () =>
      readOutbox(this.outboxFile)
        .filter((mail) => mail.execution === name)
        .map(({ to, subject, body }) => ({ to, subject, body }));
    try {
      const plugin = await loadPlugin(this.def.manifest.name, this.env.STATEMACHINES_DIR);
      const untrusted = isEmailWorkflow(this.def)
        ? await emailUntrusted(input, dynamoEmailStore(this.dynamo.client, this.env.EMAILS_TABLE!))
        : untrustedOfInput(this.def, input);
      const toolbox = createToolbox(Object.values(plugin.tools), { env: this.env });
      const execution = { id: `monolithic:${name}`, name };
      const ran = await runSinglePrompt({ plugin, input, untrusted, toolbox, model: this.model, execution });
      return {
        file,
        executionName: name,
        status: 'SUCCEEDED',
        steps: [
          { name: SINGLE_PROMPT_STEP, next: ran.next, decidedBy: ran.decidedBy, fields: ran.fields, usage: ran.usage },
        ],
        toolCalls: ran.toolCalls.map((call) => ({
          step: SINGLE_PROMPT_STEP,
          tool: call.tool,
          args: call.args,
          result: call.result ?? null,
          ...(call.error !== undefined && { error: call.error }),
        })),
        outbox: sent(),
        usage: ran.usage,
      };
    } catch (e) {
      const error = describeError((e as Error).name, (e as Error).message);
      const step = { name: SINGLE_PROMPT_STEP, next: null, decidedBy: null, fields: {}, error };
      return {
        file,
        executionName: name,
        status: 'FAILED',
        reason: error,
        steps: [step],
        toolCalls: [],
        outbox: sent(),
      };
    }
  }

  /**
   * What the email ingress starts instead of the state machine: the agent on the mail, told to
   * `onStarted` with its result. A name it started before is a duplicate, as for the local runtime.
   */
  starter(onStarted: (name: string, run: Promise<RunResult>) => void): ExecutionStarter {
    return {
      definitive: true,
      start: async (name, input) => {
        if (this.started.has(name)) return 'DUPLICATE';
        this.started.add(name);
        onStarted(name, this.run(name, { ...input }, name));
        return 'STARTED';
      },
    };
  }
}
