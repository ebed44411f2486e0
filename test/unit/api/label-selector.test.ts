import { describe, expect, it } from 'vitest';
import { matchesSelector } from '../../../shared/api/label-selector.ts';

describe('matchesSelector (the one label-selector matcher)', () => {
  const labels = { app: 'web', tier: 'front' };
  it('empty matches everything, absent nothing', () => {
    expect(matchesSelector({}, labels)).toBe(true);
    expect(matchesSelector(undefined, labels)).toBe(false);
  });
  it('matchLabels and the four operators', () => {
    expect(matchesSelector({ matchLabels: { app: 'web' } }, labels)).toBe(true);
    expect(matchesSelector({ matchLabels: { app: 'db' } }, labels)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] }, labels)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }, labels)).toBe(false);
    expect(matchesSelector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, labels)).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, labels)).toBe(false);
  });
  it('an unknown operator (an invalid selector in Kubernetes) matches nothing — for PDBs and workloads too, which used to ignore it', () => {
    expect(matchesSelector({ matchExpressions: [{ key: 'app', operator: 'Equals' as 'In', values: ['web'] }] }, labels)).toBe(false);
  });
});
