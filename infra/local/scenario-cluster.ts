/**
 * The Kubernetes side of a scenario run, as the environment, the runner and the expectations use
 * it: the embedded LocalCluster (simulated API server, scheduler, controllers and kubelets) or the
 * real control-plane tier (test/real/scenarios: kube-apiserver, kube-scheduler,
 * kube-controller-manager and kwok), read through a watch cache so snapshots stay synchronous.
 */
import type { KubeObject, Node, Pod } from '../../shared/api/kube.ts';
import type { InstanceSpec, StoreEvent, WatchEventType } from './kube/index.ts';

export interface ScenarioCluster {
  /** The cluster's current time. */
  now(): Date;
  /** Writes a kubeconfig for nodefleet's functions and agent; returns its path. */
  writeKubeconfig(path: string): string;
  /** The kubeconfig of one nodefleet identity (`agent` or a function's name), when the cluster has one per identity. */
  kubeconfigOf?(identity: string): string | undefined;
  stop(): Promise<void>;
  /** Creates or updates objects (as `kubectl apply`). */
  apply(objects: KubeObject[]): unknown;
  /** Deletes an object as `kubectl delete` does; absent counts as success. */
  delete(apiVersion: string, kind: string, name: string, namespace?: string): unknown;
  /** Sets a Deployment's replicas through its scale subresource. */
  scale(namespace: string, deployment: string, replicas: number): unknown;
  /** An instance boots: its kubelet registers the Node after `bootDelaySeconds`, Ready after `readyDelaySeconds`. */
  addInstance(spec: InstanceSpec): unknown;
  /** The instance is gone (shutting down): its kubelet stops; the Node stays unless `deleteNode`. */
  removeInstance(instanceId: string, opts?: { deleteNode?: boolean }): void;
  /** The instance's kubelet stops posting status; false when it has no live kubelet. */
  stopKubelet(instanceId: string): boolean;
  nodes(): Node[];
  pods(opts?: { namespace?: string; nodeName?: string }): Pod[];
  pendingPods(): Pod[];
  /** Objects of a kind, e.g. `objects('karpenter.sh/v1', 'NodePool')`. */
  objects(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  get(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject | undefined;
  onNodeChange(fn: (type: WatchEventType, node: Node) => void): () => void;
  onChange(fn: (e: StoreEvent) => void): () => void;
  /**
   * Waits until what was applied so far has settled (the real tier: every Node Ready, the
   * workloads' pods created and bound), so the agent's first list sees the scenario's starting
   * cluster rather than pods its controllers have not bound yet. The embedded cluster settles on
   * every write and has none.
   */
  settle?(): Promise<void>;
  /** Evictions the Eviction API refused because a PDB allowed no disruption, in order. */
  evictionsRefused(): readonly { pod: string; pdb: string; at: string }[];
}

/** Starts a scenario's cluster on the environment's clock (the real tier's). */
export type ScenarioClusterFactory = (ctx: {
  clock: { nowMs(): number; setTimer(fn: () => void, ms: number): { cancel(): void } };
  log: (line: string) => void;
}) => Promise<ScenarioCluster>;
