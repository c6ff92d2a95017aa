/**
 * OpenTelemetry on AWS is an environment setting: with `openTelemetry`, every function has the ADOT
 * layer and its wrapper's environment; without it, neither. A workflow without MCP tools bundles
 * with the MCP SDK defined out.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { bundleSettings, StepwiseFunction } from '../../src/cdk/constructs/stepwise-function.ts';
import type { EnvConfig } from '../../src/project/config.ts';
import { fixtureEnv } from '../support/fixture-project.ts';

const LAYER = 'arn:aws:lambda:us-east-1:615299751070:layer:AWSOpenTelemetryDistroJs:8';

function functionsOf(config: EnvConfig) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  new StepwiseFunction(stack, 'Fn', { entry: 'runtime/step-handler/handler.ts', config, serviceName: 'steps' });
  return Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as any[];
}

describe('OpenTelemetry through the ADOT layer', () => {
  it('adds the layer and the wrapper environment to a function when the environment turns it on', () => {
    const config = {
      ...fixtureEnv('dev'),
      openTelemetry: { layerArn: LAYER, endpoint: 'https://otel.example.com:4318' },
    };
    const [fn] = functionsOf(config);
    expect(fn.Properties.Layers).toEqual([LAYER]);
    expect(fn.Properties.Environment.Variables).toMatchObject({
      AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-instrument',
      OTEL_SERVICE_NAME: 'steps',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com:4318',
    });
  });

  it('adds neither when it is off (the default)', () => {
    const [fn] = functionsOf(fixtureEnv('dev'));
    expect(fn.Properties.Layers).toBeUndefined();
    expect(Object.keys(fn.Properties.Environment.Variables).filter((k) => /OTEL|EXEC_WRAPPER/.test(k))).toEqual([]);
  });

  it('defines the MCP SDK out of bundles of workflows without MCP tools', () => {
    expect(bundleSettings({}).define['process.env.STEPWISE_MCP']).toBe('"off"');
    expect(bundleSettings({ mcp: true }).define['process.env.STEPWISE_MCP']).toBe('"on"');
  });
});
