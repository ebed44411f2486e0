/**
 * The forged inputs, by family: what an attacker inside the account can write (issue 23), each
 * kind with variants drawn from the trial's seed (the repository's seeded Rng for choices,
 * fast-check's `sample` with the same seed for structurally odd values). `forge` decides the input
 * from the honest world (names, instance ids) without touching it; `apply` sends it through the
 * real entry point: the view object in the store, an event to the provisioner or registration, an
 * SQS batch to interruption, a StartExecution on the termination or disruption state machine, a
 * table item. Where an input is one nodefleet may rightly obey (a spot warning EC2 bears out, a
 * StartExecution for a real claim) `apply` records that the claim may be drained
 * (`truth.mayDisrupt`) and the deadline it may legitimately set (`truth.legitDeadline`), computed
 * here from the input, not from what nodefleet did.
 */
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ClusterViewBuilder, MaxViewGzipBytes, MaxViewJsonBytes, toViewPod } from '../../shared/api/cluster-view.ts';
import { compactPod } from '../../shared/api/agent-events.ts';
import { AgentSchemaVersion, AgentSource, DetailTypeNodeLifecycle, Table, keys } from '../../shared/api/contract.ts';
import { objectKey, type Node, type Pod, type Taint } from '../../shared/api/kube.ts';
import { NodeClaimSchema, type NodeClaim } from '../../shared/api/nodeclaim.ts';
import { MaxHealthEventInstances, SpotNoticeSeconds } from '../../shared/api/events/index.ts';
import { DynamoNodeClaimStore, nodeClaimItem } from '../../shared/aws/dynamo-node-claim-store.ts';
import { LabelNodePool, TaintDisrupted } from '../../shared/api/labels.ts';
import { node as nodeOf, pod as podOf } from '../fakes/index.ts';
import { Rng } from '../chaos/rng.ts';
import {
  Account,
  Cluster,
  ManagedInstanceId,
  ManagedNodeName,
  Region,
  localDynamo,
  mixSeed,
  unschedulableEvent,
  type AttackWorld,
  type TrueNode,
} from './world.ts';

/** A forged input, ready to send. */
export interface Forged {
  family: FamilyName;
  kind: string;
  /** One line: what was forged (printed with a violation). */
  summary: string;
  apply(w: AttackWorld): Promise<void>;
}

export const FamilyNames = ['views', 'events', 'queue', 'executions', 'records', 'commands'] as const;
export type FamilyName = (typeof FamilyNames)[number];

/** A family: its kinds and how one is forged from a world and the trial's draws. */
export interface Family {
  name: FamilyName;
  kinds: readonly string[];
  /** The NodeClaim store the family needs ('dynamo': malformed items only the real adapter sees). */
  store: 'memory' | 'dynamo';
  forge(w: AttackWorld, d: Draw): Forged;
}

