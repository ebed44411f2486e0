/**
 * The bench's cost bounds (test/bench/scheduling.ts): the shape-aware LP bound is the plain LP
 * bound when the pods' memory:cpu range spans the types', and tighter when it does not.
 */
import { describe, expect, it } from 'vitest';
import { lpBound, shapeLpBound } from '../../bench/scheduling.ts';
import { itype, pendingPods } from './builders.ts';

// 1 GiB per vCPU, cheap per vCPU; 8 GiB per vCPU, cheap per GiB.
const types = [
  itype({ name: 'cpu', cpu: 16, memoryMiB: 16384, price: { 'on-demand': 0.5 } }),
  itype({ name: 'mem', cpu: 4, memoryMiB: 32768, price: { 'on-demand': 0.4 } }),
];

describe('bench bounds', () => {
  it("equal the plain LP when the pods span every type's memory per cpu", () => {
    const pods = [...pendingPods('lean', 40, { cpu: '1', memory: '256Mi' }), ...pendingPods('fat', 10, { cpu: '250m', memory: '8Gi' })];
    expect(shapeLpBound(pods, types)).toBeCloseTo(lpBound(pods, types), 9);
  });

  it('is dearer than the plain LP when no pod is as lean as the cheap-cpu type (it cannot be filled with both)', () => {
    const pods = [...pendingPods('two', 40, { cpu: '1', memory: '2Gi' }), ...pendingPods('eight', 10, { cpu: '1', memory: '8Gi' })];
    const plain = lpBound(pods, types);
    expect(shapeLpBound(pods, types)).toBeGreaterThan(plain * 1.05);
  });
});
