import { describe, expect, it } from 'vitest';
import { conflictBackoffMs, memoryLeadStore } from '../../lambdas/lifecycle/store.ts';
import { describeLeadStore } from './store-conformance.ts';

const store = memoryLeadStore();
describeLeadStore('memory', () => store);

describe('conflictBackoffMs', () => {
  it('waits nothing before the first read, then draws from a window that doubles up to a cap', () => {
    expect(conflictBackoffMs(0, () => 0.99)).toBe(0);
    expect([1, 2, 3, 4].map((a) => conflictBackoffMs(a, () => 0.999))).toEqual([49, 99, 199, 399]);
    expect(conflictBackoffMs(20, () => 0.999)).toBe(999);
    expect(conflictBackoffMs(5, () => 0)).toBe(0);
  });
});
