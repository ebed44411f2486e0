/**
 * Child process of the scale benchmark: the embedded environment's servers without the simulated
 * controllers (nothing reconciles 100 000 pods in the background while a function is measured):
 * the local Kubernetes API server over its object store, dynalite, and the local EC2 server.
 * It seeds the cluster (test/bench/scale/objects.ts), counts every Kubernetes API request and
 * response byte, and takes commands over IPC (see {@link Command}).
 *
 * Run by test/bench/scale/index.ts with `fork`; never alone.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../../shared/api/kube.ts';
import { loadCatalog } from '../../../shared/catalog/index.ts';
import { DynamoNodeClaimStore } from '../../../shared/aws/dynamo-node-claim-store.ts';
import { createClients } from '../../../shared/aws/clients.ts';
import { NodeClaimSchema, type NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { EC2NodeClassSchema, NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { NodePoolHashVersion, nodeClassHash, nodePoolHash } from '../../../shared/api/hash.ts';
import { AnnotationNodeClassHash, AnnotationNodePoolHash, AnnotationNodePoolHashVersion } from '../../../shared/api/labels.ts';
import { ObjectStore } from '../../../infra/local/kube/store.ts';
import { ApiCore, T } from '../../../infra/local/kube/api.ts';
import { createApiServer } from '../../../infra/local/kube/server.ts';
import { kubeconfigYaml } from '../../../infra/local/kube/kubeconfig.ts';
import { startLocalDynamo } from '../../../infra/local/dynamo.ts';
import { startLocalS3 } from '../../../infra/local/s3.ts';
import { LocalEc2 } from '../../../infra/local/ec2/local-ec2.ts';
import { LocalAwsServer } from '../../../infra/local/ec2/server.ts';
import { VirtualClock } from '../../../infra/local/clock.ts';
import { zonesOf } from '../../../infra/local/environment.ts';
import {
  CreatedAt,
  BenchDaemonSets,
  BenchRegion,
  benchDaemonSet,
  benchNode,
  benchNodeClass,
  benchNodePool,
  benchPdbs,
  benchPod,
  nodeName,
  pendingPods,
  podsOfNode,
} from './objects.ts';

export { BenchCluster } from './objects.ts';
import { BenchCluster } from './objects.ts';

/** Commands from the parent; each answered with `{ id, ok, result | error }`. */
export type Command =
  { op: 'counters'; reset?: boolean } | { op: 'addPending'; count: number; prefix: string } | { op: 'churn'; pods: number } | { op: 'stop' };

/** Endpoints the parent builds deps from (sent once, after seeding). */
export interface EnvReady {
  kubeconfig: string;
  kubeUrl: string;
  dynamodbEndpoint: string;
  ec2Endpoint: string;
  tableName: string;
  s3Endpoint: string;
  viewBucket: string;
  nodes: number;
  pods: number;
  seedSeconds: number;
}

const counters = { requests: 0, bytes: 0, watchBytes: 0 };

