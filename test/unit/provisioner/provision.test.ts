import { describe, expect, it } from 'vitest';
import { run, parseInput, handler } from '../../../functions/provisioner/handler.ts';
import { InsufficientCapacityError, ValidationError } from '../../../shared/api/errors.ts';
import { MetricNames } from '../../../shared/api/metrics.ts';
import { Region, nodePool, pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';
import { node, pod } from '../../fakes/index.ts';
import { nodeClaimItem } from '../../../shared/aws/dynamo-node-claim-store.ts';

const w0 = (launch: unknown) => launch as { instanceTypes: string[]; capacityTypes: string[] };
const inflate = () => Array.from({ length: 5 }, (_, i) => pendingPod(`inflate-${i}`, '1'));

describe('provisioner run', () => {
  it('inflate: 5 × 1 cpu become one launched NodeClaim with Karpenter log lines', async () => {
    // Prepare
    const pods = inflate();
    const { w, log, metrics, deps } = provisionerWorld({ pods });
    // Act
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess
    expect(summary.provisionable).toBe(5);
    expect(summary.created).toHaveLength(1);
    expect(summary.launched).toHaveLength(1);
    const claim = (await w.store.list())[0];
    expect(claim.phase).toBe('Launched');
    expect(claim.pods).toHaveLength(5);
    expect(claim.resources.requests.cpu).toBe('5');
    expect(claim.capacityType).toBe('on-demand');
    expect(claim.instanceId).toBe(summary.launched[0].instanceId);
    expect(claim.providerId).toBe(`aws:///${claim.zone}/${claim.instanceId}`);
    expect(log.withMessage('found provisionable pod(s)')).toHaveLength(1);
    expect(log.withMessage('computed new nodeclaim(s) to fit pod(s)')[0].fields).toMatchObject({ nodeclaims: 1, pods: 5 });
    expect(log.withMessage('created nodeclaim')[0].fields).toMatchObject({ NodePool: { name: 'default' }, NodeClaim: { name: claim.name } });
    expect(log.withMessage('launched nodeclaim')[0].fields).toMatchObject({ 'instance-type': claim.instanceType, 'capacity-type': 'on-demand' });
    expect(metrics.total(MetricNames.nodeClaimsCreated, { nodepool: 'default' })).toBe(1);
    expect(metrics.total(MetricNames.nodeClaimsLaunched)).toBe(1);
    // The launch went to the cheapest type first, at most 60 types.
    const launch = w.cloud.callsOf('create')[0][1] as { instanceTypes: string[]; capacityTypes: string[] };
    expect(launch.instanceTypes.length).toBeLessThanOrEqual(60);
    expect(launch.instanceTypes[0]).toBe(claim.instanceType);
    expect(launch.capacityTypes).toEqual(['on-demand']);
  });

  it('a NodeClaim item stores the launch set (≤ 60 types), not every compatible type: it stays small', async () => {
    // Prepare: a NodePool open to every c/m/r type of the region (hundreds are compatible)
    const pods = [pendingPod('one', '100m')];
    const { w, deps } = provisionerWorld({ pods });
    // Act
    await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess
    const claim = (await w.store.list())[0];
    const types = claim.requirements.find((r) => r.key === 'node.kubernetes.io/instance-type');
    const launch = w.cloud.callsOf('create')[0][1] as { instanceTypes: string[] };
    expect(types?.operator).toBe('In');
    expect(types?.values).toEqual(launch.instanceTypes);
    expect(types?.values?.length).toBeLessThanOrEqual(60);
    expect(Buffer.byteLength(JSON.stringify(nodeClaimItem('karpenter-demo', claim)))).toBeLessThan(4096);
  });

  it('a pod no NodePool can run is not solved again on every pass: it backs off, and a NodePool change resets that', async () => {
    // Prepare: 900 cpu fits no instance type
    const pods = [pendingPod('huge', '900')];
    const { w, deps, log } = provisionerWorld({ pods });
    const first = await run(parseInput(unschedulableEvent(pods, 'e1')), deps);
    expect(first.unschedulable.map((u) => u.pod)).toEqual(['default/huge']);
    // Act: the agent re-sends it 10 s later
    w.clock.advanceSeconds(10);
    const again = await run(parseInput(unschedulableEvent(pods, 'e2')), deps);
    // Assess: not solved (no "could not schedule pod" line), counted as backing off
    expect(again.backingOff).toBe(1);
    expect(again.unschedulable).toEqual([]);
    expect(log.withMessage('could not schedule pod')).toHaveLength(1);
    // 30 s after the failure it is tried again (and fails again)
    w.clock.advanceSeconds(20);
    expect((await run(parseInput(unschedulableEvent(pods, 'e3')), deps)).unschedulable).toHaveLength(1);
    w.clock.advanceSeconds(30);
    expect((await run(parseInput(unschedulableEvent(pods, 'e4')), deps)).backingOff).toBe(1);
    // a NodePool change: solved at once
    const np = nodePool();
    np.spec.limits = { cpu: 2000 } as never;
    w.kube.setNodePools([np]);
    expect((await run(parseInput(unschedulableEvent(pods, 'e5')), deps)).unschedulable).toHaveLength(1);
  });

  it('logs each preference relaxed to place a pod and why: a one-per-node anti-affinity under a NodePool cpu limit', async () => {
    // Prepare: two replicas preferring separate nodes; the limit leaves room for one node only
    const pods = [pendingPod('web-0', '1'), pendingPod('web-1', '1')];
    for (const p of pods) {
      p.metadata.labels = { app: 'web' };
      p.spec.affinity = {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } } },
          ],
        },
      };
    }
    const { w, log, deps } = provisionerWorld({ pods });
    const np = nodePool();
    np.spec.limits = { cpu: '8' } as never;
    w.kube.setNodePools([np]);
    // Act
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess: both on one claim, and the log says which preference was dropped for which pod, and why
    expect(summary.created).toHaveLength(1);
    expect(log.withMessage('relaxing soft constraints for pod since it previously failed to schedule').map((l) => l.fields)).toEqual([
      {
        Pod: { name: 'web-1', namespace: 'default' },
        reason: 'removing: preferred pod anti-affinity (topologyKey kubernetes.io/hostname, app=web)',
        error: 'nodepool default: exceeds limits: nodepool default has no room left under its cpu limit (8000m)',
      },
    ]);
  });

  it('refreshed catalog prices (deps.catalogRefresher) decide the launch: a type made cheapest live is launched', async () => {
    // Prepare: the shipped-data choice and its runner-up
    const pods = inflate();
    const shipped = provisionerWorld({ pods });
    await run(parseInput(unschedulableEvent(pods)), shipped.deps);
    const first = w0(shipped.w.cloud.callsOf('create')[0][1]);
    const runnerUp = first.instanceTypes[1];
    expect(runnerUp).toBeDefined();
    const live = provisionerWorld({ pods });
    const asked: number[] = [];
    const catalogRefresher = {
      get: async (nowMs: number) => {
        asked.push(nowMs);
        return { region: Region, onDemandUsdPerHour: { [runnerUp]: 0.001 } };
      },
    };
    // Act
    const summary = await run(parseInput(unschedulableEvent(pods)), { ...live.deps, catalogRefresher });
    // Assess
    expect(asked).toEqual([live.w.clock.now().getTime()]);
    expect(summary.launched).toHaveLength(1);
    expect(w0(live.w.cloud.callsOf('create')[0][1]).instanceTypes[0]).toBe(runnerUp);
    expect((await live.w.store.list())[0].instanceType).toBe(runnerUp);
    expect(first.instanceTypes[0]).not.toBe(runnerUp);
  });

  it('duplicate event: the second delivery creates and launches nothing', async () => {
    const pods = inflate();
    const { w, deps } = provisionerWorld({ pods });
    const event = parseInput(unschedulableEvent(pods));
    await run(event, deps);
    const second = await run(event, deps);
    expect(second.provisionable).toBe(0);
    expect(second.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(1);
    expect(await w.store.list()).toHaveLength(1);
  });

  it('a later pass for the same pods (another event id) finds them assigned to the in-flight claim and launches nothing', async () => {
    const pods = inflate();
    const { w, deps } = provisionerWorld({ pods });
    const a = await run(parseInput(unschedulableEvent(pods, 'e1')), deps);
    const b = await run(parseInput(unschedulableEvent(pods, 'e2')), deps);
    expect(a.created).toHaveLength(1);
    expect(b.provisionable).toBe(0);
    expect(b.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(1);
    expect(w.cloud.all()).toHaveLength(1);
  });

  it('two writers at one instant: a claim another writer recorded for the same pods after the pass read the claims makes the pass give them up, delete its claim unlaunched, and launch nothing (chaos seed 1136)', async () => {
    // Prepare: a disruption command's replacement names db-0 and web-0 the moment this pass creates its own claim
    const pods = [pendingPod('db-0'), pendingPod('web-0')];
    const { w, deps, log } = provisionerWorld({ pods });
    const create = w.store.create.bind(w.store);
    let raced = false;
    w.store.create = async (claim) => {
      if (!raced) {
        raced = true;
        await create({ ...claim, name: 'default-rreplacement', pods: ['default/db-0', 'default/web-0'] });
      }
      return create(claim);
    };
    // Act
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess: each pod is the reason for one claim, the other writer's; nothing launched here
    expect(summary.created).toHaveLength(1);
    expect(summary.launched).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
    expect((await w.store.list()).map((c) => [c.name, c.pods])).toEqual([['default-rreplacement', ['default/db-0', 'default/web-0']]]);
    expect(log.withMessage('nodeclaim gives up pod(s) another nodeclaim was made for')[0].fields).toMatchObject({ launched: false });
  });

  it("two writers at one instant: a pass whose claim shares only some pods with another writer's gives those up and launches for the rest", async () => {
    const pods = [pendingPod('db-0'), pendingPod('web-0')];
    const { w, deps } = provisionerWorld({ pods });
    const create = w.store.create.bind(w.store);
    let raced = false;
    w.store.create = async (claim) => {
      if (!raced) {
        raced = true;
        await create({ ...claim, name: 'default-rreplacement', pods: ['default/db-0'] });
      }
      return create(claim);
    };
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.launched).toHaveLength(1);
    const own = (await w.store.get(summary.launched[0].nodeClaim))!;
    expect(own.pods).toEqual(['default/web-0']);
    expect(own.phase).toBe('Launched');
  });

  it('an event for another cluster provisions nothing', async () => {
    const pods = inflate();
    const { w, deps, log } = provisionerWorld({ pods });
    const ev = unschedulableEvent(pods);
    const summary = await run(parseInput({ ...ev, detail: { ...ev.detail, cluster: 'someone-else' } }), deps);
    expect(summary.provisionable).toBe(0);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
    expect(log.withMessage('ignoring unschedulable pods event for another cluster')).toHaveLength(1);
  });

  it('claim names are <nodepool>-<5 random chars>, fresh per creation (drawn from deps.random)', async () => {
    const pods = inflate();
    const { deps } = provisionerWorld({ pods });
    let i = 0;
    const seq = [0, 0.99, 0.5, 0.25, 0.75];
    const summary = await run(parseInput(unschedulableEvent(pods)), { ...deps, random: () => seq[i++ % seq.length] });
    expect(summary.created).toEqual(['default-b9rj2']);
  });

  it('a StatefulSet pod re-created with the same name after its node was terminated gets a new claim and a launch', async () => {
    const db = pendingPod('db-0', '2');
    const { w, deps } = provisionerWorld({ pods: [db] });
    const first = await run(parseInput(unschedulableEvent([db], 'e1')), deps);
    expect(first.launched).toHaveLength(1);
    // The spot node was interrupted: the claim finished Terminated (kept for a while), db-0 was re-created, pending again.
    const old = (await w.store.get(first.created[0]))!;
    await w.store.update({ ...old, phase: 'Terminated', nodeName: 'ip-10-0-1-1' });
    const second = await run(parseInput(unschedulableEvent([db], 'e2')), deps);
    expect(second.provisionable).toBe(1);
    expect(second.created).toHaveLength(1);
    expect(second.created[0]).not.toBe(first.created[0]);
    expect(second.launched).toHaveLength(1);
    expect(w.cloud.callsOf('create')).toHaveLength(2);
  });

  it('pods still pending 20 s after their claim initialized (others took the room) get a new claim', async () => {
    // Prepare
    const pods = inflate();
    const { w, deps } = provisionerWorld({ pods });
    const first = await run(parseInput(unschedulableEvent(pods, 'e1')), deps);
    const claim = (await w.store.get(first.created[0]))!;
    const at = w.clock.nowIso();
    await w.store.update({
      ...claim,
      phase: 'Initialized',
      nodeName: 'ip-10-0-1-1',
      conditions: [...claim.conditions, { type: 'Initialized', status: 'True', lastTransitionTime: at }],
    });
    // Its node is up, and other pods took all of its room.
    w.kube.addNode(
      node({
        name: 'ip-10-0-1-1',
        providerID: claim.providerId,
        labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' },
        allocatable: { cpu: '7', memory: '14Gi', pods: '58' },
      }),
    );
    w.kube.addPod(pod({ name: 'other', cpu: '7', nodeName: 'ip-10-0-1-1' }));
    // Act: within the nomination period the pods count as placed; after it they need capacity.
    w.clock.advanceSeconds(10);
    const within = await run(parseInput(unschedulableEvent(pods, 'e2')), deps);
    w.clock.advanceSeconds(15);
    const after = await run(parseInput(unschedulableEvent(pods, 'e3')), deps);
    // Assess
    expect(within.created).toEqual([]);
    expect(after.provisionable).toBe(5);
    expect(after.created).toHaveLength(1);
    expect(w.cloud.callsOf('create')).toHaveLength(2);
  });

  it('a node still coming up takes pods despite its not-ready taint; once initialized, the taint counts', async () => {
    // Prepare: a managed node of the pool, Ready condition not yet, tainted not-ready by kubelet.
    const notReady = [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' as const }];
    const up = (initialized: boolean) => {
      const pods = [pendingPod('web-0', '1')];
      const { w, deps } = provisionerWorld({ pods });
      const labels = { 'karpenter.sh/nodepool': 'default', ...(initialized ? { 'karpenter.sh/initialized': 'true' } : {}) };
      w.kube.addNode(node({ name: 'ip-10-0-1-9', labels, taints: notReady, allocatable: { cpu: '7', memory: '14Gi', pods: '58' } }));
      return { pods, deps };
    };
    // Act
    const coming = up(false);
    const comingResult = await run(parseInput(unschedulableEvent(coming.pods, 'e1')), coming.deps);
    const initialized = up(true);
    const initializedResult = await run(parseInput(unschedulableEvent(initialized.pods, 'e1')), initialized.deps);
    // Assess
    expect(comingResult.created).toEqual([]);
    expect(initializedResult.created).toHaveLength(1);
  });

  it("a node coming up whose kubelet reports an extended resource as 0 counts it at its claim's recorded allocatable", async () => {
    // Prepare: a claim launched and registered as node ip-10-0-1-7; its record says 2 dongles, the kubelet 0 so far.
    const first = [pendingPod('first', '1')];
    const { w, deps } = provisionerWorld({ pods: first });
    const claim = (await w.store.get((await run(parseInput(unschedulableEvent(first, 'e1')), deps)).created[0]))!;
    await w.store.update({ ...claim, phase: 'Registered', nodeName: 'ip-10-0-1-7', allocatable: { ...claim.allocatable, 'example.com/dongle': '2' } });
    w.kube.addNode(
      node({
        name: 'ip-10-0-1-7',
        providerID: claim.providerId,
        labels: { 'karpenter.sh/nodepool': 'default' },
        allocatable: { cpu: '7', memory: '14Gi', pods: '58', 'example.com/dongle': '0' },
      }),
    );
    const second = pendingPod('second', '100m');
    second.spec.containers[0].resources = { requests: { cpu: '100m', 'example.com/dongle': '1' }, limits: { 'example.com/dongle': '1' } };
    w.kube.addPod(second);
    // Act
    const summary = await run(parseInput(unschedulableEvent([second], 'e2')), deps);
    // Assess: it waits for that node (no instance type of the pool has dongles)
    expect(summary.unschedulable).toEqual([]);
    expect(summary.placedOnExisting).toBe(1);
  });

  it('a generated name that is taken is drawn again, not read as "another pass created it"', async () => {
    const pods = inflate();
    const { w, deps } = provisionerWorld({ pods });
    const draws = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0.5];
    let i = 0;
    const random = () => draws[Math.min(i++, draws.length - 1)];
    await w.store.create({ ...(await firstClaimLike(deps)), name: 'default-bbbbb' });
    const summary = await run(parseInput(unschedulableEvent(pods)), { ...deps, random });
    expect(summary.created).toEqual(['default-rrrrr']);
    expect(summary.launched).toHaveLength(1);
  });

  it('ICE on the cheapest pool: marks it unavailable for 3 minutes and launches the next one', async () => {
    const pods = inflate();
    const { w, deps, metrics } = provisionerWorld({ pods });
    // Find the cheapest type by a dry run, then make it fail everywhere.
    const dry = provisionerWorld({ pods });
    const cheapest = (await run(parseInput(unschedulableEvent(pods)), dry.deps)).launched[0].instanceType;
    const zones = ['ap-northeast-2a', 'ap-northeast-2b', 'ap-northeast-2c', 'ap-northeast-2d'];
    // CreateFleet answers with InsufficientInstanceCapacity for every pool of that type.
    const refused = zones.map((zone) => ({ instanceType: cheapest, zone, capacityType: 'on-demand' }));
    w.cloud.failNext(
      'create',
      new InsufficientCapacityError('InsufficientInstanceCapacity', refused, {
        launchFailures: refused.map((o) => ({ zone: o.zone, capacityType: o.capacityType, reason: 'LaunchFailed' })),
      }),
    );
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.launched).toHaveLength(1);
    expect(summary.launched[0].instanceType).not.toBe(cheapest);
    expect(w.cloud.callsOf('create')).toHaveLength(2);
    expect((w.cloud.callsOf('create')[1][1] as { instanceTypes: string[] }).instanceTypes).not.toContain(cheapest);
    const nowS = Math.floor(w.clock.nowMs() / 1000);
    expect(w.unavailable.isUnavailable(cheapest, 'ap-northeast-2a', 'on-demand', nowS)).toBe(true);
    expect(w.unavailable.isUnavailable(cheapest, 'ap-northeast-2a', 'on-demand', nowS + 180)).toBe(false);
    // One per CreateFleet error entry, with Karpenter's reason for a capacity code (LaunchFailed).
    expect(metrics.total(MetricNames.launchFailures, { reason: 'LaunchFailed', zone: 'ap-northeast-2a', capacity_type: 'on-demand' })).toBe(1);
    expect(metrics.total(MetricNames.launchFailures)).toBe(4);
  });

  it("spot → on-demand fallback when no spot capacity is left in the claim's launch set", async () => {
    const pods = inflate();
    // EC2 has no spot capacity at all: the spot fleet over the claim's ≤ 60 types fails for capacity.
    const { w, deps, log } = provisionerWorld({ pods, capacityTypes: ['spot', 'on-demand'], cloud: { isOffered: (o) => o.capacityType !== 'spot' } });
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    const launches = w.cloud.callsOf('create').map((c) => (c[1] as { capacityTypes: string[] }).capacityTypes[0]);
    expect(launches[0]).toBe('spot');
    expect(launches.at(-1)).toBe('on-demand');
    expect(summary.launched[0].capacityType).toBe('on-demand');
    expect(log.withMessage('falling back to on-demand, no spot capacity left')).toHaveLength(1);
  });

  it('unfulfillable claim is deleted with a log line and a metric', async () => {
    const pods = inflate();
    const { w, deps, log, metrics } = provisionerWorld({ pods, cloud: { isOffered: () => false } });
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.unfulfillable).toHaveLength(1);
    expect(await w.store.list()).toEqual([]);
    expect(log.withMessage('failed launching nodeclaim')).toHaveLength(1);
    expect(metrics.total(MetricNames.nodeClaimsTerminated, { reason: 'unfulfillable' })).toBe(1);
  });

  it('packing: the NodePool annotation wins over NODEFLEET_PACKING, which wins over the default (cost)', async () => {
    // Prepare: 100 cpu-heavy and 100 memory-heavy pods; cost packing splits them over two
    // claims, Karpenter's packing puts them on one large type (a measured difference of this input).
    const memoryPod = (name: string) => {
      const p = pendingPod(name, '250m');
      p.spec.containers[0].resources = { requests: { cpu: '250m', memory: '6Gi' } };
      return p;
    };
    const pods = [...Array.from({ length: 100 }, (_, i) => pendingPod(`cpu-${i}`, '1')), ...Array.from({ length: 100 }, (_, i) => memoryPod(`mem-${i}`))];
    const claimsWith = async (packingEnv: 'cost' | 'karpenter' | undefined, annotation?: string) => {
      const { w, deps } = provisionerWorld({ pods });
      if (annotation) {
        const np = nodePool();
        np.metadata.annotations = { 'nodefleet.io/packing': annotation };
        w.kube.setNodePools([np]);
      }
      const summary = await run(parseInput(unschedulableEvent(pods)), { ...deps, env: { ...deps.env, packing: packingEnv } });
      return summary.created.length;
    };
    // Act / Assess
    expect(await claimsWith(undefined)).toBe(2);
    expect(await claimsWith('karpenter')).toBe(1);
    expect(await claimsWith('cost', 'karpenter')).toBe(1);
    expect(await claimsWith('karpenter', 'cost')).toBe(2);
  });

  it('pods already bound or deleted since the event are not provisioned', async () => {
    const pods = inflate();
    const { w, deps } = provisionerWorld({ pods: pods.slice(0, 2) });
    w.kube.addPod({ ...pods[2], spec: { ...pods[2].spec, nodeName: 'n1' } });
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    expect(summary.provisionable).toBe(2);
    expect((await w.store.list())[0].resources.requests.cpu).toBe('2');
  });
});

