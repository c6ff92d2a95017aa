/**
 * A workflow whose tools come from the test MCP server (./mcp-server.ts): `01-look-up` may call
 * `search_orders` and `open_ticket` (its customer bound from the input), `slow_lookup` is on no
 * step but `02-wait`, which calls it on a server entry with a short timeout.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MCP_WORKFLOW = 'orders-desk';
export const CUSTOMER = 'C-4711';
export const CONTACT = 'maria.lopez@example.org';

const manifest = (url: string) => `name: ${MCP_WORKFLOW}
description: Answer a customer about an order and open a ticket, with tools from an MCP server.
version: 1.0.0
entry: 01-look-up
fallback: 03-hand-off
model:
  id: us.anthropic.claude-haiku-4-5-20251001-v1:0
retry: { maxAttempts: 0 }
input:
  schema:
    type: object
    properties: { customerId: { type: string }, question: { type: string }, slow: { type: boolean } }
    required: [customerId, question]
mcp:
  servers:
    orders: { url: '${url}', timeoutSeconds: 5 }
    orders-slow: { url: '${url}', timeoutSeconds: 0.2 }
  tools:
    search_orders: { server: orders, personal: [customerId] }
    open_ticket: { server: orders, idempotency: step, personal: [customerId], description: Open a support ticket for the customer. }
    slow_lookup: { server: orders-slow }
`;

const step = (name: string, frontmatter: string, body: string) => `---
name: ${name}
description: ${name}
version: 1.0.0
kind: llm
${frontmatter}
---
${body}
`;

const STEPS: Record<string, string> = {
  '01-look-up': step(
    '01-look-up',
    `next: [02-wait, DONE]
tools: [search_orders, open_ticket]
bind:
  open_ticket: { customerId: input.customerId }
outputs:
  contact: { type: string, description: The customer's address., pii: true }`,
    "Look up the customer's orders and open a ticket.",
  ),
  '02-wait': step('02-wait', 'next: [DONE]\ntools: [slow_lookup]', 'Look the order up in the slow system.'),
  '03-hand-off': step('03-hand-off', 'next: [DONE]', 'Hand the request to a person.'),
};

const OFFLINE_RULES = `description: Deterministic stand-in for the MCP test workflow (not an LLM).
steps:
  01-look-up:
    - calls:
        - { tool: search_orders, args: { customerId: '{{input.customerId}}', query: charger } }
        - { tool: open_ticket, args: { summary: Charger missing from the parcel. } }
      when: { absent: [input.slow] }
      route: { next: DONE, reason: Ticket opened., fields: { contact: ${CONTACT} } }
    - route: { next: 02-wait, reason: Needs the slow system., fields: { contact: ${CONTACT} } }
  02-wait:
    - calls: [{ tool: slow_lookup, args: { id: O-1 } }]
      route: { next: DONE, reason: Looked up. }
  03-hand-off:
    - route: { next: DONE, reason: Handed off. }
`;

/** Write the workflow into `<root>/statemachines/orders-desk/`; returns its folder. */
export function writeMcpWorkflow(root: string, url: string): string {
  const dir = join(root, 'statemachines', MCP_WORKFLOW);
  mkdirSync(join(dir, 'steps'), { recursive: true });
  writeFileSync(join(dir, 'workflow.yaml'), manifest(url));
  for (const [name, text] of Object.entries(STEPS)) writeFileSync(join(dir, 'steps', `${name}.md`), text);
  writeFileSync(join(dir, 'offline-model.yaml'), OFFLINE_RULES);
  return dir;
}
