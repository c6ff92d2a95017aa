/**
 * Every function the project deploys (`StepwiseFunction`) is traced by X-Ray and publishes its metrics in the
 * environment's Stepwise namespace.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ENTRY_METADATA } from '../../src/cdk/metadata.ts';
import { allStacks, synthApp } from './template.ts';

const { stacks } = synthApp('dev');

describe.each(Object.entries(allStacks(stacks)))('%s stack', (_, stack) => {
  const functions = Object.entries(Template.fromStack(stack).findResources('AWS::Lambda::Function')).filter(
    ([, fn]) => fn.Metadata?.[ENTRY_METADATA],
  );

  it('has Stepwise functions', () => {
    expect(functions.length).toBeGreaterThan(0);
  });

  it.each(functions.map(([id, fn]) => [id, fn] as const))(
    '%s: X-Ray active tracing, POWERTOOLS_METRICS_NAMESPACE=Stepwise/dev',
    (_id, fn) => {
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe('Stepwise/dev');
    },
  );
});
