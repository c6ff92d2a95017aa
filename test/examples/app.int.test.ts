/** The examples' CDK app (this repository's project): one stack per example, each holding its state machine. */
import { describe, expect, it } from 'vitest';
import { synthProject } from '../../src/local/cloud/synth.ts';

describe('the example app', () => {
  it('synthesizes a stack per example workflow and lifecycle', async () => {
    const dev = await synthProject('dev');
    const stackOf = Object.fromEntries(
      dev.stateMachines.filter((m) => m.workflowName).map((m) => [m.workflowName, m.stack]),
    );
    expect(stackOf).toEqual({
      investigation: 'Stepwise-Investigation-dev',
      'lead-lifecycle': 'Stepwise-LeadLifecycle-dev',
      'order-support': 'Stepwise-OrderSupport-dev',
      'order-ticket': 'Stepwise-OrderTicket-dev',
      'tool-loop': 'Stepwise-ToolLoop-dev',
      'turn-pipeline': 'Stepwise-TurnPipeline-dev',
      'warranty-email': 'Stepwise-WarrantyEmail-dev',
    });
    expect(Object.keys(dev.templates).sort()).toEqual(Object.values(stackOf).sort());
  });
});
