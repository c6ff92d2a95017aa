/**
 * Tools from a real MCP server (written with the SDK, on 127.0.0.1) through the same toolbox as
 * tool modules: the step's allow-list, bound arguments, idempotency per (execution, step), the
 * pinned schema, and a timeout for a server that never answers.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { DefinitionError, ToolUnavailableError } from '../../../src/core/errors.ts';
import { loadWorkflow } from '../../../src/definitions/workflow/loader.ts';
import { MCP_LOCK_FILE, mcpLockText, readMcpLock } from '../../../src/definitions/workflow/mcp.ts';
import type { WorkflowDefinition } from '../../../src/definitions/workflow/schema.ts';
import { allowListed, withBoundArgs } from '../../../src/runtime/steps/step-toolbox.ts';
import { checkPins, listedTools } from '../../../src/runtime/tools/mcp/pins.ts';
import { closeMcpConnections, mcpTools } from '../../../src/runtime/tools/mcp/tools.ts';
import { createToolbox } from '../../../src/runtime/tools/toolbox.ts';
import type { CallContext, Toolbox } from '../../../src/runtime/tools/types.ts';
import { failure } from '../../support/failure.ts';
import { useTempDirs } from '../../support/tmp.ts';
import { MemoryIdempotencyStore, startTestMcpServer, type TestMcpServer } from './mcp-server.ts';
import { CUSTOMER, MCP_WORKFLOW, writeMcpWorkflow } from './mcp-workflow.ts';

const tempDir = useTempDirs('stepwise-mcp-');
let server: TestMcpServer;
let def: WorkflowDefinition;
const store = new MemoryIdempotencyStore();

const ctx = (step: string): CallContext => ({
  workflow: MCP_WORKFLOW,
  step,
  execution: { id: `arn:aws:states:us-east-1:000000000000:execution:${MCP_WORKFLOW}:e-1`, name: 'e-1' },
  input: { customerId: CUSTOMER, question: 'Where is my charger?' },
});

/** One Lambda attempt of a step: a fresh toolbox over the same idempotency records, as the step handler builds it. */
function stepToolbox(stepName: string): Toolbox {
  const step = def.steps.find((s) => s.name === stepName)!;
  const toolbox = createToolbox(Object.values(mcpTools(def)), { idempotency: store });
  return withBoundArgs(allowListed(toolbox, step), step, { data: {}, input: ctx(stepName).input });
}

beforeAll(async () => {
  server = await startTestMcpServer();
  const root = tempDir();
  writeMcpWorkflow(root, server.url);
  def = loadWorkflow(MCP_WORKFLOW, join(root, 'statemachines'));
  writeFileSync(join(def.dir, MCP_LOCK_FILE), mcpLockText(await listedTools(def)));
});
afterAll(async () => {
  await closeMcpConnections();
  await server?.close();
});

describe('MCP tools', () => {
  it('pins the schemas the server lists and shows the model the pinned schema without the bound argument', () => {
    expect(Object.keys(readMcpLock(def.dir).servers.orders!.tools).sort()).toEqual(['open_ticket', 'search_orders']);
    const spec = stepToolbox('01-look-up').spec('open_ticket')!;
    expect(Object.keys(spec.input.shape)).toEqual(['summary']);
    expect(spec.description).toBe('Open a support ticket for the customer.');
    expect(z.toJSONSchema(spec.input)).toMatchObject({ required: ['summary'] });
  });

  it('calls the read tool on the allow-list and refuses a tool that is not on it', async () => {
    const toolbox = stepToolbox('01-look-up');
    const read = await toolbox.execute('search_orders', { customerId: CUSTOMER, query: 'charger' }, ctx('01-look-up'));
    expect(read).toMatchObject({ result: { orders: [{ id: 'O-1', customerId: CUSTOMER, item: 'charger (blue)' }] } });
    const refused = await toolbox.execute('slow_lookup', { id: 'O-1' }, ctx('01-look-up'));
    expect(refused.error).toMatch(/^ToolNotAllowedError: tool "slow_lookup" is not allowed in step 01-look-up/);
    expect(server.calls).not.toContain('slow_lookup');
  });

  it('refuses and records a call that sets a bound argument, and fills it from state otherwise', async () => {
    const toolbox = stepToolbox('01-look-up');
    const before = server.tickets.length;
    const refused = await toolbox.execute(
      'open_ticket',
      { customerId: 'C-9999', summary: 'For someone else.' },
      ctx('01-look-up'),
    );
    expect(refused).toMatchObject({ tool: 'open_ticket', args: { customerId: 'C-9999' } });
    expect(refused.error).toMatch(/^ToolInputError: argument "customerId" is bound from input\.customerId/);
    expect(server.tickets).toHaveLength(before);

    const opened = await toolbox.execute('open_ticket', { summary: 'Charger missing.' }, ctx('01-look-up'));
    expect(opened).toMatchObject({ result: { content: 'ticket T-1' } });
    expect(server.tickets.at(-1)).toEqual({ customerId: CUSTOMER, summary: 'Charger missing.' });
  });

  it('calls the side-effecting tool once when the step is retried', async () => {
    const opened = server.tickets.length;
    const retried = await stepToolbox('01-look-up').execute(
      'open_ticket',
      { summary: 'Worded otherwise on the retry.' },
      ctx('01-look-up'),
    );
    expect(retried).toMatchObject({ result: { content: 'ticket T-1', replayed: true } });
    expect(server.tickets).toHaveLength(opened);
  });

  it('ends a call to a server that never answers within its timeout, as a retryable failure', async () => {
    const error = await failure(stepToolbox('02-wait').execute('slow_lookup', { id: 'O-1' }, ctx('02-wait')));
    expect(error).toBeInstanceOf(ToolUnavailableError);
    expect(error.message).toMatch(/^slow_lookup: MCP server orders-slow: .*timed out/i);
  });

  it('fails the pin check in one line once the server changes a schema', async () => {
    checkPins(def, readMcpLock(def.dir), await listedTools(def));
    server.changeSchema();
    const error = await failure((async () => checkPins(def, readMcpLock(def.dir), await listedTools(def)))());
    expect(error).toBeInstanceOf(DefinitionError);
    expect(error.message).toMatch(
      new RegExp(
        `^\\S*statemachines/${MCP_WORKFLOW}/mcp\\.lock\\.json: servers\\.orders\\.tools\\.open_ticket: the server's input schema changed`,
      ),
    );
    expect(error.message).not.toContain('\n');
  });
});
