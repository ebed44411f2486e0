/**
 * The real input of issue 3: a live cluster (Karpenter 1.2, ap-northeast-2) where Karpenter
 * created one NodeClaim with requests cpu 5150m, pods 8, and EC2 launched c5a.2xlarge.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planInput, toPlanOutput } from '../../../functions/cli/commands/plan.ts';
import { solve } from '../../../shared/scheduling/index.ts';

const fixture = (f: string) => ({ file: f, text: readFileSync(join(import.meta.dirname, 'fixtures', f), 'utf8') });

describe('real input: inflate × 5 in ap-northeast-2', () => {
  it('plans one NodeClaim of 5150m cpu and 8 pods whose cheapest type is c5a.2xlarge', () => {
    // Prepare
    const input = planInput({ nodePools: fixture('real-nodepool.yaml'), pods: fixture('real-pods.yaml'), region: 'ap-northeast-2' });
    // Act
    const out = toPlanOutput(solve(input));
    // Assess
    expect(out.nodeClaims).toHaveLength(1);
    const claim = out.nodeClaims[0];
    expect(claim.requests).toEqual({ cpu: '5150m', pods: 8 });
    expect(claim.instanceTypes[0]).toBe('c5a.2xlarge');
    expect(claim.instanceTypes).toHaveLength(60);
    expect(claim.capacityTypes).toEqual(['on-demand']);
    expect(claim.pods).toEqual(['default/inflate-0', 'default/inflate-1', 'default/inflate-2', 'default/inflate-3', 'default/inflate-4']);
    // Karpenter's launch set holds the types it listed (c4.2xlarge, c4.4xlarge, c5.2xlarge …).
    expect(claim.instanceTypes).toEqual(expect.arrayContaining(['c4.2xlarge', 'c5.2xlarge']));
    expect(out.unschedulable).toEqual([]);
  });
});
