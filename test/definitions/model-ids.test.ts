/** Model ids have the provider's form, and an environment that replaces a manifest's model says so. */
import { describe, expect, it } from 'vitest';
import { modelIdProblem } from '../../src/definitions/model-ids.ts';
import { loadWorkflow } from '../../src/definitions/workflow/loader.ts';
import { validateWorkflow } from '../../src/project/validate.ts';
import { FIXTURE_STATEMACHINES, fixtureEnv } from '../support/fixture-project.ts';

describe('Bedrock model ids', () => {
  it.each([
    'anthropic.claude-3-5-haiku-20241022-v1:0',
    'us.anthropic.claude-haiku-4-5-20251001-v1:0',
    'eu.anthropic.claude-sonnet-4-20250514-v1:0',
    'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
    'amazon.nova-lite-v1:0',
    'meta.llama3-1-8b-instruct-v1:0',
    'openai.gpt-oss-20b-1:0',
    'amazon.titan-text-express-v1',
    'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0',
    'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0',
    'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3',
  ])('accepts %s', (id) => expect(modelIdProblem(id)).toBeUndefined());

  it.each([
    'gpt-4o-mini',
    'claude-3-5-haiku',
    'Anthropic.Claude',
    'anthropic.claude-3-5-haiku-20241022-v1:0 ',
    'arn:aws:s3:::bucket/model',
  ])('refuses %j in one line', (id) => {
    expect(modelIdProblem(id)).toMatch(/^"[^\n]*" is not a Bedrock model id or inference profile \(e\.g\. [^\n]+\)$/);
  });
});

describe('validate and the environment config', () => {
  it('warns, naming both ids and files, when the environment replaces the manifest model', async () => {
    const manifest = loadWorkflow('consensus-pick', FIXTURE_STATEMACHINES).manifest.model.id;
    const configured = fixtureEnv('staging').modelId!;
    expect(configured).not.toBe(manifest);
    const { warnings } = await validateWorkflow('consensus-pick', FIXTURE_STATEMACHINES, {
      environment: fixtureEnv('staging'),
    });
    expect(warnings).toContain(
      `stepwise.config.ts: environments.staging.modelId: ${configured} replaces test/fixtures/project/statemachines/consensus-pick/workflow.yaml's model.id ${manifest} in env staging`,
    );
  });
});
