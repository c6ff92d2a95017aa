/**
 * A copy of the fixture project with the MCP test workflow in it, served by a real MCP server, a scripted chat-completions
 * model and an OTLP/HTTP receiver, all on 127.0.0.1: what the MCP-and-tracing tests of the CLI start before each file
 * and stop after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { ChatServer } from '../runtime/models/chat-server.ts';
import { startTestMcpServer, type TestMcpServer } from '../runtime/tools/mcp-server.ts';
import { writeMcpWorkflow } from '../runtime/tools/mcp-workflow.ts';
import { copyFixtureProject } from './fixture-project.ts';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';

export interface McpProject {
  dir: string;
  mcp: TestMcpServer;
  modelUrl: string;
  receiver: OtlpReceiver;
}

/**
 * Start it all in `beforeAll` and stop it in `afterAll`; the returned object is filled in once `beforeAll` has run.
 * @param script The scripted model: a chat-completions request body in, a reply out.
 */
export function useMcpProject(prefix: string, script: ConstructorParameters<typeof ChatServer>[0]): McpProject {
  const project = {} as McpProject;
  const model = new ChatServer(script);
  beforeAll(async () => {
    // The CLI as installed (compiled): its commands start without tsx.
    project.dir = copyFixtureProject(mkdtempSync(join(tmpdir(), prefix)), { built: true });
    [project.mcp, project.modelUrl, project.receiver] = await Promise.all([
      startTestMcpServer(),
      model.start(),
      startOtlpReceiver(),
    ]);
    writeMcpWorkflow(project.dir, project.mcp.url);
  });
  afterAll(async () => {
    await Promise.all([
      project.mcp?.close(),
      model.stop(),
      new Promise((resolve) => project.receiver?.server.close(resolve)),
    ]);
    if (project.dir) rmSync(project.dir, { recursive: true, force: true });
  });
  return project;
}
