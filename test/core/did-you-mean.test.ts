import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, nearestName } from '../../src/core/did-you-mean.ts';

describe('did you mean', () => {
  it('finds the step, tool or workflow a typo meant', () => {
    expect(nearestName('02-lok-up', ['01-read-request', '02-look-up', 'DONE'])).toBe('02-look-up');
    expect(nearestName('lookup_cse', ['lookup_case', 'open_case'])).toBe('lookup_case');
    expect(didYouMean('case-dsek', ['case-desk', 'checkpoint-review'])).toBe(': did you mean "case-desk"?');
  });

  it('suggests nothing when no name is close', () => {
    expect(nearestName('refund', ['lookup_case', 'open_case'])).toBeUndefined();
    expect(didYouMean('nope', ['demo-workflow'])).toBe('');
  });

  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });
});
