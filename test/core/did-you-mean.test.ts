import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, nearestName } from '../../src/core/did-you-mean.ts';

describe('did you mean', () => {
  it('finds the step, tool or workflow a typo meant', () => {
    expect(nearestName('02-check-waranty', ['01-extract-serial', '02-check-warranty', 'DONE'])).toBe(
      '02-check-warranty',
    );
    expect(nearestName('chek_warranty', ['check_warranty', 'create_ticket'])).toBe('check_warranty');
    expect(didYouMean('warranty-emial', ['warranty-email', 'investigation'])).toBe(': did you mean "warranty-email"?');
  });

  it('suggests nothing when no name is close', () => {
    expect(nearestName('refund', ['check_warranty', 'create_ticket'])).toBeUndefined();
    expect(didYouMean('nope', ['demo-workflow'])).toBe('');
  });

  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });
});
