import type { StepDefinition } from 'stepwise';
import {
  causeMessage,
  DefinitionError,
  DONE,
  defineCodeStep,
  EmailInputSchema,
  isReplay,
  NO_USAGE,
  type StepContext,
  StepFailedError,
  sentReply,
} from 'stepwise';
import { renderTemplate } from 'stepwise/templates';

/** Reply templates in the step file body: a `## Reply: <name>` heading followed by a ```text block. */
const TEMPLATE = /^## Reply: ([a-z-]+)[ \t]*\r?\n+```text\r?\n([\s\S]*?)\r?\n```/gm;

function templates(step: StepDefinition): Record<'out-of-scope' | 'handoff', string> {
  const found = Object.fromEntries([...step.instruction.matchAll(TEMPLATE)].map((m) => [m[1]!, m[2]!]));
  for (const name of ['out-of-scope', 'handoff'])
    if (!found[name])
      throw new DefinitionError(step.file, '(body)', `missing "## Reply: ${name}" followed by a \`\`\`text block`);
  return found as Record<'out-of-scope' | 'handoff', string>;
}

const clip = (text: string) => (text.length > 240 ? `${text.slice(0, 239)}…` : text);

/**
 * Why the fallback runs, when it runs because something went wrong: a caught error, a route the
 * previous step may not take (the Choice default), or a previous step that reported `handoff`.
 * Undefined when the email is simply not a warranty claim.
 */
function handoffReason({ input, step }: StepContext): string | undefined {
  const { previous, error } = input;
  if (error) return `${previous.next} failed with ${error.Error}: ${clip(causeMessage(error.Cause))}`;
  if (previous.next !== step.name) return `route "${previous.next}" from ${previous.step} is not a declared edge`;
  if (previous.fields.handoff === true) return `${previous.step} could not finish: ${previous.reason}`;
  return undefined;
}

/**
 * Step 04 and the workflow fallback, deterministic: send one fixed, polite reply whose text is in
 * the step file. Not a warranty claim → the redirect reply; reached because something went wrong →
 * the hand-off reply (a person will follow up), with the cause in `reason`. If even this reply
 * cannot be sent the step fails (`StepFailedError` → FallbackFailed), so nobody is left unanswered
 * silently. If the email was already answered (a reply step sent its reply, then failed), nothing
 * is sent: `send_email` replies once per execution.
 */
export default defineCodeStep(async (ctx) => {
  const handoff = handoffReason(ctx);
  const template = templates(ctx.step)[handoff ? 'handoff' : 'out-of-scope'];
  // Everything in `email` was written by the sender: a display name like "Visit evil.example" is omitted, not mailed out under our name.
  const { value: body, problems } = renderTemplate(
    template,
    { email: EmailInputSchema.parse(ctx.input.input).email },
    { untrusted: ['email'] },
  );
  if (problems.length) throw new DefinitionError(ctx.step.file, '(body)', problems.join('; '));
  const call = await ctx.toolbox.execute('send_email', { body }, ctx.tool);
  if (call.error !== undefined)
    throw new StepFailedError(`${ctx.step.name}: the reply could not be sent: ${call.error}`);
  // One reply per email: when an earlier step (or attempt) already replied, send_email sent nothing.
  const reason = isReplay(call)
    ? `Reply already sent for this email, not sent again (${handoff ? `hand-off: ${handoff}` : ctx.input.previous.reason})`
    : handoff
      ? `Hand-off reply sent: ${handoff}`
      : `Out-of-scope reply sent (${ctx.input.previous.reason})`;
  return {
    next: DONE,
    reason,
    decidedBy: 'code',
    fields: handoff ? { handoff: true } : {},
    reply: sentReply([call], ctx.toolbox.spec),
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
