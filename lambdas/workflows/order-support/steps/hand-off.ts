import {
  causeMessage,
  DefinitionError,
  DONE,
  defineCodeStep,
  EmailInputSchema,
  isReplay,
  NO_USAGE,
  StepFailedError,
  sentReply,
} from 'stepwise';
import { renderTemplate } from 'stepwise/templates';

/** A reply template of the step file: a `## Reply: <name>` heading followed by a ```text block. */
function template(instruction: string, file: string, name: 'out-of-scope' | 'handoff'): string {
  const found = new RegExp(`^## Reply: ${name}[ \\t]*\\r?\\n+\`\`\`text\\r?\\n([\\s\\S]*?)\\r?\\n\`\`\``, 'm').exec(
    instruction,
  );
  if (!found) throw new DefinitionError(file, '(body)', `missing "## Reply: ${name}" followed by a \`\`\`text block`);
  return found[1]!;
}

/**
 * Step 99 and the workflow fallback, deterministic: one fixed reply from the step file. Step 01
 * routed here (not an order) → the out-of-scope reply; anything else (a caught error: a failed
 * branch, too many failed attachments, no answer in time; a reply without an order number) → the
 * hand-off reply, with the cause in `reason`. A reply that cannot be sent fails the step, so the
 * execution fails loudly instead of leaving the customer unanswered.
 */
export default defineCodeStep(async ({ step, input, toolbox, tool }) => {
  const { previous, error } = input;
  const handoff = error
    ? `${previous.next} failed with ${error.Error}: ${causeMessage(error.Cause)}`
    : previous.step !== '01-read-request'
      ? `${previous.step}: ${previous.reason}`
      : undefined;
  // The sender wrote the display name: rendered as untrusted text, never as a link or an address.
  const { value: body, problems } = renderTemplate(
    template(step.instruction, step.file, handoff ? 'handoff' : 'out-of-scope'),
    { email: EmailInputSchema.parse(input.input).email },
    { untrusted: ['email'] },
  );
  if (problems.length) throw new DefinitionError(step.file, '(body)', problems.join('; '));
  const call = await toolbox.execute('send_email', { body }, tool);
  if (call.error !== undefined) throw new StepFailedError(`${step.name}: the reply could not be sent: ${call.error}`);
  const why = handoff ? `hand-off: ${handoff}` : `not an order request (${previous.reason})`;
  return {
    next: DONE,
    reason: isReplay(call) ? `Reply already sent for this email, not sent again (${why})` : `Reply sent, ${why}`,
    decidedBy: 'code',
    fields: handoff ? { handoff: true } : {},
    reply: sentReply([call], toolbox.spec),
    toolCalls: [call],
    usage: NO_USAGE,
  };
});