/** The trial's draws: seeded choices and seeded fast-check samples. */
export class Draw {
  readonly rng: Rng;
  private n = 0;
  constructor(readonly seed: number) {
    this.rng = new Rng(mixSeed(seed, 0xf0f0));
  }
  /** One sample of `arb`, seeded from the trial (a different one each call). */
  sample<T>(arb: fc.Arbitrary<T>): T {
    return fc.sample(arb, { seed: mixSeed(this.seed, this.n++), numRuns: 1 })[0];
  }
  pick<T>(xs: readonly T[]): T {
    return this.rng.pick(xs);
  }
  int(min: number, max: number): number {
    return this.rng.int(min, max);
  }
  chance(p: number): boolean {
    return this.rng.chance(p);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const short = (v: unknown, n = 160) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > n ? `${s.slice(0, n)}…` : s;
};

/** Made-up pods bound to `nodeName` (names nobody runs). */
function madeUpPods(d: Draw, nodeName: string, count: number, cpu: string): Pod[] {
  return Array.from({ length: count }, (_, i) => podOf({ name: `ghost-${d.int(100, 999)}-${i}`, nodeName, cpu, memory: '1Gi' }));
}

/** A view object as the agent renders it (shared/api/cluster-view.ts ClusterViewBuilder). */
function renderView(cluster: string, nodes: readonly Node[], pods: readonly Pod[], generatedAt: string): Record<string, any> {
  const b = new ClusterViewBuilder();
  b.syncNodes(nodes.map((n) => [n.metadata.name, n] as [string, Node]));
  b.syncPods(
    pods.flatMap((p) => {
      const v = toViewPod(p);
      return v ? [[objectKey(p), b.intern(v)] as [string, typeof v]] : [];
    }),
  );
  return b.render({ cluster, agent: '2026-01-01T00:00:00Z', sequence: 1_000_000, generatedAt }) as unknown as Record<string, any>;
}

let bomb: Buffer | undefined;
/** A gzip object of a few hundred KB that inflates past MaxViewJsonBytes (made once per process). */
function decompressionBomb(): Buffer {
  bomb ??= gzipSync(Buffer.alloc(MaxViewJsonBytes + 4096, 0x20), { level: 9 });
  return bomb;
}

/** A ghost node: not in the cluster, named `name`, claiming `providerID`, from `created`. */
function ghostNode(name: string, providerID: string, v: TrueNode | undefined, created: string, extra: { taints?: Taint[]; deleting?: boolean } = {}): Node {
  const n = nodeOf({
    name,
    providerID,
    allocatable: { cpu: '96', memory: '768Gi', pods: '250' },
    labels: {
      ...(v
        ? {
            [LabelNodePool]: v.nodePool,
            'karpenter.sh/capacity-type': v.capacityType,
            'node.kubernetes.io/instance-type': v.instanceType,
            'topology.kubernetes.io/zone': v.zone,
          }
        : {}),
      'karpenter.sh/initialized': 'true',
      'karpenter.sh/registered': 'true',
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
    taints: extra.taints ?? [],
  });
  n.metadata.creationTimestamp = created;
  if (extra.deleting) n.metadata.deletionTimestamp = created;
  return n;
}

/** Structurally odd node entries: valid-looking shapes with missing, empty or mistyped parts. */
function oddNodeArb(providerIds: string[]): fc.Arbitrary<unknown> {
  const quantity = fc.oneof(fc.constantFrom('1', '96', '0', '-4', '1e9', 'lots', ''), fc.integer());
  const taint = fc.record(
    {
      key: fc.constantFrom('karpenter.sh/disrupted', 'x', ''),
      effect: fc.constantFrom('NoSchedule', 'NoExecute', 'Bogus'),
      value: fc.option(fc.string(), { nil: undefined }),
    },
    { requiredKeys: ['key', 'effect'] },
  );
  return fc.oneof(
    fc.constant({}),
    fc.constant({ metadata: {} }),
    fc.record(
      {
        metadata: fc.record(
          {
            name: fc.oneof(fc.constant('ghost'), fc.string({ minLength: 1, maxLength: 12 })),
            creationTimestamp: fc.oneof(fc.constant('2000-01-01T00:00:00Z'), fc.string()),
            labels: fc.dictionary(
              fc.constantFrom(LabelNodePool, 'karpenter.sh/initialized', 'kubernetes.io/arch'),
              fc.constantFrom('od', 'spot', 'true', 'amd64', ''),
            ),
          },
          { requiredKeys: ['name'] },
        ),
        spec: fc.oneof(
          fc.constant(null),
          fc.record(
            { providerID: fc.oneof(fc.constantFrom(...providerIds), fc.string()), taints: fc.array(taint, { maxLength: 3 }), unschedulable: fc.boolean() },
            { requiredKeys: [] },
          ),
        ),
        status: fc.oneof(
          fc.constant(null),
          fc.record(
            {
              allocatable: fc.dictionary(fc.constantFrom('cpu', 'memory', 'pods', 'nvidia.com/gpu'), quantity),
              capacity: fc.dictionary(fc.constantFrom('cpu', 'memory'), quantity),
              conditions: fc.array(fc.record({ type: fc.constantFrom('Ready', 'x'), status: fc.constantFrom('True', 'False', 'Maybe') }), { maxLength: 2 }),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: ['metadata'] },
    ),
    fc.anything({ maxDepth: 3 }),
  );
}

// ---------------------------------------------------------------- views

const views: Family = {
  name: 'views',
  store: 'memory',
  kinds: [
    'ghost-victim',
    'expired-timestamps',
    'deleting-made-up-pods',
    'ghost-deleting',
    'odd-entries',
    'odd-pod-rows',
    'too-large',
    'bomb',
    'future',
    'stale',
    'other-cluster',
    'fake-room',
    'victim-shown-empty',
  ],
  forge(w, d) {
    const kind = d.pick(this.kinds);
    const t0 = w.truth.t0;
    const victims = w.truth.nodes;
    const v = d.pick(victims);
    const nodes = w.initial.nodes.map((n) => structuredClone(n));
    const pods = w.initial.pods.filter((p) => p.spec.nodeName).map((p) => structuredClone(p));
    const old = d.pick(['2000-01-01T00:00:00Z', '1999-12-31T23:59:59Z', iso(t0 - 800 * 3600_000)]);
    const at = d.chance(0.3) ? d.pick(['2099-01-01T00:00:00Z', iso(t0 + 3)]) : iso(t0);
    let body: Buffer | undefined;
    let summary = '';
    const json = (view: unknown) => gzipSync(Buffer.from(JSON.stringify(view)));
    switch (kind) {
      case 'ghost-victim': {
        const n = d.int(1, 3);
        for (let i = 0; i < n; i++)
          nodes.push(ghostNode(`ghost-${i}`, d.pick([v.providerId, `aws:///x/${v.instanceId}`, `aws:///${v.zone}/${d.pick(victims).instanceId}`]), v, old));
        body = json(renderView(Cluster, nodes, [...pods, ...madeUpPods(d, 'ghost-0', d.int(0, 4), '1')], at));
        summary = `${n} ghost node(s) created ${old} naming ${v.instanceId} (${v.nodeName}), generatedAt ${at}`;
        break;
      }
      case 'expired-timestamps':
        for (const n of nodes) n.metadata.creationTimestamp = old;
        body = json(renderView(Cluster, nodes, pods, at));
        summary = `every node created ${old}, generatedAt ${at}`;
        break;
      case 'deleting-made-up-pods':
      case 'ghost-deleting': {
        const ghost = kind === 'ghost-deleting';
        const name = ghost ? 'ghost-deleting' : v.nodeName;
        const how = d.pick(['deletionTimestamp', 'disrupted-taint']);
        const target = ghost ? ghostNode(name, `aws:///${v.zone}/i-0ghost${d.int(1000, 9999)}`, v, old) : nodes.find((n) => n.metadata.name === name)!;
        if (how === 'deletionTimestamp') target.metadata.deletionTimestamp = iso(t0);
        else target.spec = { ...target.spec, taints: [...(target.spec?.taints ?? []), { key: TaintDisrupted.key, effect: TaintDisrupted.effect }] };
        if (ghost) nodes.push(target);
        const count = d.int(5, 40);
        const cpu = d.pick(['4', '15', '30']);
        body = json(renderView(Cluster, nodes, [...pods, ...madeUpPods(d, name, count, cpu)], at));
        summary = `${ghost ? 'ghost' : 'live'} node ${name} marked deleting (${how}) with ${count} made-up ${cpu}-cpu pods, generatedAt ${at}`;
        break;
      }
      case 'odd-entries': {
        const view = renderView(Cluster, nodes, pods, at);
        const odd = Array.from({ length: d.int(1, 3) }, () => d.sample(oddNodeArb(victims.map((x) => x.providerId))));
        view.nodes.splice(d.int(0, view.nodes.length), 0, ...odd);
        body = json(view);
        summary = `node entries ${short(odd)}`;
        break;
      }
      case 'odd-pod-rows': {
        const view = renderView(Cluster, nodes, pods, at);
        const what = d.pick(['rows', 'templates', 'header']);
        if (what === 'rows')
          view.pods.push(
            ...Array.from({ length: d.int(1, 3) }, () =>
              d.sample(fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -2, max: 5 }), fc.constant(null)), { maxLength: 8 })),
            ),
          );
        else if (what === 'templates') view.templates.push(d.sample(fc.anything({ maxDepth: 3 })));
        else
          Object.assign(
            view,
            d.sample(
              fc.record(
                { schemaVersion: fc.oneof(fc.constant(2), fc.string()), nodes: fc.anything({ maxDepth: 1 }), generatedAt: fc.oneof(fc.string(), fc.integer()) },
                { requiredKeys: [] },
              ),
            ),
          );
        body = json(view);
        summary = `odd ${what}: ${short(what === 'rows' ? view.pods.slice(-2) : what === 'templates' ? view.templates.at(-1) : { schemaVersion: view.schemaVersion, nodes: view.nodes, generatedAt: view.generatedAt })}`;
        break;
      }
      case 'too-large':
        body = randomBytes(MaxViewGzipBytes + d.int(1, 4096));
        summary = `a ${body.length}-byte object (cap ${MaxViewGzipBytes})`;
        break;
      case 'bomb':
        body = decompressionBomb();
        summary = `a ${body.length}-byte gzip inflating past ${MaxViewJsonBytes} bytes`;
        break;
      case 'future':
      case 'stale': {
        const when = kind === 'future' ? iso(t0 + d.pick([6, 60, 3600, 86_400 * 365 * 70]) * 1000) : iso(t0 - d.pick([61, 3600, 86_400 * 365]) * 1000);
        nodes.push(ghostNode('ghost-0', v.providerId, v, old));
        for (const n of nodes) n.metadata.creationTimestamp = old;
        body = json(renderView(Cluster, nodes, [...pods, ...madeUpPods(d, 'ghost-0', 3, '8')], when));
        summary = `ghost node naming ${v.instanceId}, every node created ${old}, generatedAt ${when}`;
        break;
      }
      case 'other-cluster':
        nodes.push(ghostNode('ghost-0', v.providerId, v, old, { deleting: true }));
        body = json(renderView(d.pick(['other', `${Cluster}-2`, '']), nodes, [...pods, ...madeUpPods(d, 'ghost-0', 10, '15')], at));
        summary = `a view of another cluster with a deleting ghost naming ${v.instanceId}`;
        break;
      case 'fake-room':
        nodes.push(ghostNode('roomy', `aws:///${v.zone}/i-0roomy${d.int(1000, 9999)}`, v, iso(t0 - 3600_000)));
        body = json(renderView(Cluster, nodes, pods, at));
        summary = 'an empty 96-cpu ghost node (room on paper for every pending pod)';
        break;
      case 'victim-shown-empty': {
        const keep = pods.filter((p) => p.spec.nodeName !== v.nodeName);
        body = json(renderView(Cluster, nodes, keep, at));
        summary = `node ${v.nodeName} shown without its pods (${v.pods.join(', ')})`;
        break;
      }
    }
    const payload = body!;
    return { family: 'views', kind, summary, apply: async (x) => x.views.put(payload) };
  },
};

// ---------------------------------------------------------------- events

/** A `Node Lifecycle` event for `node` (Kubernetes shape). */
function nodeEvent(
  id: string,
  at: string,
  node: Record<string, unknown>,
  change: string,
  extra: Record<string, unknown> = {},
  cluster = Cluster,
): Record<string, unknown> {
  return {
    version: '0',
    id,
    'detail-type': DetailTypeNodeLifecycle,
    source: AgentSource,
    account: Account,
    time: at,
    region: Region,
    resources: [],
    detail: { schemaVersion: AgentSchemaVersion, cluster, change, observedAt: at, node, ...extra },
  };
}

const events: Family = {
  name: 'events',
  store: 'memory',
  kinds: [
    'empty',
    'ghost-pods',
    'bound-pods-inflated',
    'pending-inflated',
    'other-cluster',
    'malformed',
    'burst',
    'node-name-mismatch',
    'node-ghost',
    'node-managed',
    'pod-event-2099',
    'impostor-node',
    'node-deleted',
    'node-other-cluster',
  ],
  forge(w, d) {
    const kind = d.pick(this.kinds);
    const t0 = w.truth.t0;
    const now = new Date(t0);
    const v = d.pick(w.truth.nodes);
    const joining = w.truth.joining;
    const other = d.pick(w.truth.nodes.filter((n) => n !== (joining ?? v)));
    const big = d.pick(['16', '64', '96']);
    const id = `forged-${d.int(1, 1e6)}`;
    const livePod = (key: string) => w.initial.pods.find((p) => objectKey(p) === key);
    const inflate = (p: Pod) => ({
      ...compactPod(p),
      spec: { ...compactPod(p).spec, containers: [{ name: 'main', resources: { requests: { cpu: big, memory: '700Gi' } } }] },
    });
    const target = joining ?? v;
    let send: (x: AttackWorld) => Promise<unknown>;
    let summary: string;
    switch (kind) {
      case 'empty': {
        const e = unschedulableEvent([], id, now);
        send = (x) => x.provisioner(e);
        summary = 'an Unschedulable Pods event with no pods (a full pass)';
        break;
      }
      case 'ghost-pods': {
        const pods = Array.from({ length: d.int(1, 30) }, (_, i) =>
          compactPod(podOf({ name: `nobody-${i}`, namespace: d.pick(['default', 'kube-system', 'prod']), cpu: big, memory: '8Gi', phase: 'Pending' })),
        );
        const e = unschedulableEvent(pods as never, id, now);
        send = (x) => x.provisioner(e);
        summary = `${pods.length} pods nobody runs, ${big} cpu each`;
        break;
      }
      case 'bound-pods-inflated': {
        const bound = v.pods.map(livePod).filter((p): p is Pod => !!p);
        const e = unschedulableEvent(bound.map(inflate) as never, id, now);
        send = (x) => x.provisioner(e);
        summary = `the bound pods of ${v.nodeName} (${v.pods.join(', ')}) as pending with ${big} cpu`;
        break;
      }
      case 'pending-inflated': {
        const pending = w.truth.pendingPods.map(livePod).filter((p): p is Pod => !!p);
        const e = unschedulableEvent(pending.map(inflate) as never, id, now);
        send = (x) => x.provisioner(e);
        summary = `the live pending pods (${w.truth.pendingPods.join(', ') || 'none'}) with ${big} cpu / 700Gi`;
        break;
      }
      case 'other-cluster': {
        const e = unschedulableEvent(
          [compactPod(podOf({ name: 'elsewhere', cpu: big, phase: 'Pending' }))] as never,
          id,
          now,
          d.pick(['other', `${Cluster}-prod`]),
        );
        send = (x) => x.provisioner(e);
        summary = `another cluster's event (${(e.detail as { cluster: string }).cluster}) with a ${big}-cpu pod`;
        break;
      }
      case 'malformed': {
        const base = unschedulableEvent([], id, now) as Record<string, any>;
        const e = d.chance(0.5) ? { ...base, detail: d.sample(fc.anything({ maxDepth: 3 })) } : d.sample(fc.anything({ maxDepth: 3 }));
        send = (x) => x.provisioner(e);
        summary = `a malformed event ${short(e)}`;
        break;
      }
      case 'burst': {
        const n = d.int(5, 20);
        const pending = w.truth.pendingPods
          .map(livePod)
          .filter((p): p is Pod => !!p)
          .map(compactPod);
        const es = Array.from({ length: n }, (_, i) => unschedulableEvent(pending as never, `${id}-${i}`, now));
        send = async (x) => {
          for (const e of es) await x.provisioner(e);
        };
        summary = `${n} events naming the live pending pods (${w.truth.pendingPods.join(', ') || 'none'})`;
        break;
      }
      case 'node-name-mismatch': {
        const live = w.initial.nodes.find((n) => n.metadata.name === other.nodeName)!;
        const e = nodeEvent(
          id,
          iso(t0),
          { ...structuredClone(live), spec: { ...live.spec, providerID: target.providerId } },
          d.pick(['added', 'ready', 'updated']),
          { lastPodEventTime: iso(t0) },
        );
        send = (x) => x.registration(e);
        summary = `node ${other.nodeName} with ${target.claim}'s providerID ${target.providerId}`;
        break;
      }
      case 'node-ghost': {
        const e = nodeEvent(
          id,
          iso(t0),
          ghostNode(d.pick(['ghost', `ip-10-9-${d.int(0, 255)}-1.ec2.internal`]), target.providerId, target, iso(t0)) as never,
          d.pick(['added', 'ready']),
        );
        send = (x) => x.registration(e);
        summary = `a node that does not exist, with ${target.claim}'s providerID`;
        break;
      }
      case 'node-managed': {
        const live = w.initial.nodes.find((n) => n.metadata.name === ManagedNodeName)!;
        const e = nodeEvent(
          id,
          iso(t0),
          { ...structuredClone(live), metadata: { ...live.metadata, labels: { ...live.metadata.labels, [LabelNodePool]: v.nodePool } } },
          'ready',
          { lastPodEventTime: '2099-01-01T00:00:00Z' },
        );
        send = (x) => x.registration(e);
        summary = 'the managed node group node, labelled with a NodePool';
        break;
      }
      case 'pod-event-2099': {
        const live = w.initial.nodes.find((n) => n.metadata.name === v.nodeName)!;
        const when = d.pick(['2099-01-01T00:00:00Z', iso(t0 + 86_400_000), '9999-12-31T23:59:59Z']);
        const e = nodeEvent(id, iso(t0), structuredClone(live) as never, 'updated', { lastPodEventTime: when });
        send = (x) => x.registration(e);
        summary = `${v.nodeName}'s pod activity at ${when}`;
        break;
      }
      case 'impostor-node': {
        // Someone with the node role registers their own Node under the joining instance's providerID.
        const name = `ip-10-9-${d.int(0, 255)}-${d.int(1, 254)}.ec2.internal`;
        // The attacker's own instance: a small one (its kubelet reports what it has).
        const impostor = ghostNode(name, target.providerId, target, iso(t0));
        impostor.metadata.labels = { ...impostor.metadata.labels, [LabelNodePool]: target.nodePool };
        impostor.status = {
          ...impostor.status,
          allocatable: { cpu: '1930m', memory: '7220Mi', pods: '29' },
          capacity: { cpu: '2', memory: '7934Mi', pods: '29' },
        };
        const e = nodeEvent(id, iso(t0), structuredClone(impostor) as never, 'ready');
        send = async (x) => {
          x.w.kube.addNode(impostor);
          await x.registration(e);
        };
        summary = `a live Node ${name} claiming ${target.claim}'s providerID ${target.providerId}`;
        break;
      }
      case 'node-deleted': {
        const live = w.initial.nodes.find((n) => n.metadata.name === v.nodeName)!;
        const e = nodeEvent(id, iso(t0), structuredClone(live) as never, 'deleted');
        send = (x) => x.registration(e);
        summary = `${v.nodeName} reported deleted`;
        break;
      }
      default: {
        const live = w.initial.nodes.find((n) => n.metadata.name === target.nodeName) ?? ghostNode(target.nodeName, target.providerId, target, iso(t0));
        const e = nodeEvent(id, iso(t0), structuredClone(live) as never, 'ready', {}, 'other');
        send = (x) => x.registration(e);
        summary = `another cluster's node event for ${target.nodeName}`;
      }
    }
    return { family: 'events', kind, summary, apply: async (x) => void (await send(x)) };
  },
};

// ---------------------------------------------------------------- queue

const DetailTypes = {
  spot: 'EC2 Spot Instance Interruption Warning',
  rebalance: 'EC2 Instance Rebalance Recommendation',
  state: 'EC2 Instance State-change Notification',
  reservation: 'EC2 Capacity Reservation Instance Interruption Warning',
  health: 'AWS Health Event',
};

/** An EventBridge event as the interruption queue delivers it. */
function awsEvent(
  detailType: string,
  source: string,
  account: string,
  region: string,
  time: string,
  instanceIds: string[],
  detail: Record<string, unknown>,
): Record<string, unknown> {
  return {
    version: '0',
    id: `ev-${instanceIds.join('-').slice(0, 40)}-${time}`,
    'detail-type': detailType,
    source,
    account,
    time,
    region,
    resources: instanceIds.map((i) => `arn:aws:ec2:${region}:${account}:instance/${i}`),
    detail,
  };
}

function healthDetail(region: string, account: string, instanceIds: string[], start: string): Record<string, unknown> {
  return {
    eventArn: `arn:aws:health:${region}::event/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_1`,
    service: 'EC2',
    eventTypeCode: 'AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED',
    eventTypeCategory: 'scheduledChange',
    startTime: new Date(start).toUTCString(),
    affectedEntities: instanceIds.map((i) => ({ entityValue: `arn:aws:ec2:${region}:${account}:instance/${i}`, status: 'PENDING' })),
    affectedAccount: account,
  };
}

const queue: Family = {
  name: 'queue',
  store: 'memory',
  kinds: [
    'spot-past',
    'spot-on-demand',
    'foreign-account',
    'foreign-region',
    'health-many',
    'health-past',
    'state-running',
    'unknown-instance',
    'managed-instance',
    'reservation-on-demand',
    'rebalance',
    'malformed',
    'repeat',
  ],
  forge(w, d) {
    const kind = d.pick(this.kinds);
    const t0 = w.truth.t0;
    const spot = w.truth.nodes.filter((n) => n.capacityType === 'spot');
    const od = w.truth.nodes.filter((n) => n.capacityType === 'on-demand');
    const any = d.pick(w.truth.nodes);
    // What an attacker aims a spot warning at: a spot node, which EC2 bears out as spot.
    const aim = spot.length ? d.pick(spot) : any;
    const past = d.pick(['2000-01-01T00:00:00Z', iso(t0 - 3600_000), iso(t0 - 119_000)]);
    let body: (string | Record<string, unknown>)[] = [];
    let summary = '';
    /** Instances whose notice EC2 bears out: their cutoff may come two minutes after receipt. */
    let genuine: TrueNode[] = [];
    const spotEvent = (n: TrueNode, account = Account, region = Region, time = past) =>
      awsEvent(DetailTypes.spot, 'aws.ec2', account, region, time, [n.instanceId], { 'instance-id': n.instanceId, 'instance-action': 'terminate' });
    switch (kind) {
      case 'spot-past': {
        const n = spot.length ? d.pick(spot) : any;
        body = [spotEvent(n)];
        if (n.capacityType === 'spot') genuine = [n];
        summary = `a spot warning dated ${past} for ${n.instanceId} (${n.capacityType})`;
        break;
      }
      case 'spot-on-demand': {
        const n = od.length ? d.pick(od) : any;
        body = [spotEvent(n)];
        if (n.capacityType === 'spot') genuine = [n];
        summary = `a spot warning for ${n.capacityType} ${n.instanceId}`;
        break;
      }
      case 'foreign-account':
        body = [spotEvent(aim, d.pick(['999999999999', '000000000000', '12345678901']))];
        summary = `a spot warning from account ${(body[0] as { account: string }).account} for ${aim.capacityType} ${aim.instanceId}`;
        break;
      case 'foreign-region':
        body = [spotEvent(aim, Account, d.pick(['eu-west-1', 'us-east-2', '']))];
        summary = `a spot warning from region ${(body[0] as { region: string }).region || '(empty)'} for ${aim.capacityType} ${aim.instanceId}`;
        break;
      case 'health-many': {
        const ids = [
          ...w.truth.nodes.map((n) => n.instanceId),
          ...Array.from({ length: MaxHealthEventInstances + d.int(1, 200) }, (_, i) => `i-0f${i.toString(16).padStart(15, '0')}`),
        ];
        body = [awsEvent(DetailTypes.health, 'aws.health', Account, Region, iso(t0), [], healthDetail(Region, Account, ids, past))];
        summary = `a Health scheduled change naming ${ids.length} instances (every node's), started ${past}`;
        break;
      }
      case 'health-past': {
        const ns = w.truth.nodes.slice(0, d.int(1, w.truth.nodes.length));
        body = [
          awsEvent(
            DetailTypes.health,
            'aws.health',
            Account,
            Region,
            iso(t0),
            [],
            healthDetail(
              Region,
              Account,
              ns.map((n) => n.instanceId),
              past,
            ),
          ),
        ];
        genuine = ns;
        summary = `a Health scheduled change for ${ns.map((n) => n.instanceId).join(', ')}, started ${past}`;
        break;
      }
      case 'state-running': {
        const state = d.pick(['stopping', 'stopped', 'shutting-down', 'terminated']);
        body = [awsEvent(DetailTypes.state, 'aws.ec2', Account, Region, iso(t0), [any.instanceId], { 'instance-id': any.instanceId, state })];
        summary = `a state change to ${state} for running ${any.instanceId}`;
        break;
      }
      case 'unknown-instance':
      case 'managed-instance': {
        const id = kind === 'managed-instance' ? ManagedInstanceId : `i-0${d.int(1e8, 9e8).toString(16)}dead`;
        body = [awsEvent(DetailTypes.spot, 'aws.ec2', Account, Region, past, [id], { 'instance-id': id, 'instance-action': 'terminate' })];
        summary = `a spot warning for ${kind === 'managed-instance' ? "the managed node group's" : 'an unknown'} instance ${id}`;
        break;
      }
      case 'reservation-on-demand': {
        const n = od.length ? d.pick(od) : any;
        body = [
          awsEvent(DetailTypes.reservation, 'aws.ec2', Account, Region, iso(t0), [n.instanceId], {
            'instance-id': n.instanceId,
            'instance-action': 'terminate',
            'instance-termination-time': past,
          }),
        ];
        summary = `a capacity reservation interruption for ${n.capacityType} ${n.instanceId}, ending ${past}`;
        break;
      }
      case 'rebalance':
        body = [awsEvent(DetailTypes.rebalance, 'aws.ec2', Account, Region, past, [any.instanceId], { 'instance-id': any.instanceId })];
        summary = `a rebalance recommendation for ${any.instanceId}`;
        break;
      case 'malformed':
        body = [d.chance(0.3) ? d.sample(fc.string({ maxLength: 40 })) : { ...spotEvent(any), detail: d.sample(fc.anything({ maxDepth: 2 })) }];
        summary = `a malformed message ${short(body[0])}`;
        break;
      case 'repeat': {
        const n = spot.length ? d.pick(spot) : any;
        const times = d.int(2, 6);
        body = Array.from({ length: times }, (_, i) => spotEvent(n, Account, Region, iso(t0 - i * 60_000)));
        if (n.capacityType === 'spot') genuine = [n];
        summary = `${times} spot warnings for ${n.capacityType} ${n.instanceId}, dated back to ${iso(t0 - (times - 1) * 60_000)}`;
        break;
      }
    }
    const batch = {
      Records: body.map((b, i) => ({
        messageId: `m-${i}`,
        receiptHandle: 'x',
        body: typeof b === 'string' ? b : JSON.stringify(b),
        attributes: {},
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${Region}:${Account}:nodefleet-interruption`,
        awsRegion: Region,
      })),
    };
    return {
      family: 'queue',
      kind,
      summary,
      apply: async (x) => {
        // What AWS itself would give: the notice two minutes from when it arrives.
        for (const n of genuine) {
          setLegit(x, n.claim, x.w.clock.nowMs() + SpotNoticeSeconds * 1000);
          x.truth.mayDisrupt.add(n.claim);
        }
        await x.interruption(batch);
      },
    };
  },
};

/** Records that `claim` may legitimately be cut off from `ms` on (the earliest such instant wins). */
function setLegit(w: AttackWorld, claim: string, ms: number): void {
  const cur = w.truth.legitDeadline.get(claim);
  w.truth.legitDeadline.set(claim, cur === undefined ? ms : Math.min(cur, ms));
}

// ---------------------------------------------------------------- executions

const executions: Family = {
  name: 'executions',
  store: 'memory',
  kinds: [
    'managed-node',
    'no-claim',
    'ghost-claim',
    'foreign-cluster-claim',
    'other-instance',
    'other-node',
    'deadline-0',
    'cutoff-past',
    'malformed',
    'attempt-forged',
    'joining',
  ],
  forge(w, d) {
    const kind = d.pick(this.kinds);
    const t0 = w.truth.t0;
    const v = d.pick(w.truth.nodes);
    // Another node (the world has at least two).
    const other = d.pick(w.truth.nodes.filter((n) => n !== v));
    const reason = d.pick(['consolidation', 'drift', 'expiration', 'interruption', 'emptiness', 'manual', 'gc']);
    const deadline = d.pick([0, 1, t0 - 3600_000, t0, t0 + 1000]);
    let input: unknown;
    let summary = '';
    /** Accepted by design: a StartExecution for one of this cluster's claims drains it; its cutoff comes at the claim's own grace period. */
    let accepted: TrueNode | undefined;
    let prepare: ((x: AttackWorld) => Promise<void>) | undefined;
    switch (kind) {
      case 'managed-node':
        input = {
          nodeClaim: d.pick(['coredns', 'system', ManagedNodeName]),
          nodeName: ManagedNodeName,
          instanceId: ManagedInstanceId,
          reason,
          deadlineEpochMs: deadline,
        };
        break;
      case 'no-claim':
        input = { nodeClaim: v.nodeName, nodeName: v.nodeName, instanceId: v.instanceId, reason, deadlineEpochMs: deadline };
        break;
      case 'ghost-claim':
        input = {
          nodeClaim: `ghost-${d.int(1, 999)}`,
          nodeName: d.pick([v.nodeName, 'ghost']),
          instanceId: d.pick([v.instanceId, 'i-0123456789abcdef0']),
          reason,
          deadlineEpochMs: deadline,
        };
        break;
      case 'foreign-cluster-claim': {
        // Another cluster's claim in the table, naming this cluster's node and instance.
        const name = `other-${d.int(1000, 9999)}`;
        prepare = async (x) => {
          const real = (await x.store.get(v.claim))!;
          await x.store.create({ ...real, name, cluster: 'other', version: 0 });
        };
        input = { nodeClaim: name, nodeName: v.nodeName, instanceId: v.instanceId, reason, deadlineEpochMs: deadline };
        break;
      }
      case 'other-instance':
        input = { nodeClaim: v.claim, nodeName: v.nodeName, instanceId: d.pick([other.instanceId, ManagedInstanceId]), reason, deadlineEpochMs: deadline };
        break;
      case 'other-node':
        input = { nodeClaim: v.claim, nodeName: d.pick([other.nodeName, ManagedNodeName]), instanceId: v.instanceId, reason, deadlineEpochMs: deadline };
        break;
      case 'deadline-0':
      case 'cutoff-past':
        input = {
          nodeClaim: v.claim,
          ...(d.chance(0.5) ? { nodeName: v.nodeName, instanceId: v.instanceId } : {}),
          reason,
          deadlineEpochMs: kind === 'deadline-0' ? 0 : t0 - d.int(1, 86_400) * 1000,
          ...(d.chance(0.3) ? { budgetNodePool: v.nodePool } : {}),
        };
        accepted = v;
        break;
      case 'attempt-forged':
        input = { nodeClaim: v.claim, reason, attempt: d.int(2, 1e6), deadlineEpochMs: deadline };
        accepted = v;
        break;
      case 'joining': {
        const j = w.truth.joining ?? v;
        input = { nodeClaim: j.claim, nodeName: d.pick([j.nodeName, other.nodeName]), reason, deadlineEpochMs: deadline };
        if ((input as { nodeName: string }).nodeName === j.nodeName || j === v) accepted = j;
        break;
      }
      default:
        input = d.sample(
          fc.oneof(
            fc.anything({ maxDepth: 2 }),
            fc.record(
              {
                nodeClaim: fc.oneof(fc.constant(v.claim), fc.string()),
                reason: fc.string(),
                deadlineEpochMs: fc.oneof(fc.integer(), fc.string()),
                attempt: fc.oneof(fc.integer(), fc.constant(0)),
              },
              { requiredKeys: [] },
            ),
          ),
        );
        accepted = v;
    }
    summary = `StartExecution ${short(input, 220)}`;
    const name = `forged-${d.int(1, 1e6)}`;
    return {
      family: 'executions',
      kind,
      summary,
      apply: async (x) => {
        await prepare?.(x);
        if (accepted) {
          x.truth.mayDisrupt.add(accepted.claim);
          const claim = await x.store.get(accepted.claim);
          if (claim?.terminationGracePeriodSeconds !== undefined) setLegit(x, accepted.claim, x.w.clock.nowMs() + claim.terminationGracePeriodSeconds * 1000);
        }
        x.startTermination(input, name);
      },
    };
  },
};

// ---------------------------------------------------------------- records

/** A DynamoDB item written as it is (the attacker's PutItem), in the world's partition. */
async function putItem(w: AttackWorld, item: Record<string, unknown>): Promise<void> {
  const { clients, local } = await localDynamo();
  try {
    await clients.doc.send(new PutCommand({ TableName: local.tableName, Item: item }));
  } catch {
    // DynamoDB takes no such value (a BigInt, NaN, a number beyond 38 digits): the attacker's item
    // is then the claim as a string, malformed all the same.
    await clients.doc.send(
      new PutCommand({
        TableName: local.tableName,
        Item: { ...item, claim: String(JSON.stringify(item.claim, (_k, v) => (typeof v === 'bigint' ? String(v) : v))) },
      }),
    );
  }
}

function partitionOf(w: AttackWorld): string {
  if (!(w.store instanceof DynamoNodeClaimStore) || !w.partition) throw new Error('the records family needs the DynamoDB store');
  return w.partition;
}

const records: Family = {
  name: 'records',
  store: 'dynamo',
  kinds: [
    'delete-claim',
    'malformed-new',
    'malformed-over-claim',
    'bad-version',
    'claim-names-other-instance',
    'launched-claim-names-other-instance',
    'registered-claim-names-other-instance',
    'terminating-claim-names-other-instance',
    'gone-instance-claim-names-node',
    'foreign-cluster-claim',
    'epoch-lost',
    'claim-of-managed-instance',
  ],
  forge(w, d) {
    const kind = d.pick(this.kinds);
    const t0 = w.truth.t0;
    const v = d.pick(w.truth.nodes);
    const evil = `evil-${d.int(1000, 9999)}`;
    let write: (x: AttackWorld) => Promise<void>;
    let summary = '';
    const copyOf = async (x: AttackWorld, over: Partial<NodeClaim>): Promise<NodeClaim> =>
      NodeClaimSchema.parse({ ...(await x.store.get(v.claim))!, name: evil, version: 0, ...over });
    const put = async (x: AttackWorld, c: NodeClaim) => putItem(x, nodeClaimItem(partitionOf(x), c));
    const old = iso(t0 - d.int(1, 400) * 86_400_000);
    switch (kind) {
      case 'delete-claim':
        write = async (x) => x.store.delete(v.claim);
        summary = `DeleteItem of ${v.claim} (node ${v.nodeName} live, registered, running pods)`;
        break;
      case 'malformed-new':
      case 'malformed-over-claim': {
        const garbage = d.sample(
          fc.oneof(
            fc.anything({ maxDepth: 3 }),
            fc.record(
              {
                name: fc.string(),
                phase: fc.constantFrom('Initialized', 'Terminating', 'Bogus'),
                instanceId: fc.constant(v.instanceId),
                createdAt: fc.string(),
              },
              { requiredKeys: [] },
            ),
          ),
        );
        const sk = kind === 'malformed-new' ? keys.nodeClaim(evil) : keys.nodeClaim(v.claim);
        write = async (x) =>
          putItem(x, {
            [Table.partitionKey]: keys.cluster(partitionOf(x)),
            [Table.sortKey]: sk,
            type: 'NodeClaim',
            version: 0,
            [Table.instanceIdAttribute]: v.instanceId,
            nodePool: v.nodePool,
            phase: 'Initialized',
            claim: garbage,
          });
        summary = `a malformed claim item at ${sk} (instanceId ${v.instanceId}): ${short(garbage)}`;
        break;
      }
      case 'bad-version':
        write = async (x) => {
          const real = (await x.store.get(v.claim))!;
          await putItem(x, { ...nodeClaimItem(partitionOf(x), real), version: d.pick(['1', null, 1.5, -1]) });
        };
        summary = `${v.claim}'s item with a version that is no integer`;
        break;
      case 'claim-names-other-instance':
        write = async (x) => put(x, await copyOf(x, { expireAt: old, createdAt: old }));
        summary = `a claim ${evil} copying ${v.claim} (node ${v.nodeName}, instance ${v.instanceId}), expired ${old}`;
        break;
      case 'launched-claim-names-other-instance':
        write = async (x) =>
          put(
            x,
            await copyOf(x, {
              phase: 'Launched',
              nodeName: undefined,
              providerId: undefined,
              conditions: [{ type: 'Launched', status: 'True', lastTransitionTime: old }],
              createdAt: old,
            }),
          );
        summary = `a Launched claim ${evil} from ${old} naming ${v.instanceId}, no node`;
        break;
      case 'registered-claim-names-other-instance':
        write = async (x) =>
          put(
            x,
            await copyOf(x, {
              nodeName: `ghost-${d.int(1, 99)}`,
              providerId: undefined,
              conditions: [
                { type: 'Launched', status: 'True', lastTransitionTime: old },
                { type: 'Registered', status: 'True', lastTransitionTime: old },
              ],
              createdAt: old,
            }),
          );
        summary = `a Registered claim ${evil} naming ${v.instanceId} and a node that is gone`;
        break;
      case 'terminating-claim-names-other-instance':
        write = async (x) =>
          put(
            x,
            await copyOf(x, {
              phase: 'Terminating',
              terminationGracePeriodSeconds: 0,
              termination: {
                attempt: 1,
                reason: 'expiration',
                deadlineEpochMs: d.pick([0, t0 - 3600_000]),
                startedAt: old,
                heartbeatAt: old,
                failures: d.int(0, 3),
                ...(d.chance(0.5) ? { ended: { attempt: 1, outcome: 'failed' as const, at: old } } : {}),
              },
            }),
          );
        summary = `a Terminating claim ${evil} naming ${v.claim}'s node and instance, deadline passed`;
        break;
      case 'gone-instance-claim-names-node': {
        const gone = `i-0${d.int(1e8, 9e8).toString(16)}gone`;
        const keepProvider = d.chance(0.5);
        write = async (x) =>
          put(
            x,
            await copyOf(x, {
              instanceId: gone,
              ...(keepProvider ? {} : { providerId: `aws:///${v.zone}/${gone}` }),
              conditions: [
                { type: 'Launched', status: 'True', lastTransitionTime: old },
                { type: 'Registered', status: 'True', lastTransitionTime: old },
              ],
              createdAt: old,
            }),
          );
        summary = `a claim ${evil} naming ${v.claim}'s node ${v.nodeName}${keepProvider ? ` and providerID ${v.providerId}` : ''} and an instance that does not exist (${gone})`;
        break;
      }
      case 'foreign-cluster-claim':
        write = async (x) => put(x, await copyOf(x, { cluster: 'other', expireAt: old }));
        summary = `another cluster's claim ${evil} naming ${v.instanceId}, expired`;
        break;
      case 'epoch-lost':
        write = async (x) => {
          const { clients, local } = await localDynamo();
          await clients.doc.send(
            new DeleteCommand({ TableName: local.tableName, Key: { [Table.partitionKey]: keys.cluster(partitionOf(x)), [Table.sortKey]: keys.claimsEpoch() } }),
          );
          await x.store.delete(v.claim);
        };
        summary = `the claims epoch item and ${v.claim} deleted (a point-in-time restore)`;
        break;
      default:
        write = async (x) =>
          put(
            x,
            await copyOf(x, {
              instanceId: ManagedInstanceId,
              providerId: `aws:///us-east-1a/${ManagedInstanceId}`,
              nodeName: ManagedNodeName,
              expireAt: old,
              terminationGracePeriodSeconds: 0,
            }),
          );
        summary = `a claim ${evil} naming the managed node group's node and instance, expired`;
    }
    // A node that never registered runs no workload pod: with its claim's item gone or unreadable,
    // gc terminates its instance as an orphan, by design (shared/disruption/gc.ts orphansWithNode).
    const lostRecord = ['delete-claim', 'malformed-over-claim', 'bad-version', 'epoch-lost'].includes(kind);
    const apply = async (x: AttackWorld) => {
      if (lostRecord && v === x.truth.joining) x.truth.mayDisrupt.add(v.claim);
      await write(x);
    };
    return { family: 'records', kind, summary, apply };
  },
};

// ---------------------------------------------------------------- commands

const Methods: Record<string, string> = {
  Expired: 'graceful-expiration',
  Drifted: 'drift',
  Empty: 'emptiness',
  Underutilized: 'single-node-consolidation',
  Rebalance: 'rebalance',
};

const commands: Family = {
  name: 'commands',
  store: 'memory',
  kinds: [
    'expired-not',
    'drifted-not',
    'empty-not',
    'underutilized',
    'other-claim',
    'managed-node',
    'ghost-node',
    'method-mismatch',
    'replacements-step',
    'abandon',
    'multi',
    'rebalance-not',
  ],
  forge(w, d) {
    const kind = d.pick(this.kinds);
    const t0 = w.truth.t0;
    // Half the time, the node the honest world is terminating (its claim expired), if any: a command must not meddle with it.
    const terminating = w.truth.nodes.filter((n) => w.truth.mayDisrupt.has(n.claim));
    const v = terminating.length && d.chance(0.5) ? d.pick(terminating) : d.pick(w.truth.nodes);
    const other = d.pick(w.truth.nodes.filter((n) => n !== v));
    const candidate = (
      n: {
        nodeName: string;
        claim: string;
        nodePool: string;
        instanceType: string;
        zone: string;
        capacityType: string;
        instanceId?: string;
        providerId?: string;
      },
      pods: string[] = [],
    ) => ({
      nodeName: n.nodeName,
      nodeClaim: n.claim,
      nodePool: n.nodePool,
      instanceType: n.instanceType,
      zone: n.zone,
      capacityType: n.capacityType,
      priceUsdPerHour: 0.1,
      ...(n.instanceId ? { instanceId: n.instanceId } : {}),
      ...(n.providerId ? { providerID: n.providerId } : {}),
      pods,
    });
    const replacement = {
      nodePool: v.nodePool,
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['c6i.32xlarge'] }],
      instanceTypes: ['c6i.32xlarge', 'm6i.32xlarge'],
      labels: {},
      taints: [],
      startupTaints: [],
      requests: { cpu: '128', memory: '256Gi' },
      capacityTypes: ['on-demand'],
      zones: [v.zone],
      priceUsdPerHour: 0.01,
      pods: v.pods,
    };
    let reason = d.pick(['Expired', 'Drifted', 'Empty', 'Underutilized', 'Rebalance']);
    let cands = [candidate(v, v.pods)];
    let extra: Record<string, unknown> = {};
    switch (kind) {
      case 'expired-not':
        reason = 'Expired';
        break;
      case 'drifted-not':
        reason = 'Drifted';
        break;
      case 'empty-not':
        reason = 'Empty';
        cands = [candidate(v, [])];
        break;
      case 'underutilized':
        reason = 'Underutilized';
        break;
      case 'rebalance-not':
        reason = 'Rebalance';
        break;
      case 'other-claim':
        cands = [candidate({ ...v, claim: other.claim, instanceId: other.instanceId, providerId: other.providerId })];
        break;
      case 'managed-node':
        cands = [
          candidate({
            nodeName: ManagedNodeName,
            claim: d.pick(['coredns', ManagedNodeName, v.claim]),
            nodePool: v.nodePool,
            instanceType: 'm5.large',
            zone: 'us-east-1a',
            capacityType: 'on-demand',
            instanceId: ManagedInstanceId,
          }),
        ];
        break;
      case 'ghost-node':
        cands = [candidate({ ...v, nodeName: `ghost-${d.int(1, 99)}` })];
        break;
      case 'method-mismatch':
        extra = { method: d.pick(Object.values(Methods).filter((m) => m !== Methods[reason])) };
        break;
      case 'replacements-step':
        extra = { replacementClaims: d.chance(0.5) ? [other.claim] : [`${v.nodePool}-r${d.int(1, 1e6).toString(36)}`] };
        break;
      case 'abandon':
        extra = { abandon: true };
        break;
      case 'multi':
        cands = w.truth.nodes.map((n) => candidate(n, n.pods));
        break;
    }
    const decision = d.pick(['delete', 'replace']);
    const command = {
      id: `forged-${d.int(1, 1e6)}`,
      method: Methods[reason],
      reason,
      decision,
      candidates: cands,
      replacements: decision === 'replace' ? [replacement] : [],
      createdAt: d.pick([iso(t0), '2000-01-01T00:00:00Z']),
      validateAfter: d.pick([iso(t0 - 1000), iso(t0), '2000-01-01T00:00:00Z']),
      ...('method' in extra ? { method: extra.method } : {}),
    };
    const delay = d.pick([0, 0, 30, 90]);
    const input = {
      command,
      ...('replacementClaims' in extra ? { replacementClaims: extra.replacementClaims } : {}),
      ...('abandon' in extra ? { abandon: true } : {}),
    };
    return {
      family: 'commands',
      kind,
      summary: `at t0+${delay}s, disruption loop input ${reason}/${command.method}/${decision} for ${cands.map((c) => `${c.nodeName}=${c.nodeClaim}`).join(', ')}${'replacementClaims' in extra ? ` with replacementClaims ${short(extra.replacementClaims)}` : ''}${'abandon' in extra ? ' abandon' : ''}`,
      // At t0 or once the honest world's own disruption is under way.
      apply: async (x) => x.scheduler.at(x.truth.t0 + delay * 1000, async () => void x.startDisruption(input)),
    };
  },
};

export const Families: Record<FamilyName, Family> = { views, events, queue, executions, records, commands };
