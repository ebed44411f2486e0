import { describe, expect, it } from 'vitest';
import { parseEqualitySelector, selectPods } from './conditions.ts';
import type { Pod } from '../../shared/api/kube.ts';

const pod = (name: string, labels: Record<string, string>): Pod => ({
  metadata: { name, namespace: 'default', labels },
  spec: { containers: [{ name: 'c' }] },
});

describe('conditions', () => {
  it('parses an equality selector', () => {
    expect(parseEqualitySelector('app=web, tier = front')).toEqual({ app: 'web', tier: 'front' });
  });

  it('selects pods whose labels match every term', () => {
    const pods = [pod('a', { app: 'web', tier: 'front' }), pod('b', { app: 'web' }), pod('c', { app: 'db' })];
    expect(selectPods(pods, 'app=web').map((p) => p.metadata.name)).toEqual(['a', 'b']);
    expect(selectPods(pods, 'app=web,tier=front').map((p) => p.metadata.name)).toEqual(['a']);
  });
});
