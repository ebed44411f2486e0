import { describe, expect, it } from 'vitest';
import { Requirement, Requirements } from '../../../shared/api/requirements.ts';
import { parseResource, formatResource } from '../../../shared/api/quantity.ts';

describe('Requirement', () => {
  it('intersects In with NotIn', () => {
    const r = Requirement.from({ key: 'k', operator: 'In', values: ['a', 'b'] }).intersect(Requirement.from({ key: 'k', operator: 'NotIn', values: ['a'] }));
    expect([...r.values]).toEqual(['b']);
    expect(r.complement).toBe(false);
  });
  it('applies Gt/Lte bounds to In values', () => {
    const r = Requirement.from({ key: 'gen', operator: 'Gt', values: ['2'] }).intersect(
      Requirement.from({ key: 'gen', operator: 'In', values: ['1', '3', '5'] }),
    );
    expect([...r.values].sort()).toEqual(['3', '5']);
    expect(Requirement.from({ key: 'cpu', operator: 'Lte', values: ['8'] }).has('8')).toBe(true);
    expect(Requirement.from({ key: 'cpu', operator: 'Lt', values: ['8'] }).has('8')).toBe(false);
  });
  it('treats an absent label as satisfying NotIn and DoesNotExist only', () => {
    expect(Requirement.from({ key: 'k', operator: 'NotIn', values: ['a'] }).matches(undefined)).toBe(true);
    expect(Requirement.from({ key: 'k', operator: 'DoesNotExist' }).matches(undefined)).toBe(true);
    expect(Requirement.from({ key: 'k', operator: 'Exists' }).matches(undefined)).toBe(false);
  });
  it('reports the incompatible key', () => {
    const pool = Requirements.fromSpecs([{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }]);
    const pod = Requirements.fromLabels({ 'kubernetes.io/arch': 'arm64' });
    expect(pool.incompatibility(pod)).toContain('kubernetes.io/arch');
    expect(pool.incompatibility(Requirements.fromLabels({ team: 'a' }))).toContain('"team" does not have known values');
  });
});

describe('quantity', () => {
  it('parses and formats cpu and memory', () => {
    expect(parseResource('cpu', '100m')).toBe(100);
    expect(parseResource('cpu', '2')).toBe(2000);
    expect(parseResource('memory', '15155Mi')).toBe(15155 * 2 ** 20);
    expect(formatResource('cpu', 7910)).toBe('7910m');
    expect(formatResource('memory', 14162 * 2 ** 20)).toBe('14162Mi');
    expect(formatResource('ephemeral-storage', 17 * 2 ** 30)).toBe('17Gi');
  });
});
