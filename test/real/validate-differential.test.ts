/** A short validation differential (test/real/validate-differential.ts); CI runs 2,000 with `npm run validate-differential`. */
import { describe, expect, it } from 'vitest';
import { differential } from './validate-differential.ts';

describe('validate against the real API server with Karpenter CRDs', () => {
  it('agrees on 400 random manifests, but for the documented differences', async () => {
    const s = await differential(7, 400, () => {});
    expect(s.serverAccepted).toBeGreaterThan(40);
    expect(s.count - s.serverAccepted).toBeGreaterThan(40);
    expect(s.undocumented.map((v) => ({ manifest: v.manifest, server: v.server.message, nodefleet: v.nodefleet.problems }))).toEqual([]);
  });
});
