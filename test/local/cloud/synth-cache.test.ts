/**
 * A synthesized app kept between processes is used only while everything it was made from is unchanged, from source
 * too: there the project's modules are imported as they are, and the files they import are found by the bundler when
 * the entry is written.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importProjectModule } from '../../../src/core/project-modules.ts';
import { readSynthCache, type SynthOutput, writeSynthCache } from '../../../src/local/cloud/synth-cache.ts';

const root = mkdtempSync(join(tmpdir(), 'stepwise-synth-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const output: SynthOutput = {
  templates: { 'Stepwise-Triage-dev': { Resources: { Queue: { Type: 'AWS::SQS::Queue' } } } },
  environments: { 'Stepwise-Triage-dev': { region: 'eu-west-1' } },
};
const write = (path: string, text: string) => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
};

describe('the synth cache', () => {
  write('package.json', '{ "name": "triage-project" }\n');
  write('package-lock.json', '{}\n');
  write('statemachines/triage/workflow.yaml', 'name: triage\n');
  // The config imports a helper: only the bundler, asked when the entry is written, knows the config read it.
  write('stepwise.config.ts', "import { region } from './config/region.ts';\nexport default { region };\n");
  write('config/region.ts', "export const region = 'eu-west-1';\n");

  it('returns the stored app while nothing changed, and nothing once a definition or an imported helper changes', async () => {
    expect(await importProjectModule(join(root, 'stepwise.config'), root)).toMatchObject({
      default: { region: 'eu-west-1' },
    });
    await writeSynthCache(root, 'dev', output);
    expect(readSynthCache(root, 'dev')).toEqual(output);
    expect(readSynthCache(root, 'staging')).toBeUndefined();

    write('config/region.ts', "export const region = 'us-east-1';\n");
    expect(readSynthCache(root, 'dev')).toBeUndefined();
    write('config/region.ts', "export const region = 'eu-west-1';\n");
    expect(readSynthCache(root, 'dev')).toEqual(output);

    write('statemachines/triage/steps/01-read.md', '---\nname: 01-read\n---\n');
    expect(readSynthCache(root, 'dev')).toBeUndefined();
  });

  it('keeps nothing with STEPWISE_SYNTH_CACHE=off', async () => {
    process.env.STEPWISE_SYNTH_CACHE = 'off';
    try {
      await writeSynthCache(root, 'off', output);
      expect(readSynthCache(root, 'off')).toBeUndefined();
    } finally {
      delete process.env.STEPWISE_SYNTH_CACHE;
    }
  });
});
