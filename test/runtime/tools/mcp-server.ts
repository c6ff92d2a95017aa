/**
 * A real MCP server on 127.0.0.1, written with the official SDK, for the MCP tool tests: a read tool
 * (`search_orders`), a side-effecting tool (`open_ticket`, which counts its calls) and a tool that
 * never answers (`slow_lookup`). `changeSchema()` makes `open_ticket` require one more argument, as
 * a server upgrade would. Stateless Streamable HTTP: a fresh server per request, as a deployed one is.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError } from '@aws-lambda-powertools/idempotency';
import { BasePersistenceLayer, type IdempotencyRecord } from '@aws-lambda-powertools/idempotency/persistence';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

export interface TestMcpServer {
  url: string;
  /** Every `open_ticket` call the server ran, with its arguments. */
  tickets: Record<string, unknown>[];
  /** Every `tools/call` the server received, by tool. */
  calls: string[];
  /** From now on `open_ticket` also requires `priority`. */
  changeSchema(): void;
  close(): Promise<void>;
}

export async function startTestMcpServer(): Promise<TestMcpServer> {
  const tickets: Record<string, unknown>[] = [];
  const calls: string[] = [];
  let changed = false;
  const build = () => {
    const server = new McpServer({ name: 'orders', version: '1.0.0' });
    server.registerTool(
      'search_orders',
      {
        description: "Find a customer's orders.",
        inputSchema: { customerId: z.string(), query: z.string().describe('Words to look for') },
      },
      async ({ customerId, query }) => {
        calls.push('search_orders');
        const orders = [{ id: 'O-1', customerId, item: `${query} (blue)` }];
        return { content: [{ type: 'text', text: JSON.stringify(orders) }], structuredContent: { orders } };
      },
    );
    server.registerTool(
      'open_ticket',
      {
        description: 'Open a support ticket.',
        inputSchema: {
          customerId: z.string(),
          summary: z.string(),
          ...(changed && { priority: z.enum(['low', 'high']) }),
        },
      },
      async (args) => {
        calls.push('open_ticket');
        tickets.push(args);
        return { content: [{ type: 'text', text: `ticket T-${tickets.length}` }] };
      },
    );
    server.registerTool('slow_lookup', { description: 'Never answers.', inputSchema: { id: z.string() } }, () => {
      calls.push('slow_lookup');
      return new Promise(() => {});
    });
    return server;
  };
  const http: Server = createServer(async (req, res) => {
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    tickets,
    calls,
    changeSchema: () => {
      changed = true;
    },
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** Idempotency records in memory, with the protocol of the DynamoDB layer: a second put of a live key fails. */
export class MemoryIdempotencyStore extends BasePersistenceLayer {
  readonly records = new Map<string, IdempotencyRecord>();
  protected async _getRecord(key: string): Promise<IdempotencyRecord> {
    const record = this.records.get(key);
    if (!record) throw new IdempotencyItemNotFoundError(key);
    return record;
  }
  protected async _putRecord(record: IdempotencyRecord): Promise<void> {
    const existing = this.records.get(record.idempotencyKey);
    if (existing && !existing.isExpired())
      throw new IdempotencyItemAlreadyExistsError(`${record.idempotencyKey} exists`, existing);
    this.records.set(record.idempotencyKey, record);
  }
  protected async _updateRecord(record: IdempotencyRecord): Promise<void> {
    this.records.set(record.idempotencyKey, record);
  }
  protected async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    this.records.delete(record.idempotencyKey);
  }
}
