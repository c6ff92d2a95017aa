/** The turn pipeline's stack: the similarity tool's embedding model reaches exactly the steps that use it. */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { actionsOf, functionOfStep, statementsOfFunction } from '../../support/app.ts';
import { synthApp } from '../support/app.ts';

const { stacks } = synthApp('dev');
const template = Template.fromStack(stacks.workflows['turn-pipeline']!);
const envOf = (step: string) =>
  template.findResources('AWS::Lambda::Function')[functionOfStep(template, step)]!.Properties.Environment.Variables;
const invokes = (step: string) =>
  statementsOfFunction(template, functionOfStep(template, step)).filter((s) =>
    actionsOf(s).includes('bedrock:InvokeModel'),
  );

describe('turn-pipeline stack: embeddings', () => {
  it('gives 04-retrieve and 09-enforce Titan Text Embeddings V2 (environment and InvokeModel on that model), and no other code step', () => {
    for (const step of ['04-retrieve', '09-enforce']) {
      expect(envOf(step)).toMatchObject({
        EMBEDDINGS_PROVIDER: 'bedrock',
        EMBEDDINGS_MODEL_ID: 'amazon.titan-embed-text-v2:0',
      });
      expect(JSON.stringify(invokes(step))).toContain('foundation-model/amazon.titan-embed-text-v2:0');
    }
    for (const step of ['01-load-session', '10-persist']) {
      expect(envOf(step)).not.toHaveProperty('EMBEDDINGS_PROVIDER');
      expect(invokes(step)).toEqual([]);
    }
  });

  it('grants the judge step each model of its panel', () => {
    const judge = JSON.stringify(invokes('08-judge'));
    expect(judge).toContain('inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0');
    expect(judge).toContain('inference-profile/us.amazon.nova-lite-v1:0');
  });
});
