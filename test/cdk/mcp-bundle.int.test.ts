/**
 * The MCP SDK reaches only the bundles of workflows with MCP tools: the step handler bundled as a
 * workflow without them has no module of the SDK, and with `mcp` it has the client.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleLikeLambda, bundleOutDir } from '../support/bundle.ts';

const sdkModules = (inputs: Record<string, unknown>) =>
  Object.keys(inputs).filter((f) => f.includes('@modelcontextprotocol/sdk'));

describe('MCP SDK in step bundles', () => {
  it('leaves the SDK out of a workflow without MCP tools and bundles its client with them', {
    timeout: 120_000,
  }, async () => {
    const dir = bundleOutDir('mcp');
    const entry = 'runtime/step-handler/handler.ts';
    const without = await bundleLikeLambda(entry, join(dir, 'without.mjs'), { workflowDir: 'statemachines/tool-loop' });
    expect(sdkModules(without.inputs)).toEqual([]);
    const withMcp = await bundleLikeLambda(entry, join(dir, 'with.mjs'), {
      workflowDir: 'statemachines/tool-loop',
      mcp: true,
    });
    expect(sdkModules(withMcp.inputs)).toContainEqual(expect.stringContaining('client/streamableHttp.js'));
  });
});
