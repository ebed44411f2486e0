import { describe, expect, it } from 'vitest';
import { fieldValue, matchesLabelSelector, parseFieldSelector, parseLabelSelector } from '../../../infra/local/kube/selectors.ts';
import type { KubeObject } from '../../../shared/api/kube.ts';

describe('label selector strings', () => {
  it.each([
    ['app=web', { app: 'web' }, true],
    ['app==web', { app: 'db' }, false],
    ['app!=web', {}, true],
    ['tier in (a, b),app', { tier: 'b', app: 'x' }, true],
    ['tier notin (a,b)', { tier: 'a' }, false],
    ['!canary', { canary: 'true' }, false],
    ['', { any: 'thing' }, true],
  ])('%s on %j → %s', (sel, labels, want) => {
    expect(parseLabelSelector(sel)(labels)).toBe(want);
  });

  it('rejects garbage with 400', () => {
    expect(() => parseLabelSelector('a b c')).toThrow(/unable to parse requirement/);
  });
});

describe('field selectors', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } } as KubeObject;
  it('compares dotted paths; absent fields read as empty', () => {
    expect(parseFieldSelector('spec.nodeName=n1,status.phase!=Succeeded')(pod)).toBe(true);
    expect(parseFieldSelector('spec.nodeName=')(pod)).toBe(false);
    expect(fieldValue({ spec: {} }, 'spec.nodeName')).toBe('');
  });
});

describe('LabelSelector objects', () => {
  it('matchLabels and matchExpressions; an absent selector matches nothing, an empty one everything', () => {
    expect(matchesLabelSelector({ matchLabels: { app: 'w' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['x'] }] }, { app: 'w' })).toBe(true);
    expect(matchesLabelSelector({ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, { app: 'w' })).toBe(false);
    expect(matchesLabelSelector(undefined, { app: 'w' })).toBe(false);
    expect(matchesLabelSelector({}, { app: 'w' })).toBe(true);
  });
});
