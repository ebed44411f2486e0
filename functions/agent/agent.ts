/**
 * The in-cluster agent: list+watch on pods and nodes (shared/kube Reflector: resumes from
 * resourceVersion, re-lists on 410 Gone and every 5 minutes), an {@link AgentCore} that batches
 * unschedulable pods and forwards node changes through any EventPublisher, and /healthz /readyz.
 *
 * The embedded environment starts it against its local API server and bus:
 * ```ts
 * const agent = new Agent({ connection: { kind: 'kubeconfig', path }, publisher: localBus, clusterName: 'local' });
 * await agent.start(); … await agent.stop();
 * ```
 */
import { createServer, type Server } from 'node:http';
import type { EventPublisher } from '../../shared/api/ports.ts';
import type { Node } from '../../shared/api/kube.ts';
import { kubeConfigFor, type KubeConnection } from '../../shared/kube/kube-api.ts';
import { Reflector, DefaultRelistIntervalMs } from '../../shared/kube/reflector.ts';
import { AgentCore, type AgentLog, type AgentTimers, type PodView } from './agent-core.ts';

export interface AgentOptions {
  connection: KubeConnection;
  publisher: EventPublisher;
  clusterName: string;
  batchIdleMs?: number;
  batchMaxMs?: number;
  pendingResendMs?: number;
  /** Pod activity per node reported at most this often (default PodEventMinIntervalMs, 10 s). */
  podEventMinIntervalMs?: number;
  relistIntervalMs?: number;
  /** Port for /healthz and /readyz; 0 or undefined = no server. */
  healthPort?: number;
  log?: AgentLog;
  nowMs?: () => number;
  /** Timer source for batching and re-sends (default setTimeout). */
  timers?: AgentTimers;
}

export class Agent {
  readonly core: AgentCore;
  private readonly pods: Reflector<PodView>;
  private readonly nodes: Reflector<Node>;
  private server?: Server;

  constructor(private readonly opts: AgentOptions) {
    const log = opts.log ?? (() => {});
    this.core = new AgentCore({ ...opts, log });
    const kc = kubeConfigFor(opts.connection);
    const relist = opts.relistIntervalMs ?? DefaultRelistIntervalMs;
    const onError = (kind: string) => (err: unknown, phase: string) => log('warn', `${kind} ${phase} failed, retrying`, { error: (err as Error)?.message ?? String(err) });
    // Per pod: its compact form while provisionable, its node binding while bound (pod events).
    this.pods = new Reflector<PodView>(kc, {
      kind: 'pods',
      transform: (raw) => AgentCore.podView(raw),
      onSync: (items) => this.core.onPodViewSync(items),
      onEvent: (type, key, view) => this.core.onPodViewEvent(type, key, view),
      onError: onError('pods'),
      relistIntervalMs: relist,
    });
    this.nodes = new Reflector<Node>(kc, {
      kind: 'nodes',
      transform: (raw) => raw as Node,
      onSync: (items) => this.core.onNodeSync(items),
      onEvent: (type, key, n) => this.core.nodeChanged(type, key, n),
      onError: onError('nodes'),
      relistIntervalMs: relist,
    });
  }

  /** Both informers have listed once. */
  ready(): boolean {
    return this.pods.hasSynced() && this.nodes.hasSynced();
  }

  async start(): Promise<void> {
    this.core.start();
    this.pods.start();
    this.nodes.start();
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
    await this.core.flush();
    this.core.stop();
    if (this.server) await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
