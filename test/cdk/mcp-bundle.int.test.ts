/**
 * The MCP SDK reaches only the bundles of workflows with MCP tools: the step handler bundled as a
 * workflow without them has no module of the SDK, and with `mcp` it has the client.
 */
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/core/paths.ts';
import { bundleLikeLambda, bundleOutDir } from '../support/bundle.ts';
import { FIXTURE_STATEMACHINES } from '../support/fixture-project.ts';

/** A workflow without MCP tools: the fixture project's consensus-pick. */
const workflowDir = relative(PACKAGE_ROOT, join(FIXTURE_STATEMACHINES, 'consensus-pick'));

const dir = bundleOutDir('mcp');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sdkModules = (inputs: Record<string, unknown>) =>
  Object.keys(inputs).filter((f) => f.includes('@modelcontextprotocol/sdk'));

describe('MCP SDK in step bundles', () => {
  it('leaves the SDK out of a workflow without MCP tools and bundles its client with them', {
    timeout: 120_000,
  }, async () => {
    const entry = 'runtime/step-handler/handler.ts';
    const without = await bundleLikeLambda(entry, join(dir, 'without.mjs'), { workflowDir });
    expect(sdkModules(without.inputs)).toEqual([]);
    const withMcp = await bundleLikeLambda(entry, join(dir, 'with.mjs'), { workflowDir, mcp: true });
    expect(sdkModules(withMcp.inputs)).toContainEqual(expect.stringContaining('client/streamableHttp.js'));
  });
});
