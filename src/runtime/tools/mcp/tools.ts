/**
 * MCP tools as tool definitions: each tool of the manifest's `mcp.tools` becomes a `ToolDefinition`
 * whose input is the schema pinned in `mcp.lock.json` and whose `run` calls the server. The toolbox
 * then treats it as it treats a tool module: the step's allow-list, bound arguments, the output
 * guard, idempotency per (execution, step), personal arguments kept out of the event log, eval mocks.
 *
 * Connections are made on the first call and kept for the process (a warm Lambda reuses them); a
 * call that fails drops its connection, so the next one (the ASL's retry) connects afresh.
 */
import { join } from 'node:path';
import * as z from 'zod';
import type { Env } from '../../../core/env.ts';
import { DefinitionError, InvalidInputError, ToolUnavailableError } from '../../../core/errors.ts';
import { relPath } from '../../../definitions/definition-file.ts';
import {
  MCP_LOCK_FILE,
  type McpLock,
  type McpServer,
  type McpTool,
  readMcpLock,
  serverToolName,
} from '../../../definitions/workflow/mcp.ts';
import type { WorkflowDefinition } from '../../../definitions/workflow/schema.ts';
import type { AwsClients, ToolDefinition } from '../types.ts';
import { readCredential } from './credentials.ts';

type ConnectionModule = typeof import('./connection.ts');
type Connection = Awaited<ReturnType<ConnectionModule['connectMcp']>>;

// A bundle built for a workflow without MCP tools defines STEPWISE_MCP as "off": esbuild drops the
// import, and with it the SDK (see bundleSettings in src/cdk/constructs/stepwise-function.ts).
export const loadMcpConnection = (): Promise<ConnectionModule> =>
  process.env.STEPWISE_MCP === 'off'
    ? Promise.reject(new InvalidInputError('this function was bundled without MCP tools'))
    : import('./connection.ts');

/** The server as the function reaches it: its `local` endpoint off Lambda, when it declares one. */
export function mcpEndpoint(server: McpServer, workflowDir: string, env: Env) {
  const local = env.AWS_EXECUTION_ENV ? undefined : server.local;
  if (local && 'command' in local) return { command: local.command, args: local.args, cwd: workflowDir };
  return { url: local?.url ?? server.url };
}

const connections = new Map<string, Promise<Connection>>();

/** Close every connection this process made (the local runtime's end; stdio servers are child processes). */
export async function closeMcpConnections(): Promise<void> {
  const open = [...connections.values()];
  connections.clear();
  await Promise.all(open.map(async (c) => (await c.catch(() => undefined))?.close()));
}

/** A connection to `server`, shared by its tools, made (with its token) on first use. */
export function serverConnection(name: string, server: McpServer, workflowDir: string, env: Env, aws: AwsClients) {
  const endpoint = mcpEndpoint(server, workflowDir, env);
  const key = JSON.stringify([name, endpoint, server.token ?? null]);
  const timeoutMs = Math.round(server.timeoutSeconds * 1000);
  const open = async () => {
    const mod = await loadMcpConnection();
    const token = server.token && (await readCredential(server.token, env, aws));
    return mod.connectMcp(endpoint, { token, timeoutMs });
  };
  return {
    /** Run `use` on the connection; a failure drops it, and one worth a retry becomes ToolUnavailableError. */
    async use<T>(what: string, run: (c: Connection) => Promise<T>): Promise<T> {
      let connection = connections.get(key);
      if (!connection) connections.set(key, (connection = open()));
      try {
        return await run(await connection);
      } catch (e) {
        if (connections.get(key) === connection) connections.delete(key);
        void connection.then((c) => c.close()).catch(() => {});
        const mod = await loadMcpConnection();
        if (!(e instanceof ToolUnavailableError) && mod.isTransientMcpError(e))
          throw new ToolUnavailableError(`${what}: MCP server ${name}: ${(e as Error).message}`, { cause: e });
        throw e;
      }
    },
  };
}

type ServerPort = ReturnType<typeof serverConnection>;

/** The input schema of a pinned tool as zod: what the toolbox validates and the model is shown. */
function pinnedInput(lockFile: string, field: string, schema: Record<string, unknown>): z.ZodObject {
  let input: z.ZodType;
  try {
    input = z.fromJSONSchema(schema as never);
  } catch (e) {
    throw new DefinitionError(lockFile, field, `an input schema zod cannot read: ${(e as Error).message}`);
  }
  if (!(input instanceof z.ZodObject))
    throw new DefinitionError(lockFile, field, 'the input schema is not an object schema');
  return input;
}

/** One MCP tool as a tool definition, from its declaration and its pin. */
function mcpTool(
  def: WorkflowDefinition,
  lock: McpLock,
  name: string,
  tool: McpTool,
): ToolDefinition<z.ZodObject, ServerPort> {
  const lockFile = relPath(join(def.dir, MCP_LOCK_FILE));
  const manifestFile = relPath(join(def.dir, 'workflow.yaml'));
  const remote = serverToolName(name, tool);
  const pinned = lock.servers[tool.server]?.tools[remote];
  if (!pinned)
    throw new DefinitionError(
      lockFile,
      `servers.${tool.server}.tools.${remote}`,
      `no pinned schema for ${name} (stepwise mcp pull ${def.manifest.name} pins it)`,
    );
  const input = pinnedInput(lockFile, `servers.${tool.server}.tools.${remote}.inputSchema`, pinned.inputSchema);
  for (const [field, arg] of [...tool.personal.map((a, i) => [`personal.${i}`, a]), ['replyArg', tool.replyArg]])
    if (arg !== undefined && !Object.hasOwn(input.shape, arg!))
      throw new DefinitionError(manifestFile, `mcp.tools.${name}.${field}`, `"${arg}" is not an argument of ${name}`);
  const server = def.manifest.mcp!.servers[tool.server]!;
  return {
    name,
    description: tool.description ?? pinned.description ?? `${remote} of the MCP server ${tool.server}`,
    input,
    ...(tool.idempotency && { idempotency: tool.idempotency }),
    personal: tool.personal,
    ...(tool.replyArg && { replyArg: tool.replyArg }),
    connect: (env, aws) => serverConnection(tool.server, server, def.dir, env, aws),
    run: (args, _ctx, port) => port.use(name, (c) => c.callTool(remote, args)),
  };
}

/**
 * The manifest's MCP tools as tool definitions, by name.
 * @throws DefinitionError when a tool has no pin, or its pin or declaration does not fit.
 */
export function mcpTools(
  def: WorkflowDefinition,
  lock: McpLock = readMcpLock(def.dir),
): Record<string, ToolDefinition> {
  return Object.fromEntries(
    Object.entries(def.manifest.mcp?.tools ?? {}).map(([name, tool]) => [
      name,
      mcpTool(def, lock, name, tool) as unknown as ToolDefinition,
    ]),
  );
}
