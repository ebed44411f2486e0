import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { LocalCluster } from '../../../infra/local/kube/index.ts';
import { ClientNodeKubeApi } from '../../../shared/kube/kube-api.ts';
import { planNodeClaimObjects, setCondition } from '../../../shared/api/nodeclaim.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { startCluster } from './builders.ts';

let cluster: LocalCluster;
let url: string;
let api: ClientNodeKubeApi;

beforeEach(async () => {
  ({ cluster, url } = await startCluster());
  api = new ClientNodeKubeApi(async () => ({ kind: 'kubeconfig-string', yaml: cluster.kubeconfig() }));
});
afterEach(async () => {
  await cluster.stop();
});

const t = (s: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + s * 1000).toISOString();
const record = setCondition(
  nodeClaim({ name: 'default-a', phase: 'Launched', instanceId: 'i-1', providerId: 'aws:///z/i-1', instanceType: 'm5.large', zone: 'z', capacityType: 'spot' }),
  'Launched',
  'True',
  t(10),
);
const opts = { cluster: 'test', nodeClassGroup: 'karpenter.k8s.aws' };

describe('NodeClaim objects through the API server (ClientNodeKubeApi)', () => {
  it('creates, updates (spec and status subresource), lists and deletes (finalizer taken off) a mirror', async () => {
    // Act: create
    await api.putNodeClaimObject(planNodeClaimObjects([record], [], opts).put[0]);
    const [created] = await api.listNodeClaimObjects();
    // Assess: in step after the write (nothing more to put)
    expect(created.metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(created.status?.conditions?.map((c) => c.type)).toEqual(['Launched', 'Ready']);
    expect(planNodeClaimObjects([record], [created], opts).put).toEqual([]);
    // Act: the node registers
    const registered = setCondition({ ...record, phase: 'Registered', nodeName: 'n1' }, 'Registered', 'True', t(30));
    const [update] = planNodeClaimObjects([registered], [created], opts).put;
    await api.putNodeClaimObject(update);
    const [updated] = await api.listNodeClaimObjects();
    expect(updated.status?.nodeName).toBe('n1');
    expect(planNodeClaimObjects([registered], [updated], opts).put).toEqual([]);
    // Act: the record is gone
    const [gone] = planNodeClaimObjects([], [updated], opts).remove;
    await api.deleteNodeClaimObject(gone);
    expect(await api.listNodeClaimObjects()).toEqual([]);
  });

  it("kubectl get nodeclaims: the CRD's printer columns", async () => {
    await api.putNodeClaimObject(planNodeClaimObjects([record], [], opts).put[0]);
    const r = await fetch(`${url}/apis/karpenter.sh/v1/nodeclaims`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
    const table = (await r.json()) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    const crd = parse(readFileSync(new URL('../../../infra/k8s/crds/karpenter.sh_nodeclaims.yaml', import.meta.url), 'utf8'));
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', ...crd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name)]);
    expect(table.rows[0].cells.slice(0, 6)).toEqual(['default-a', 'm5.large', 'spot', 'z', '', 'Unknown']);
  });
});
