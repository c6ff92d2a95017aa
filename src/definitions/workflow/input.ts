import { join } from 'node:path';
import * as z from 'zod';
import { DefinitionError } from '../../core/errors.ts';
import { relPath } from '../definition-file.ts';
import { issueText } from '../issue-text.ts';
import { eventOutputs } from './constructs/event.ts';
import { InboundEmailSchema } from './inbound-email.ts';
import type { WorkflowDefinition } from './schema.ts';

/** What an email workflow's executions start with: the verified ingress record (the body is stored, not carried). */
export const EmailInputSchema = z.looseObject({ email: InboundEmailSchema });

const ANY_OBJECT = z.record(z.string(), z.unknown());
const schemas = new WeakMap<WorkflowDefinition, z.ZodType<Record<string, unknown>>>();

export const isEmailWorkflow = (def: WorkflowDefinition) => def.manifest.triggers.some((t) => t.type === 'email');

/**
 * The execution input's schema: the email trigger's for an email workflow, the manifest's JSON
 * Schema (`input.schema`) converted to zod otherwise, else any JSON object.
 * @throws DefinitionError when the JSON Schema cannot be converted.
 */
export function inputSchema(
  def: WorkflowDefinition,
  manifestFile = relPath(join(def.dir, 'workflow.yaml')),
): z.ZodType<Record<string, unknown>> {
  const known = schemas.get(def);
  if (known) return known;
  let schema: z.ZodType<Record<string, unknown>> = ANY_OBJECT;
  if (isEmailWorkflow(def)) schema = EmailInputSchema;
  else if (def.manifest.input) {
    try {
      // The JSON Schema decides (additionalProperties included); the pipe only insists on an object.
      schema = (
        z.fromJSONSchema(def.manifest.input.schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<unknown>
      ).pipe(ANY_OBJECT);
    } catch (e) {
      throw new DefinitionError(
        manifestFile,
        'input.schema',
        `not a usable JSON Schema: ${(e as Error).message.split('\n')[0]}`,
      );
    }
  }
  schemas.set(def, schema);
  return schema;
}

/** Top-level input fields written by outsiders: the email for an email workflow, the manifest's `input.untrusted` otherwise. */
export function untrustedFields(def: WorkflowDefinition): readonly string[] {
  return isEmailWorkflow(def) ? ['email'] : (def.manifest.input?.untrusted ?? []);
}

/**
 * State fields written by outsiders: what event steps received (a customer's reply, a webhook's detail). LLM steps see
 * them beside the untrusted input, never among the trusted `data`.
 */
export const untrustedData = (def: WorkflowDefinition): string[] => [...new Set(def.steps.flatMap(eventOutputs))];

/** The named fields `record` has. */
export const pickFields = (record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(fields.filter((f) => Object.hasOwn(record, f)).map((f) => [f, record[f]]));

/** The input key Step Functions adds to a child execution started with `associateWithParent`: the parent's execution ARN. */
export const STARTED_BY = 'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID';

/** Check an execution input against the workflow's schema; the message names the first bad field. */
export function checkInput(
  def: WorkflowDefinition,
  value: unknown,
): { input?: Record<string, unknown>; problem?: string } {
  // A workflow step's child gets its parent's execution id besides its own input (`associateWithParent`).
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  const { [STARTED_BY]: _, ...own } = isObject ? (value as Record<string, unknown>) : {};
  const parsed = inputSchema(def).safeParse(isObject ? own : value);
  if (parsed.success) return { input: parsed.data };
  const { message, within } = issueText(parsed.error.issues[0]!);
  return { problem: within === '(root)' && message.startsWith('missing field') ? message : `${within}: ${message}` };
}