describe('provisioner: pods with persistent volumes (shared/scheduling/volumes.ts)', () => {
  const withClaim = (name: string, claimName: string) => {
    const p = pendingPod(name);
    p.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName } }];
    return p;
  };
  const storageLists = (w: ReturnType<typeof provisionerWorld>['w']) =>
    w.kube
      .callsOf('listObjects')
      .map((c) => c.join(' '))
      .filter((c) => !c.includes('DaemonSet'))
      .sort();

  it('launches nothing for a pod whose claim does not exist, names the claim, and still provisions for the valid pod beside it', async () => {
    // Prepare
    const pods = [withClaim('bad', 'missing'), pendingPod('good')];
    const { w, deps, log } = provisionerWorld({ pods });
    // Act
    const summary = await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess
    expect(summary.created).toHaveLength(1);
    expect((await w.store.list())[0].pods).toEqual(['default/good']);
    expect(summary.unschedulable.map((u) => u.pod)).toEqual(['default/bad']);
    expect(log.withMessage('ignoring pod')[0].fields).toMatchObject({ error: 'persistentvolumeclaim "default/missing" does not exist' });
    expect(storageLists(w)).toEqual(['storage.k8s.io/v1 StorageClass', 'v1 PersistentVolume', 'v1 PersistentVolumeClaim']);
  });

  it('a pod refused for its volumes is not backed off: once its claim exists it gets a node on the next pass', async () => {
    const pods = [withClaim('db', 'data-db')];
    const { w, deps } = provisionerWorld({ pods });
    expect((await run(parseInput(unschedulableEvent(pods, 'e1')), deps)).created).toHaveLength(0);
    w.kube.addObject(
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-db', namespace: 'default' }, spec: { storageClassName: 'gp3' } },
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'gp3' },
        volumeBindingMode: 'WaitForFirstConsumer',
        allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.ebs.csi.aws.com/zone', values: [`${Region}b`] }] }],
      },
    );
    w.clock.advanceSeconds(10);
    const again = await run(parseInput(unschedulableEvent(pods, 'e2')), deps);
    expect(again.backingOff).toBe(0);
    expect(again.created).toHaveLength(1);
    expect((await w.store.list())[0].zone).toBe(`${Region}b`);
  });

  it('reads no storage objects when no pending pod mounts a claim', async () => {
    const pods = [pendingPod('plain')];
    const { w, deps } = provisionerWorld({ pods });
    await run(parseInput(unschedulableEvent(pods)), deps);
    expect(storageLists(w)).toEqual([]);
  });
});

