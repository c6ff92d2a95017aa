import { describe, expect, it } from 'vitest';
import type { ExecutionRecord } from '../../../src/local/records/history.ts';
import { stepStats } from '../../../src/local/records/step-stats.ts';

const record = (name: string, status: ExecutionRecord['status']): ExecutionRecord => ({
  executionArn: `arn:aws:states:local:000000000000:execution:Machine:${name}`,
  name,
  stateMachine: 'arn:aws:states:local:000000000000:stateMachine:Machine',
  status,
  startDate: new Date('2026-01-01T10:00:00Z'),
  input: {},
  events: [],
});

describe('the workflow figures by status', () => {
  it('count an execution waiting at a checkpoint as PAUSED, not RUNNING', () => {
    const records = [record('a', 'SUCCEEDED'), record('b', 'RUNNING'), record('c', 'RUNNING')];
    expect(stepStats(records, new Set(['b'])).byStatus).toEqual({ SUCCEEDED: 1, PAUSED: 1, RUNNING: 1 });
  });

  it('leave the statuses as recorded when nothing is paused', () => {
    expect(stepStats([record('a', 'RUNNING')]).byStatus).toEqual({ RUNNING: 1 });
  });
});
