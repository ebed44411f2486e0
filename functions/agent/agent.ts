/**
 * The in-cluster agent: list+watch on pods, nodes and karpenter.sh/v1 NodeClaims (shared/kube Reflector: resumes from
 * resourceVersion with bookmarks, re-lists only on 410 Gone), an {@link AgentCore} that batches
 * unschedulable pods and forwards node changes through any EventPublisher, the cluster view
 * (nodes and bound pods, compact) published through a ClusterViewStore when one is given
 * ({@link ViewPublisher}, docs/cluster-state.md), and /healthz /readyz.
 *
 * The embedded environment starts it against its local API server and bus:
 * ```ts
 * const agent = new Agent({ connection: { kind: 'kubeconfig', path }, publisher: localBus, clusterName: 'local' });
 * await agent.start(); … await agent.stop();
 * ```
 */
import { createServer, type Server } from 'node:http';
import type { ClusterViewStore, EventPublisher } from '../../shared/api/ports.ts';
import type { Node, Pod } from '../../shared/api/kube.ts';
import { compactNode, toNode } from '../../shared/api/agent-events.ts';
import { ClusterViewBuilder, toViewPod, type ViewPod } from '../../shared/api/cluster-view.ts';
import { kubeConfigFor, type KubeConnection } from '../../shared/kube/kube-api.ts';
import { Reflector } from '../../shared/kube/reflector.ts';
import { AgentCore, nodeClaimDeletion, type AgentLog, type AgentTimers, type PodView } from './agent-core.ts';
import type { AgentNodeClaim } from '../../shared/api/agent-events.ts';
import { ViewPublisher } from './view-publisher.ts';

export interface AgentOptions {
  connection: KubeConnection;
  publisher: EventPublisher;
  clusterName: string;
  batchIdleMs?: number;
  batchMaxMs?: number;
  pendingResendMs?: number;
  /** Pod activity per node reported at most this often (default PodEventMinIntervalMs, 10 s). */
  podEventMinIntervalMs?: number;
  /** Re-list without 410 this often (ms); default never. */
  relistIntervalMs?: number;
  /** Where to publish the cluster view; none = no view (functions list the cluster live). */
  views?: ClusterViewStore;
  /** View publish interval / heartbeat overrides (ms). */
  viewIntervalMs?: number;
  viewHeartbeatMs?: number;
  /** Port for /healthz and /readyz; 0 or undefined = no server. */
  healthPort?: number;
  log?: AgentLog;
  nowMs?: () => number;
  /** Timer source for batching and re-sends (default setTimeout). */
  timers?: AgentTimers;
}

/** What the pod reflector keeps of a pod: the core's view, and the cluster view's row when bound. */
type AgentPodItem = PodView & { row?: ViewPod };

/** The listed pods' view rows, read in place (a list of 100 000 pods is not copied into arrays). */
function* rowsOf(items: Map<string, AgentPodItem>): Generator<[string, ViewPod | undefined]> {
  for (const [key, item] of items) yield [key, item.row];
}

export class Agent {
  readonly core: AgentCore;
  /** The cluster view's state (nodes and bound pods), kept whether or not it is published. */
  readonly view = new ClusterViewBuilder();
  readonly publisher?: ViewPublisher;
  private readonly pods: Reflector<AgentPodItem>;
  private readonly nodes: Reflector<Node>;
  private readonly nodeClaims: Reflector<AgentNodeClaim>;
  private server?: Server;

