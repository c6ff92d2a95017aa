import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Command } from 'commander';
import { InvalidInputError } from '../../core/errors.ts';
import { relPath } from '../../definitions/definition-file.ts';
import { loadWorkflow } from '../../definitions/workflow/loader.ts';
import { MCP_LOCK_FILE, mcpLockText, readMcpLock } from '../../definitions/workflow/mcp.ts';
import { listedTools } from '../../runtime/tools/mcp/pins.ts';
import { withExamples } from '../help.ts';
import { action, printJson } from '../output.ts';

type Change = 'added' | 'changed' | 'unchanged';

/** `stepwise mcp pull`: pin what the servers list now, and say per tool what changed. */
async function pull(workflow: string, opts: { json?: boolean }) {
  const def = loadWorkflow(workflow);
  if (!def.manifest.mcp) throw new InvalidInputError(`${workflow} declares no MCP tools (workflow.yaml: mcp)`);
  const file = join(def.dir, MCP_LOCK_FILE);
  const before = existsSync(file) ? readMcpLock(def.dir) : { servers: {} };
  const now = await listedTools(def);
  const tools: { server: string; tool: string; change: Change }[] = [];
  for (const [server, { tools: listed }] of Object.entries(now.servers))
    for (const [tool, pin] of Object.entries(listed)) {
      const old = before.servers[server]?.tools[tool];
      tools.push({ server, tool, change: !old ? 'added' : isDeepStrictEqual(old, pin) ? 'unchanged' : 'changed' });
    }
  writeFileSync(file, mcpLockText(now));
  if (opts.json) return printJson({ workflow, lockFile: relPath(file), tools });
  for (const t of tools) process.stdout.write(`${t.change.padEnd(9)} ${t.server}.${t.tool}\n`);
  process.stdout.write(`pinned ${tools.length} tool(s) in ${relPath(file)}\n`);
}

export function register(program: Command): void {
  const mcp = program.command('mcp').description("A workflow's tools from MCP servers.");
  const command = mcp
    .command('pull')
    .description(
      `Read the input schema of every MCP tool of a workflow from its server (tools/list) and pin it in ${MCP_LOCK_FILE}, ` +
        'the schema the model is shown; stepwise validate fails when a server lists another.',
    )
    .argument('<workflow>', 'a workflow of statemachines/')
    .option('--json', 'print { workflow, lockFile, tools: [{ server, tool, change }] }');
  withExamples(command, ['stepwise mcp pull support-desk']);
  command.action(action(pull));
}
