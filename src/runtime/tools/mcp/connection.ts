/**
 * A connection to one MCP server, over the official SDK: Streamable HTTP (deployed functions, and
 * local runs) or stdio (local runs). This is the only module that imports the SDK; `./tools.ts`
 * loads it on the first call of an MCP tool, and a bundle of a workflow without MCP tools leaves
 * it out (see `bundleSettings`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { STEPWISE_VERSION } from '../../../core/paths.ts';
import type { PinnedTool } from '../../../definitions/workflow/mcp.ts';

/** How to reach a server: an HTTP endpoint or a command speaking MCP on its stdio. */
export type McpEndpoint = { url: string } | { command: string; args: readonly string[]; cwd: string };

export interface McpConnectOptions {
  /** Sent as `Authorization: Bearer <token>` (HTTP only). */
  token?: string;
  /** Bound of connecting and of every request. */
  timeoutMs: number;
}

/** What a step needs of a server: its tools as listed, and a call. */
export interface McpConnection {
  listTools(): Promise<Record<string, PinnedTool>>;
  /** The tool's result; a result the server marks `isError` throws McpToolError. */
  callTool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The server ran the tool and reports a failure (`isError`): permanent, recorded on the call. */
export class McpToolError extends Error {
  override name = 'McpToolError';
}

/** Whether an error of the SDK or the network is worth a retry: a timeout, a closed connection, a 5xx or 429. */
export function isTransientMcpError(e: unknown): boolean {
  if (e instanceof McpError) return e.code === ErrorCode.RequestTimeout || e.code === ErrorCode.ConnectionClosed;
  if (e instanceof StreamableHTTPError) return e.code === undefined || e.code === 429 || e.code >= 500;
  // fetch fails with a TypeError whose cause is the socket error (ECONNREFUSED, ECONNRESET).
  return e instanceof TypeError && (e as Error & { cause?: unknown }).cause !== undefined;
}

type Content = { type: string; text?: string };

/** A tool result as a record: the structured content when the server gives one, else its text. */
function resultRecord(result: { content?: unknown; structuredContent?: unknown; isError?: unknown }) {
  const content = Array.isArray(result.content) ? (result.content as Content[]) : [];
  const text = content
    .map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`))
    .join('\n')
    .trim();
  if (result.isError) throw new McpToolError(text || 'the server reports a failure');
  if (result.structuredContent && typeof result.structuredContent === 'object')
    return result.structuredContent as Record<string, unknown>;
  return { content: text };
}

/** Connect to `endpoint` (the `initialize` handshake), within the timeout. */
export async function connectMcp(endpoint: McpEndpoint, options: McpConnectOptions): Promise<McpConnection> {
  const client = new Client({ name: 'stepwise', version: STEPWISE_VERSION });
  const transport =
    'url' in endpoint
      ? new StreamableHTTPClientTransport(new URL(endpoint.url), {
          requestInit: options.token ? { headers: { Authorization: `Bearer ${options.token}` } } : undefined,
        })
      : new StdioClientTransport({
          command: endpoint.command,
          args: [...endpoint.args],
          cwd: endpoint.cwd,
          stderr: 'ignore',
        });
  const timeout = { timeout: options.timeoutMs, maxTotalTimeout: options.timeoutMs };
  try {
    await client.connect(transport, timeout);
  } catch (e) {
    await client.close().catch(() => {});
    throw e;
  }
  return {
    async listTools() {
      const tools: Record<string, PinnedTool> = {};
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, timeout);
        for (const t of page.tools)
          tools[t.name] = { ...(t.description && { description: t.description }), inputSchema: t.inputSchema };
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    async callTool(name, args) {
      const result = await client.callTool({ name, arguments: args }, undefined, timeout);
      return resultRecord(result as Parameters<typeof resultRecord>[0]);
    },
    close: () => client.close(),
  };
}