describe('provisioner handler', () => {
  it('a malformed event is rejected with the reason (DLQ path), without touching anything', async () => {
    const bad = { id: 'x', 'detail-type': 'Unschedulable Pods', source: 'nodefleet.agent', time: 'now', detail: { schemaVersion: '99', pods: 'nope' } };
    expect(() => parseInput(bad)).toThrow(ValidationError);
    await expect(handler(bad, {} as never)).rejects.toThrow(/malformed provisioner input/);
  });
});

/** A stored claim to occupy a name (its pods are none of the test's). */
async function firstClaimLike(deps: { clock: { now(): Date } }) {
  const { nodeClaim } = await import('../../fakes/index.ts');
  return nodeClaim({ name: 'x', phase: 'Terminated', createdAt: deps.clock.now().toISOString() });
}

describe('provisioner: the pods of a node being deleted', () => {
  /** A node tainted karpenter.sh/disrupted (termination's Cordon) running `web` (2 cpu) and a DaemonSet pod. */
  function deletingWorld() {
    const world = provisionerWorld();
    const labels = { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/initialized': 'true' };
    world.w.kube.addNode(
      node({
        name: 'ip-10-0-9-9',
        labels,
        taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }],
        unschedulable: true,
        allocatable: { cpu: '3', memory: '6Gi', pods: '20' },
      }),
    );
    world.w.kube.addPod(pod({ name: 'web', cpu: '2', memory: '1Gi', nodeName: 'ip-10-0-9-9', phase: 'Running', labels: { app: 'web' } }));
    world.w.kube.addPod(pod({ name: 'ds', cpu: '100m', memory: '64Mi', nodeName: 'ip-10-0-9-9', phase: 'Running', owner: 'DaemonSet' }));
    return world;
  }

  it('are provisioned for before they are evicted, once: the claim launched for them holds them on the next pass', async () => {
    // Prepare
    const { w, deps } = deletingWorld();
    // Act: two full passes (an event without pods) over the same deleting node
    const first = await run(parseInput(unschedulableEvent([], 'e1')), deps);
    w.clock.advanceSeconds(5);
    const second = await run(parseInput(unschedulableEvent([], 'e2')), deps);
    // Assess: one launch, for the Deployment pod only (not the DaemonSet's); on the second pass it sits on that claim
    expect(first.launched).toHaveLength(1);
    expect((await w.store.list())[0].pods).toEqual(['default/web']);
    expect(second.provisionable).toBe(0);
    expect(second.created).toEqual([]);
    expect(w.cloud.callsOf('create')).toHaveLength(1);
  });

  it('keep the room of the claim launched for them: a pending pod solved first gets its own claim (chaos seed 1055)', async () => {
    // Prepare: the claim a first pass launched for `web` (room for one 2-cpu pod), and a new
    // pending pod as large (more memory: the solver takes it first)
    const { w, deps } = deletingWorld();
    await run(parseInput(unschedulableEvent([], 'e1')), deps);
    w.clock.advanceSeconds(5);
    const api = pod({ name: 'api', cpu: '2', memory: '2Gi', phase: 'Pending' });
    api.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] };
    w.kube.addPod(api);
    // Act
    const second = await run(parseInput(unschedulableEvent([api], 'e2')), deps);
    // Assess: `api` gets the second claim; `web` is named by its first claim only
    expect(second.created).toHaveLength(1);
    const claims = await w.store.list();
    expect(claims.find((c) => c.name === second.created[0])?.pods).toEqual(['default/api']);
    expect(claims.filter((c) => c.pods.includes('default/web'))).toHaveLength(1);
  });

  it('a pod a fully blocking PodDisruptionBudget keeps on its node gets no capacity', async () => {
    // Prepare
    const { w, deps } = deletingWorld();
    w.kube.addPdb({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 0 },
    });
    // Act
    const summary = await run(parseInput(unschedulableEvent([], 'e1')), deps);
    // Assess
    expect(summary.provisionable).toBe(0);
    expect(w.cloud.callsOf('create')).toHaveLength(0);
  });
});
