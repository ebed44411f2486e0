/**
 * shared/scheduling/volumes.ts: which pods' volumes allow a launch, and where. The Karpenter
 * suites' cases (test/cases/karpenter/provisioning-volumes.yaml, sched-volumes.yaml) cover the
 * rules they test; these cover what they do not: a generic ephemeral volume whose claim is not
 * created yet, the default storage class, and how alternatives combine.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, StorageObjects } from '../../../shared/api/kube.ts';
import { checkPodVolumes } from '../../../shared/scheduling/volumes.ts';
import { pendingPod } from './builders.ts';

const cls = (name: string, o: { mode?: string; zones?: string[]; isDefault?: boolean; created?: string } = {}): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: {
    name,
    ...(o.created ? { creationTimestamp: o.created } : {}),
    ...(o.isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}),
  },
  provisioner: 'ebs.csi.aws.com',
  volumeBindingMode: o.mode ?? 'WaitForFirstConsumer',
  ...(o.zones ? { allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', values: o.zones }] }] } : {}),
});
const store = (o: Partial<StorageObjects>): StorageObjects => ({ claims: [], volumes: [], classes: [], ...o });
const ephemeralPod = (storageClassName?: string | null) =>
  pendingPod('p', {
    spec: {
      volumes: [
        {
          name: 'scratch',
          ephemeral: { volumeClaimTemplate: { spec: { ...(storageClassName !== undefined ? { storageClassName } : {}), accessModes: ['ReadWriteOnce'] } } },
        },
      ],
    },
  });
const zonesOf = (r: ReturnType<typeof checkPodVolumes>) => ('alternatives' in r ? r.alternatives.map((a) => a.toString()) : r.invalid);

describe('generic ephemeral volume whose claim is not created yet', () => {
  it('uses the storage class its template names', () => {
    const r = checkPodVolumes(
      ephemeralPod('zonal'),
      store({ classes: [cls('zonal', { zones: ['us-east-1b'] }), cls('other', { isDefault: true, zones: ['us-east-1c'] })] }),
    );
    expect(zonesOf(r)).toEqual(['topology.kubernetes.io/zone In [us-east-1b]']);
  });

  it('uses the default storage class when the template names none, the newest default winning', () => {
    const classes = [
      cls('old-default', { isDefault: true, zones: ['us-east-1a'], created: '2026-01-01T00:00:00Z' }),
      cls('new-default', { isDefault: true, zones: ['us-east-1c'], created: '2026-02-01T00:00:00Z' }),
      cls('not-default', { zones: ['us-east-1b'], created: '2026-03-01T00:00:00Z' }),
    ];
    expect(zonesOf(checkPodVolumes(ephemeralPod(), store({ classes })))).toEqual(['topology.kubernetes.io/zone In [us-east-1c]']);
  });

  it('refuses the pod when no storage class applies, naming the claim', () => {
    expect(zonesOf(checkPodVolumes(ephemeralPod(), store({ classes: [cls('plain')] })))).toMatch(
      /persistentvolumeclaim "default\/p-scratch" .*is unbound and names no storage class/,
    );
    expect(zonesOf(checkPodVolumes(ephemeralPod(''), store({ classes: [cls('d', { isDefault: true })] })))).toMatch(
      /"default\/p-scratch" .*names no storage class/,
    );
  });

  it('refuses the pod when the class binds Immediate (the volume must exist before scheduling)', () => {
    expect(zonesOf(checkPodVolumes(ephemeralPod('now'), store({ classes: [cls('now', { mode: 'Immediate' })] })))).toMatch(
      /storageclass "now" binds Immediate/,
    );
  });

  it("takes a class without volumeBindingMode as Immediate, the API server's default", () => {
    const unset = { ...cls('efs'), volumeBindingMode: undefined };
    expect(zonesOf(checkPodVolumes(ephemeralPod('efs'), store({ classes: [unset] })))).toMatch(
      /storageclass "efs" binds Immediate \(volumeBindingMode unset: the API default\)/,
    );
  });

  it('reads the claim once it exists rather than the template', () => {
    const claim: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'p-scratch', namespace: 'default' },
      spec: { storageClassName: 'zonal' },
      status: { phase: 'Lost' },
    };
    expect(zonesOf(checkPodVolumes(ephemeralPod('zonal'), store({ claims: [claim], classes: [cls('zonal')] })))).toMatch(/"default\/p-scratch" is Lost/);
  });
});

describe('a StatefulSet claim plan adds (not created yet)', () => {
  const planned = (spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data-pg-1', namespace: 'default', annotations: { 'nodefleet.io/planned-claim': 'StatefulSet default/pg volumeClaimTemplates data' } },
    spec,
  });
  const pod = pendingPod('pg-1', { spec: { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-pg-1' } }] } });

  it('gets the default storage class when its template names none, as admission gives it', () => {
    expect(zonesOf(checkPodVolumes(pod, store({ claims: [planned({})], classes: [cls('gp3', { isDefault: true, zones: ['us-east-1b'] })] })))).toEqual([
      'topology.kubernetes.io/zone In [us-east-1b]',
    ]);
  });

  it('names the StatefulSet that will create it when it cannot be provisioned', () => {
    expect(zonesOf(checkPodVolumes(pod, store({ claims: [planned({ storageClassName: 'io2' })], classes: [cls('gp3', { isDefault: true })] })))).toBe(
      'storageclass "io2" of unbound persistentvolumeclaim "default/data-pg-1" (not created yet: StatefulSet default/pg volumeClaimTemplates data will create it; class from the template) does not exist',
    );
  });
});

describe('topology alternatives', () => {
  it('leaves a pod without claims unconstrained, whatever the storage objects', () => {
    expect(checkPodVolumes(pendingPod('p'), store({}))).toEqual({ alternatives: [], constraints: [] });
  });

  it('keeps only the combinations of two volumes that can hold together, and all when none can', () => {
    const claim = (name: string, sc: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: 'default' },
      spec: { storageClassName: sc },
    });
    const pod = pendingPod('p', {
      spec: {
        volumes: [
          { name: 'a', persistentVolumeClaim: { claimName: 'a' } },
          { name: 'b', persistentVolumeClaim: { claimName: 'b' } },
        ],
      },
    });
    const two = (name: string, zones: string[]): KubeObject => ({
      ...cls(name),
      allowedTopologies: zones.map((z) => ({ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: [z] }] })),
    });
    const overlapping = store({
      claims: [claim('a', 'ab'), claim('b', 'bc')],
      classes: [two('ab', ['us-east-1a', 'us-east-1b']), two('bc', ['us-east-1b', 'us-east-1c'])],
    });
    expect(zonesOf(checkPodVolumes(pod, overlapping))).toEqual(['topology.kubernetes.io/zone In [us-east-1b]']);
    const disjoint = store({ claims: [claim('a', 'ab'), claim('b', 'c')], classes: [two('ab', ['us-east-1a', 'us-east-1b']), two('c', ['us-east-1c'])] });
    const none = checkPodVolumes(pod, disjoint);
    if (!('alternatives' in none)) throw new Error(none.invalid);
    // Both pairs kept, each allowing no zone: the pod then fails with the conflict as its reason.
    expect(none.alternatives.map((a) => a.get('topology.kubernetes.io/zone')!.isEmpty())).toEqual([true, true]);
  });
});

describe('topology that cannot be read', () => {
  it('refuses the pod with the reason rather than throwing (a hand-written PersistentVolume with an unknown operator)', () => {
    const pv: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv' },
      spec: {
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'Equals', values: ['a'] }] }] } },
      },
    };
    const claim: KubeObject = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c', namespace: 'default', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } },
      spec: { volumeName: 'pv' },
    };
    const pod = pendingPod('p', { spec: { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] } });
    expect(zonesOf(checkPodVolumes(pod, store({ claims: [claim], volumes: [pv] })))).toMatch(
      /"default\/c": its volume's topology cannot be read: unknown operator Equals/,
    );
  });
});
