/**
 * Tools from MCP servers: the manifest's `mcp` option (servers, and the tools taken from them) and
 * the lock file that pins each tool's input schema as the server listed it (`mcp.lock.json` in the
 * workflow folder). The model sees the pinned schema, never the live one, so a server that changes a
 * tool changes nothing until `stepwise mcp pull` takes the new schema in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { DefinitionError } from '../../core/errors.ts';
import { readDefinitionYaml, relPath } from '../definition-file.ts';

/** The lock file of a workflow's MCP tools, in its folder. */
export const MCP_LOCK_FILE = 'mcp.lock.json';

const ServerName = z.string().regex(/^[a-z][a-z0-9-]*$/, 'lowercase letters, digits and dashes');
const HttpUrl = z.url({ protocol: /^https?$/ });

/** Where a server's bearer token is read at run time: never the definition files. */
const TokenSchema = z.union([
  z
    .object({
      ssm: z
        .string()
        .regex(/^\/?[A-Za-z0-9_.\-/]+$/)
        .describe('The parameter name.'),
    })
    .strict()
    .describe('An SSM Parameter Store parameter (a SecureString), by name.'),
  z
    .object({
      secret: z
        .string()
        .regex(/^[A-Za-z0-9_.\-/+=@:]+$/)
        .describe('The secret name or ARN.'),
    })
    .strict()
    .describe('A Secrets Manager secret (its string value), by name or ARN.'),
]);

const McpServerSchema = z
  .object({
    url: HttpUrl.describe('The Streamable HTTP endpoint deployed functions call (and local runs, without `local`).'),
    local: z
      .union([
        z.object({ url: HttpUrl.describe('A Streamable HTTP endpoint for local runs.') }).strict(),
        z
          .object({
            command: z.string().min(1).describe('The command that starts the server over stdio.'),
            args: z.array(z.string()).default([]).describe("The command's arguments. Default: none."),
          })
          .strict(),
      ])
      .optional()
      .describe(
        'Local runs only: another Streamable HTTP endpoint (`url`), or a server started over stdio (`command`, `args`, run in the workflow folder).',
      ),
    token: TokenSchema.optional().describe(
      'The bearer token sent to the server: `{ ssm: <parameter> }` or `{ secret: <secret id> }`, read on first use and granted to the steps that call the server. Default: no token.',
    ),
    timeoutSeconds: z
      .number()
      .min(0.05)
      .max(300)
      .default(10)
      .describe(
        'How long a call (and connecting) may take; past it the call fails as ToolUnavailableError, which the step retries.',
      ),
  })
  .strict();

const McpToolSchema = z
  .object({
    server: ServerName.describe('The server, a key of `mcp.servers`.'),
    tool: z.string().min(1).optional().describe("The tool's name on the server. Default: the key."),
    description: z.string().min(1).optional().describe("What the model is told. Default: the server's description."),
    idempotency: z
      .enum(['step', 'execution'])
      .optional()
      .describe(
        'A tool with side effects: run at most once per (execution, step) or per execution, like a native tool.',
      ),
    personal: z
      .array(z.string())
      .default([])
      .describe('Arguments that are personal data: the event log and traces drop them.'),
    replyArg: z
      .string()
      .optional()
      .describe('The argument that is text sent to the outside: the output guard checks it.'),
  })
  .strict();

/** The manifest's `mcp` option. */
export const McpSchema = z
  .object({
    servers: z.record(ServerName, McpServerSchema).describe('The MCP servers, by name.'),
    tools: z
      .record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'snake_case tool name'), McpToolSchema)
      .describe("The tools steps may put on their allow-list, by the name the model calls; each is one server's tool."),
  })
  .strict();

export type McpOption = z.infer<typeof McpSchema>;
export type McpServer = z.infer<typeof McpServerSchema>;
export type McpTool = z.infer<typeof McpToolSchema>;

/** One tool as the server listed it when it was pinned. */
const PinnedToolSchema = z.object({
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type PinnedTool = z.infer<typeof PinnedToolSchema>;

/** `mcp.lock.json`: per server, per tool name on the server. */
export const McpLockSchema = z.object({
  servers: z.record(z.string(), z.object({ tools: z.record(z.string(), PinnedToolSchema) })),
});
export type McpLock = z.infer<typeof McpLockSchema>;

/** The tool's name on its server. */
export const serverToolName = (name: string, tool: McpTool): string => tool.tool ?? name;

/** The workflow's lock file, or an empty one when there is none yet. */
export function readMcpLock(dir: string): McpLock {
  const file = join(dir, MCP_LOCK_FILE);
  if (!existsSync(file)) return { servers: {} };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new DefinitionError(relPath(file), '(file)', `not JSON: ${(e as Error).message}`);
  }
  const parsed = McpLockSchema.safeParse(json);
  if (!parsed.success)
    throw new DefinitionError(relPath(file), parsed.error.issues[0]!.path.join('.') || '(file)', 'not a lock file');
  return parsed.data;
}

/** The lock file's text: sorted keys, so a pull that changes nothing changes no byte. */
export function mcpLockText(lock: McpLock): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
          )
        : value;
  return `${JSON.stringify(sorted(lock), null, 2)}\n`;
}

/**
 * The manifest's MCP tools name declared servers and do not shadow a native tool.
 * @throws DefinitionError on the first that does not.
 */
export function validateMcp(manifestFile: string, nativeTools: readonly string[], mcp: McpOption | undefined): void {
  for (const [name, tool] of Object.entries(mcp?.tools ?? {})) {
    if (!Object.hasOwn(mcp!.servers, tool.server))
      throw new DefinitionError(
        manifestFile,
        `mcp.tools.${name}.server`,
        `no server "${tool.server}" in mcp.servers (${Object.keys(mcp!.servers).join(', ') || 'none'})`,
      );
    if (nativeTools.includes(name))
      throw new DefinitionError(manifestFile, `mcp.tools.${name}`, `"${name}" is also a tool module in tools`);
  }
}

/** Every tool a step may put on its allow-list: the tool modules and the MCP tools. */
export const workflowToolNames = (manifest: { tools: readonly string[]; mcp?: McpOption }): string[] => [
  ...manifest.tools,
  ...Object.keys(manifest.mcp?.tools ?? {}),
];

/** Whether the workflow folder's manifest takes tools from MCP servers (its functions then bundle the MCP SDK). */
export function declaresMcpTools(workflowDir: string): boolean {
  // A lifecycle's folder ships with its functions too, and has no manifest.
  if (!existsSync(join(workflowDir, 'workflow.yaml'))) return false;
  const manifest = readDefinitionYaml(join(workflowDir, 'workflow.yaml')) as { mcp?: { tools?: object } } | null;
  return Object.keys(manifest?.mcp?.tools ?? {}).length > 0;
}