async function main(): Promise<void> {
  const nodes = Number(process.argv[2]);
  const podsPerNode = Number(process.argv[3]);
  const started = performance.now();
  // Seeded objects are a week old (creationTimestamp is the store's clock); later writes are now.
  let seeding = true;
  const now = () => (seeding ? new Date(CreatedAt) : new Date());
  const store = new ObjectStore(now, 50_000);
  const api = new ApiCore(store, now);
  const server = createApiServer(api);
  // Count before the API server's own handler writes anything (prepended listener wraps write/end).
  server.prependListener('request', (req, res) => {
    counters.requests++;
    const watch = /[?&]watch=(true|1)/.test(req.url ?? '');
    const add = (chunk: unknown) => {
      const n = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0;
      counters.bytes += n;
      if (watch) counters.watchBytes += n;
    };
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = ((chunk: unknown, ...rest: unknown[]) => (add(chunk), (write as any)(chunk, ...rest))) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => (typeof chunk !== 'function' && add(chunk), (end as any)(chunk, ...rest))) as typeof res.end;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const kubeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'nodefleet-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml(kubeUrl));

  for (const ns of ['default', 'kube-system', ...Array.from({ length: 8 }, (_, i) => `team-${i}`)])
    store.create(T.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } as KubeObject);
  store.create(T.nodepools, benchNodePool() as KubeObject);
  store.create(T.ec2nodeclasses, benchNodeClass() as KubeObject);
  for (const ds of BenchDaemonSets) store.create(T.daemonsets, benchDaemonSet(ds) as KubeObject);
  for (const p of benchPdbs())
    store.create(T.pdbs, { ...p, status: { disruptionsAllowed: 1, currentHealthy: 10, desiredHealthy: 9, expectedPods: 10 } } as KubeObject);
  let seq = 0;
  for (let i = 0; i < nodes; i++) {
    store.create(T.nodes, benchNode(i) as KubeObject);
    for (const p of podsOfNode(i, podsPerNode, seq)) store.create(T.pods, p as KubeObject);
    seq += podsPerNode;
  }

  seeding = false;
  const dynamo = await startLocalDynamo({ region: BenchRegion });
  const clock = new VirtualClock({ start: new Date(), speed: 1 });
  const catalog = new Map(loadCatalog({ region: BenchRegion }).map((t) => [t.name, t]));
  const ec2 = new LocalEc2({
    clock,
    region: BenchRegion,
    zones: zonesOf(BenchRegion),
    priceOf: (type, zone, ct) => catalog.get(type)?.offerings.find((o) => o.zone === zone && o.capacityType === ct)?.priceUsdPerHour,
  });
  const s3 = await startLocalS3();
  const aws = new LocalAwsServer({ ec2, clusterName: BenchCluster });
  const ec2Endpoint = await aws.start();

  // One NodeClaim per node, as nodefleet keeps them (Initialized, with the node's instance).
  const clients = createClients({ region: BenchRegion, dynamodbEndpoint: dynamo.endpoint, ec2Endpoint });
  const claims = new DynamoNodeClaimStore(clients.doc, dynamo.tableName, BenchCluster);
  const queue = Array.from({ length: nodes }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) await claims.create(claimOf(i));
    }),
  );

  let churnSeq = 0;
  const handle = async (cmd: Command): Promise<unknown> => {
    switch (cmd.op) {
      case 'counters': {
        const out = { ...counters };
        if (cmd.reset) counters.requests = counters.bytes = counters.watchBytes = 0;
        return out;
      }
      case 'addPending':
        for (const p of pendingPods(cmd.count, cmd.prefix)) store.create(T.pods, p as KubeObject);
        return { added: cmd.count };
      case 'churn': {
        // A pod replaced as a rollout does it: the old one terminating, then gone; the new one
        // created pending, bound, then Running (five watch events per replaced pod).
        for (let k = 0; k < cmd.pods; k++) {
          const n = (churnSeq * 7919) % nodes;
          const node = { index: n, name: nodeName(n) };
          const victim = store.listShared(T.pods).find((p) => p.spec?.nodeName === node.name && p.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet');
          if (victim) {
            const terminating = structuredClone(victim);
            terminating.metadata.deletionTimestamp = new Date().toISOString();
            store.update(T.pods, terminating);
            store.remove(T.pods, victim.metadata.namespace, victim.metadata.name);
          }
          const fresh = benchPod({
            name: `churn-${churnSeq}`,
            app: `app-${churnSeq % 40}`,
            kind: 'app',
            requests: victim?.spec?.containers?.[0]?.resources?.requests ?? { cpu: '100m', memory: '128Mi' },
            seq: 500_000 + churnSeq,
          });
          const pending: Record<string, any> = { ...fresh, spec: { ...fresh.spec } };
          delete pending.spec.nodeName;
          store.create(T.pods, { ...pending, status: { phase: 'Pending' } } as KubeObject);
          const bound = store.get(T.pods, pending.metadata.namespace, pending.metadata.name)!;
          bound.spec.nodeName = node.name;
          store.update(T.pods, bound);
          const running = store.get(T.pods, pending.metadata.namespace, pending.metadata.name)!;
          running.status = benchPod({
            name: fresh.metadata.name,
            app: `app-${churnSeq % 40}`,
            kind: 'app',
            node,
            requests: fresh.spec.containers[0].resources.requests,
            seq: 500_000 + churnSeq,
          }).status;
          store.update(T.pods, running);
          churnSeq++;
        }
        return { churned: cmd.pods };
      }
      case 'stop':
        server.closeAllConnections();
        server.close();
        await aws.stop();
        await dynamo.stop();
        setTimeout(() => process.exit(0), 50);
        return {};
    }
  };
  process.on('message', (m: { id: number; cmd: Command }) => {
    handle(m.cmd).then(
      (result) => process.send!({ id: m.id, ok: true, result }),
      (err: Error) => process.send!({ id: m.id, ok: false, error: err.message }),
    );
  });
  const ready: EnvReady = {
    kubeconfig,
    kubeUrl,
    dynamodbEndpoint: dynamo.endpoint,
    ec2Endpoint,
    tableName: dynamo.tableName,
    s3Endpoint: s3.endpoint,
    viewBucket: s3.bucket,
    nodes,
    pods: nodes * podsPerNode,
    seedSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  process.send!({ ready });
}

const poolHash = nodePoolHash(NodePoolSchema.parse(benchNodePool()));
const classHash = nodeClassHash(EC2NodeClassSchema.parse(benchNodeClass()));

/** The NodeClaim nodefleet holds for bench node i (not drifted: current hashes). */
function claimOf(i: number): NodeClaim {
  const n = benchNode(i);
  const labels = n.metadata.labels as Record<string, string>;
  const providerId = n.spec.providerID as string;
  return NodeClaimSchema.parse({
    name: `default-${i.toString(36).padStart(5, '0')}`,
    cluster: BenchCluster,
    nodePool: 'default',
    nodeClass: 'default',
    phase: 'Initialized',
    version: 0,
    createdAt: n.metadata.creationTimestamp,
    updatedAt: n.metadata.creationTimestamp,
    labels: { 'karpenter.sh/nodepool': 'default', 'karpenter.sh/capacity-type': 'on-demand' },
    taints: [],
    startupTaints: [],
    requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [labels['node.kubernetes.io/instance-type']] }],
    resources: { requests: { cpu: '7', memory: '28Gi', pods: '20' } },
    pods: [],
    nodePoolHash: poolHash,
    nodeClassHash: classHash,
    annotations: { [AnnotationNodePoolHash]: poolHash, [AnnotationNodePoolHashVersion]: NodePoolHashVersion, [AnnotationNodeClassHash]: classHash },
    providerId,
    instanceId: providerId.split('/').pop(),
    instanceType: labels['node.kubernetes.io/instance-type'],
    zone: labels['topology.kubernetes.io/zone'],
    capacityType: 'on-demand',
    nodeName: nodeName(i),
    allocatable: n.status.allocatable,
    capacity: n.status.capacity,
    conditions: [
      { type: 'Launched', status: 'True', lastTransitionTime: n.metadata.creationTimestamp },
      { type: 'Registered', status: 'True', lastTransitionTime: n.metadata.creationTimestamp },
      { type: 'Initialized', status: 'True', lastTransitionTime: n.metadata.creationTimestamp },
    ],
  });
}

void main().catch((err) => {
  process.stderr.write(`bench environment failed: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