  constructor(private readonly opts: AgentOptions) {
    const log = opts.log ?? (() => {});
    this.core = new AgentCore({ ...opts, log });
    const kc = kubeConfigFor(opts.connection);
    const relist = opts.relistIntervalMs;
    const onError = (kind: string) => (err: unknown, phase: string) =>
      log('warn', `${kind} ${phase} failed, retrying`, { error: (err as Error)?.message ?? String(err) });
    const nowMs = opts.nowMs;
    const onListPage = (p: { kind: string; read: number; kept: number }) => log('debug', 'list page', p);
    // Per pod: its compact form while provisionable, its node binding while bound (pod events),
    // its row in the cluster view while bound (template shared with its siblings).
    this.pods = new Reflector<AgentPodItem>(kc, {
      kind: 'pods',
      transform: (raw: Pod) => {
        const v = AgentCore.podView(raw);
        const row = this.opts.views ? toViewPod(raw) : undefined;
        if (!v && !row) return undefined;
        return { ...(v ?? {}), ...(row ? { row: this.view.intern(row) } : {}) };
      },
      onSync: (items) => {
        this.core.onPodViewSync(items);
        if (this.opts.views) this.view.syncPods(rowsOf(items));
        log('debug', 'pods synced', { pods: items.size });
      },
      onEvent: (type, key, item) => {
        this.core.onPodViewEvent(type, key, item);
        if (this.opts.views) this.view.setPod(key, type === 'DELETED' ? undefined : item?.row);
      },
      onError: onError('pods'),
      relistIntervalMs: relist,
      nowMs,
      onListPage,
    });
    // Nodes are kept compact (labels, taints, capacity, conditions): all the core and the view read.
    this.nodes = new Reflector<Node>(kc, {
      kind: 'nodes',
      transform: (raw) => toNode(compactNode(raw as Node)),
      onSync: (items) => {
        this.core.onNodeSync(items);
        if (this.opts.views) this.view.syncNodes(items);
        log('debug', 'nodes synced', { nodes: items.size });
      },
      onEvent: (type, key, n) => {
        this.core.nodeChanged(type, key, n);
        if (this.opts.views) this.view.setNode(key, type === 'DELETED' ? undefined : n);
      },
      onError: onError('nodes'),
      relistIntervalMs: relist,
      nowMs,
      onListPage,
    });
    // NodeClaim objects: only those being deleted are kept (kubectl delete nodeclaim starts the
    // termination at once, as a Node deletion does; gc's pass is the safety net).
    this.nodeClaims = new Reflector<AgentNodeClaim>(kc, {
      kind: 'nodeclaims',
      transform: (raw) => nodeClaimDeletion(raw),
      onSync: (items) => this.core.onNodeClaimSync(items),
      onEvent: (type, key, c) => this.core.nodeClaimChanged(type, key, c),
      onError: onError('nodeclaims'),
      relistIntervalMs: relist,
      nowMs,
      onListPage,
    });
    if (opts.views) {
      this.publisher = new ViewPublisher({
        store: opts.views,
        cluster: opts.clusterName,
        builder: this.view,
        currentAsOfMs: () => {
          const a = this.pods.currentAsOfMs();
          const b = this.nodes.currentAsOfMs();
          return a === undefined || b === undefined ? undefined : Math.min(a, b);
        },
        nowMs,
        log,
        intervalMs: opts.viewIntervalMs,
        heartbeatMs: opts.viewHeartbeatMs,
      });
    }
  }

  /** The pod and node informers have listed once (the NodeClaim one is not waited for: a cluster may lack the CRD). */
  ready(): boolean {
    return this.pods.hasSynced() && this.nodes.hasSynced();
  }

  async start(): Promise<void> {
    this.core.start();
    this.pods.start();
    this.nodes.start();
    this.nodeClaims.start();
    this.publisher?.start();
    if (this.opts.healthPort) {
      this.server = createServer((req, res) => {
        const ok = req.url === '/healthz' ? true : req.url === '/readyz' ? this.ready() : undefined;
        res.writeHead(ok === undefined ? 404 : ok ? 200 : 503, { 'content-type': 'text/plain' });
        res.end(ok === undefined ? 'not found' : ok ? 'ok' : 'not ready');
      });
      await new Promise<void>((resolve) => this.server!.listen(this.opts.healthPort, resolve));
    }
  }

  async stop(): Promise<void> {
    this.pods.stop();
    this.nodes.stop();
    this.nodeClaims.stop();
    this.publisher?.stop();
    await this.core.flush();
    this.core.stop();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
