/**
 * The pins of a workflow's MCP tools against their servers: `stepwise mcp pull` writes what the
 * servers list now into `mcp.lock.json`, and `stepwise validate` fails, in one line, on a tool whose
 * listed input schema is no longer the pinned one.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Env } from '../../../core/env.ts';
import { DefinitionError } from '../../../core/errors.ts';
import { relPath } from '../../../definitions/definition-file.ts';
import { MCP_LOCK_FILE, type McpLock, type PinnedTool, serverToolName } from '../../../definitions/workflow/mcp.ts';
import type { WorkflowDefinition } from '../../../definitions/workflow/schema.ts';
import { awsClients } from '../toolbox.ts';
import { readCredential } from './credentials.ts';
import { loadMcpConnection, mcpEndpoint } from './tools.ts';

const LIST_TIMEOUT_SECONDS = 30;

/** What each server lists now of the tools the manifest takes from it, by server and tool name on the server. */
export async function listedTools(def: WorkflowDefinition, env: Env = process.env): Promise<McpLock> {
  const mcp = def.manifest.mcp;
  const lock: McpLock = { servers: {} };
  if (!mcp) return lock;
  const { connectMcp } = await loadMcpConnection();
  const aws = awsClients(env);
  for (const [name, server] of Object.entries(mcp.servers)) {
    const wanted = Object.entries(mcp.tools)
      .filter(([, t]) => t.server === name)
      .map(([tool, t]) => serverToolName(tool, t));
    if (wanted.length === 0) continue;
    const token = server.token && (await readCredential(server.token, env, aws));
    const connection = await connectMcp(mcpEndpoint(server, def.dir, env), {
      token,
      // Listing is no step: a server tuned to fail calls fast still gets the time to list.
      timeoutMs: Math.max(server.timeoutSeconds, LIST_TIMEOUT_SECONDS) * 1000,
    }).catch((e: Error) => {
      throw new DefinitionError(
        relPath(`${def.dir}/workflow.yaml`),
        `mcp.servers.${name}`,
        `cannot list its tools: ${e.message}`,
      );
    });
    try {
      const listed = await connection.listTools();
      const tools: Record<string, PinnedTool> = {};
      for (const tool of wanted) {
        if (!listed[tool])
          throw new DefinitionError(
            relPath(`${def.dir}/workflow.yaml`),
            `mcp.servers.${name}`,
            `the server lists no tool "${tool}" (it lists: ${Object.keys(listed).join(', ') || 'none'})`,
          );
        tools[tool] = listed[tool];
      }
      lock.servers[name] = { tools };
    } finally {
      await connection.close();
    }
  }
  return lock;
}

/**
 * Every pinned tool's input schema equals the one its server lists now.
 * @throws DefinitionError naming the lock file and the tool whose schema changed.
 */
export function checkPins(def: WorkflowDefinition, pinned: McpLock, listed: McpLock): void {
  const lockFile = relPath(`${def.dir}/${MCP_LOCK_FILE}`);
  for (const [server, { tools }] of Object.entries(listed.servers))
    for (const [tool, now] of Object.entries(tools)) {
      const pin = pinned.servers[server]?.tools[tool];
      const field = `servers.${server}.tools.${tool}`;
      const pull = `stepwise mcp pull ${def.manifest.name}`;
      if (!pin) throw new DefinitionError(lockFile, field, `not pinned (${pull} pins it)`);
      if (!isDeepStrictEqual(pin.inputSchema, now.inputSchema))
        throw new DefinitionError(
          lockFile,
          field,
          `the server's input schema changed since it was pinned (review it, then ${pull})`,
        );
    }
}
