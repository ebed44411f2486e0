/**
 * The cluster view: the compact, versioned picture of a cluster's nodes and bound pods that the
 * in-cluster agent keeps from its watches and publishes (gzip JSON, one object per cluster), and
 * that provisioning and disruption read instead of listing every pod and node (docs/cluster-state.md).
 *
 * Shape (schema version {@link ClusterViewSchemaVersion}):
 * ```
 * { schemaVersion: 1, cluster, agent: "<start RFC 3339>", sequence: 42,
 *   generatedAt: "RFC 3339: the agent's watches were current at this time",
 *   nodes: [compactNode(...)],                       // labels, taints, unschedulable, capacity, allocatable, conditions
 *   templates: [{ metadata: { namespace, labels?, annotations?, ownerReferences? }, spec }],
 *   pods: [[name, template, nodeName, phase, startTime?, creationTimestamp?, deletionTimestamp?, readyTime?], ...] }
 * ```
 * A template is what the pods of one ReplicaSet (or DaemonSet, Job, ...) share: the scheduling
 * fields of {@link compactPod} without name and node. Pods are rows pointing at one, so a pod costs
 * its name, node and times (~100 bytes), not its spec. Only bound, non-terminal pods are kept:
 * pending pods are read live by whoever needs them.
 *
 * Pure: no I/O, no clock. The agent builds it ({@link ClusterViewBuilder}); readers call
 * {@link parseClusterView} and {@link clusterOfView}.
 */
import { z } from 'zod';
import { AgentNodeSchema, AgentPodSchema, compactNode, compactPod, toNode, type AgentPod } from './agent-events.ts';
import type { Node, Pod } from './kube.ts';

export const ClusterViewSchemaVersion = 1;

/** The agent republishes an unchanged view this often (its "still current" signal; readers' bound: MaxViewAgeSeconds, 60 s). */
export const ViewHeartbeatSeconds = 20;

/** The shared part of a group of pods (compactPod without name, uid, times and node). */
export interface PodTemplate {
  metadata: {
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: AgentPod['metadata']['ownerReferences'];
  };
  spec: AgentPod['spec'];
}

/**
 * `[name, template index, nodeName, phase, startTime, creationTimestamp, deletionTimestamp, readyTime]`
 * ('' = absent; readyTime: the Ready=True condition's lastTransitionTime, for the pods startup
 * metric; a row of 7 from an older agent has none).
 */
export type PodRow = [string, number, string, string, string, string, string, string?];

export interface ClusterView {
  schemaVersion: typeof ClusterViewSchemaVersion;
  cluster: string;
  /** When the publishing agent started (RFC 3339): `(agent, sequence)` orders views. */
  agent: string;
  /** Increases with every publish of one agent. */
  sequence: number;
  /** RFC 3339: the time at which this picture was current (the agent's clock). */
  generatedAt: string;
  nodes: ReturnType<typeof compactNode>[];
  templates: PodTemplate[];
  pods: PodRow[];
}

/** A bound pod as the view keeps it: a template plus its own fields. */
export interface ViewPod {
  name: string;
  template: PodTemplate;
  /** JSON of the template: pods with equal keys share one template. */
  templateKey: string;
  nodeName: string;
  phase: string;
  startTime: string;
  creationTimestamp: string;
  deletionTimestamp: string;
  readyTime: string;
}

/** Is the pod one the view keeps (bound to a node, not Succeeded / Failed)? */
export function inView(p: Pod): boolean {
  return !!p.spec?.nodeName && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
}

/** The view's form of a pod, or undefined when the view does not keep it ({@link inView}). */
export function toViewPod(p: Pod): ViewPod | undefined {
  if (!inView(p)) return undefined;
  const c = compactPod(p);
  const { name: _n, uid: _u, creationTimestamp: _c, namespace, ...meta } = c.metadata;
  const template: PodTemplate = { metadata: { namespace, ...meta }, spec: c.spec };
  return {
    name: p.metadata.name,
    template,
    templateKey: JSON.stringify(template),
    nodeName: p.spec.nodeName!,
    phase: p.status?.phase ?? '',
    startTime: p.status?.startTime ?? '',
    creationTimestamp: p.metadata.creationTimestamp ?? '',
    deletionTimestamp: p.metadata.deletionTimestamp ?? '',
    readyTime: p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True')?.lastTransitionTime ?? '',
  };
}

/**
 * Keeps the current nodes and bound pods from watch events and renders the view. Templates are
 * reference-counted, so memory follows the number of distinct templates plus one small record per
 * pod. Not thread-safe (one agent event loop).
 */
export class ClusterViewBuilder {
  private readonly nodes = new Map<string, ReturnType<typeof compactNode>>();
  /** Bound pods by namespace/name, interned: their `template` and `templateKey` are their template's. */
  private readonly pods = new Map<string, ViewPod>();
  private readonly templates = new Map<string, { template: PodTemplate; key: string; refs: number }>();
  /** Bumped on every change that alters the rendered view. */
  changes = 0;

  get podCount(): number {
    return this.pods.size;
  }

  get templateCount(): number {
    return this.templates.size;
  }

  /**
   * The same pod with the template object and key every pod of its template shares (call on each
   * pod as it is read, so a list of 100 000 pods holds one copy per template, not per pod).
   */
  intern(p: ViewPod): ViewPod {
    let tpl = this.templates.get(p.templateKey);
    if (!tpl) this.templates.set(p.templateKey, (tpl = { template: p.template, key: p.templateKey, refs: 0 }));
    return p.template === tpl.template && p.templateKey === tpl.key ? p : { ...p, template: tpl.template, templateKey: tpl.key };
  }

  /**
   * Replaces every pod (a full list). `key` is namespace/name; an undefined pod is listed but not
   * kept (the same as absent). The pods are kept as given once interned: the caller's objects,
   * not copies (the agent's list holds 100 000 of them).
   */
  syncPods(items: Iterable<[string, ViewPod | undefined]>): void {
    // Only a re-list can leave pods that are no longer listed; the first list needs no key set.
    const seen = this.pods.size > 0 ? new Set<string>() : undefined;
    for (const [key, p] of items) {
      if (p) seen?.add(key);
      this.setPod(key, p);
    }
    if (seen) for (const key of [...this.pods.keys()]) if (!seen.has(key)) this.setPod(key, undefined);
  }

  /** One pod changed (`undefined`: gone, or no longer kept). */
  setPod(key: string, p: ViewPod | undefined): void {
    const prev = this.pods.get(key);
    if (!p) {
      if (!prev) return;
      this.pods.delete(key);
      this.release(prev.templateKey);
      this.changes++;
      return;
    }
    if (prev && prev.templateKey === p.templateKey && sameOwn(prev, p)) return;
    const kept = this.intern(p);
    this.templates.get(kept.templateKey)!.refs++;
    if (prev) this.release(prev.templateKey);
    this.pods.set(key, kept);
    this.changes++;
  }

  private release(templateKey: string): void {
    const tpl = this.templates.get(templateKey);
    if (tpl && --tpl.refs <= 0) this.templates.delete(templateKey);
  }

  /** Replaces every node (a full list). */
  syncNodes(items: Iterable<[string, Node]>): void {
    const seen = new Set<string>();
    for (const [name, n] of items) {
      seen.add(name);
      this.setNode(name, n);
    }
    for (const name of [...this.nodes.keys()]) if (!seen.has(name)) this.setNode(name, undefined);
  }

  /** One node changed (`undefined`: deleted). */
  setNode(name: string, n: Node | undefined): void {
    if (!n) {
      if (this.nodes.delete(name)) this.changes++;
      return;
    }
    const c = compactNode(n);
    const prev = this.nodes.get(name);
    if (prev && JSON.stringify(prev) === JSON.stringify(c)) return;
    this.nodes.set(name, c);
    this.changes++;
  }

  /**
   * The view as JSON text in pieces of about `chunkChars` characters (a piece ends after the
   * node, row or template that reaches the size), so the publisher can compress it piece by piece
   * and a 100 000-pod view (~20 MB of JSON) never exists as one string.
   * `JSON.parse(pieces.join(''))` equals {@link render} (pods before templates; key order aside).
   * The nodes and pods are those of the first piece's moment: changes made while the pieces are
   * consumed (asynchronously, between pieces) do not show (kept pods and nodes are replaced on
   * change, never modified, so holding their references is a snapshot).
   */
  *renderJson(meta: { cluster: string; agent: string; sequence: number; generatedAt: string }, chunkChars = 1 << 20): Generator<string> {
    for (const [k, t] of this.templates) if (t.refs <= 0) this.templates.delete(k); // interned, never kept
    const nodes = [...this.nodes.values()];
    const pods = [...this.pods.values()];
    const head = JSON.stringify({ schemaVersion: ClusterViewSchemaVersion, ...meta, nodes: [] });
    let buf = head.slice(0, -2); // up to `"nodes":[`
    for (let n = 0; n < nodes.length; n++) {
      buf += (n === 0 ? '' : ',') + JSON.stringify(nodes[n]);
      if (buf.length >= chunkChars) {
        yield buf;
        buf = '';
      }
    }
    buf += '],"pods":[';
    const index = new Map<string, number>();
    const templates: PodTemplate[] = [];
    for (let p = 0; p < pods.length; p++) {
      const pod = pods[p];
      let i = index.get(pod.templateKey);
      if (i === undefined) {
        i = templates.length;
        index.set(pod.templateKey, i);
        templates.push(pod.template);
      }
      const row: PodRow = [pod.name, i, pod.nodeName, pod.phase, pod.startTime, pod.creationTimestamp, pod.deletionTimestamp, pod.readyTime];
      buf += (p === 0 ? '' : ',') + JSON.stringify(row);
      if (buf.length >= chunkChars) {
        yield buf;
        buf = '';
      }
    }
    buf += '],"templates":[';
    for (let t = 0; t < templates.length; t++) {
      buf += (t === 0 ? '' : ',') + JSON.stringify(templates[t]);
      if (buf.length >= chunkChars) {
        yield buf;
        buf = '';
      }
    }
    yield `${buf}]}`;
  }

  /** The view as of now (`generatedAt`), numbered `sequence` of agent `agent`. */
  render(meta: { cluster: string; agent: string; sequence: number; generatedAt: string }): ClusterView {
    for (const [k, t] of this.templates) if (t.refs <= 0) this.templates.delete(k); // interned, never kept
    const index = new Map<string, number>();
    const templates: PodTemplate[] = [];
    const pods: PodRow[] = [];
    for (const pod of this.pods.values()) {
      let i = index.get(pod.templateKey);
      if (i === undefined) {
        i = templates.length;
        index.set(pod.templateKey, i);
        templates.push(pod.template);
      }
      pods.push([pod.name, i, pod.nodeName, pod.phase, pod.startTime, pod.creationTimestamp, pod.deletionTimestamp, pod.readyTime]);
    }
    return { schemaVersion: ClusterViewSchemaVersion, ...meta, nodes: [...this.nodes.values()], templates, pods };
  }
}

function sameOwn(a: ViewPod, b: ViewPod): boolean {
  return (
    a.name === b.name &&
    a.nodeName === b.nodeName &&
    a.phase === b.phase &&
    a.startTime === b.startTime &&
    a.creationTimestamp === b.creationTimestamp &&
    a.deletionTimestamp === b.deletionTimestamp &&
    a.readyTime === b.readyTime
  );
}

/** A view that cannot be read (wrong schema version, wrong cluster, malformed). */
export class ClusterViewError extends Error {
  override name = 'ClusterViewError';
}

/** A view object larger than {@link MaxViewGzipBytes} (ClusterViewStore `get` refuses it unread). */
export class ClusterViewTooLargeError extends ClusterViewError {
  override name = 'ClusterViewTooLargeError';
}

/**
 * Largest view object readers accept (gzip bytes; `ClusterViewStore.get` refuses a larger one
 * before reading it). The scale bench's 100 000-pod view (5 000 nodes, 482 templates) is
 * 1 039 111 bytes: 16× headroom (test/bench/scale/view-size.ts).
 */
export const MaxViewGzipBytes = 16 * 1024 * 1024;

/**
 * Largest decompressed view readers accept (JSON bytes; gunzip stops there): the 100 000-pod view
 * is 20 550 035 bytes, ×6.5 headroom (room for one template per pod, as StatefulSet pods with
 * their own pod-name label make). A 1 MB object inflating to 1 GiB is refused, not parsed.
 */
export const MaxViewJsonBytes = 128 * 1024 * 1024;

const TemplateSchema = z.object({
  metadata: AgentPodSchema.shape.metadata.pick({ namespace: true, labels: true, annotations: true, ownerReferences: true }),
  spec: AgentPodSchema.shape.spec,
});

/** `path: reason` of a zod failure's first issue. */
function firstIssue(err: z.ZodError): string {
  const i = err.issues[0];
  return `${i.path.join('.') || '(root)'}: ${i.message}`;
}

/**
 * Checks a decoded view entry by entry: the header; every node against the agent's node schema
 * and every template against its pod schema (shared/api/agent-events.ts: the same check as the
 * agent's events get); every pod row strictly (7 or 8 strings but the template index, an integer in
 * range; name and node non-empty) by hand, as a zod tuple per row costs more at 100 000 rows.
 * The view is a cache (DESIGN.md "Trust"): a reader that gets this error reads the cluster live.
 * @throws ClusterViewError naming the entry and field.
 */
export function parseClusterView(raw: unknown, cluster: string): ClusterView {
  const v = raw as Partial<ClusterView> | null;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ClusterViewError('cluster view: not an object');
  if (v.schemaVersion !== ClusterViewSchemaVersion)
    throw new ClusterViewError(`cluster view: schemaVersion ${String(v.schemaVersion)} is not ${ClusterViewSchemaVersion}`);
  if (v.cluster !== cluster) throw new ClusterViewError(`cluster view: cluster "${String(v.cluster)}" is not "${cluster}"`);
  if (typeof v.generatedAt !== 'string' || !Number.isFinite(Date.parse(v.generatedAt)))
    throw new ClusterViewError('cluster view: generatedAt is not an RFC 3339 time');
  if (typeof v.sequence !== 'number' || !Number.isFinite(v.sequence) || typeof v.agent !== 'string')
    throw new ClusterViewError('cluster view: agent / sequence missing');
  if (!Array.isArray(v.nodes) || !Array.isArray(v.templates) || !Array.isArray(v.pods))
    throw new ClusterViewError('cluster view: nodes, templates and pods must be arrays');
  for (let i = 0; i < v.nodes.length; i++) {
    const r = AgentNodeSchema.safeParse(v.nodes[i]);
    if (!r.success) throw new ClusterViewError(`cluster view: nodes[${i}].${firstIssue(r.error)}`);
  }
  for (let i = 0; i < v.templates.length; i++) {
    const r = TemplateSchema.safeParse(v.templates[i]);
    if (!r.success) throw new ClusterViewError(`cluster view: templates[${i}].${firstIssue(r.error)}`);
  }
  const n = v.templates.length;
  for (let i = 0; i < v.pods.length; i++) {
    const row = v.pods[i] as unknown[];
    if (!isPodRow(row, n))
      throw new ClusterViewError(
        `cluster view: pods[${i}] ${JSON.stringify(row)?.slice(0, 80)} is not [name, template index < ${n}, nodeName, phase, startTime, creationTimestamp, deletionTimestamp, readyTime?]`,
      );
  }
  return v as ClusterView;
}

function isPodRow(row: unknown[], templates: number): boolean {
  if (!Array.isArray(row) || (row.length !== 7 && row.length !== 8)) return false;
  if (row.length === 8 && typeof row[7] !== 'string') return false;
  const t = row[1];
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t >= templates) return false;
  if (typeof row[0] !== 'string' || row[0] === '' || typeof row[2] !== 'string' || row[2] === '') return false;
  return typeof row[3] === 'string' && typeof row[4] === 'string' && typeof row[5] === 'string' && typeof row[6] === 'string';
}

/**
 * The view's nodes and pods in the Kubernetes shapes the scheduler and disruption take. Pods of
 * one template share its label, owner and spec objects (read-only, as everywhere downstream).
 */
export function clusterOfView(v: ClusterView): { nodes: Node[]; pods: Pod[] } {
  const nodes = v.nodes.map(toNode);
  const pods: Pod[] = new Array(v.pods.length);
  for (let i = 0; i < v.pods.length; i++) {
    const [name, t, nodeName, phase, startTime, creationTimestamp, deletionTimestamp, readyTime] = v.pods[i];
    const tpl = v.templates[t];
    pods[i] = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...(tpl.metadata as Pod['metadata']),
        name,
        ...(creationTimestamp ? { creationTimestamp } : {}),
        ...(deletionTimestamp ? { deletionTimestamp } : {}),
      },
      spec: { ...(tpl.spec as unknown as Pod['spec']), nodeName },
      status: {
        ...(phase ? { phase } : {}),
        ...(startTime ? { startTime } : {}),
        ...(readyTime ? { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: readyTime }] } : {}),
      },
    };
  }
  return { nodes, pods };
}

/** Seconds between the view's `generatedAt` and `now` (negative when the agent's clock is ahead). */
export function viewAgeSeconds(v: Pick<ClusterView, 'generatedAt'>, now: Date): number {
  return (now.getTime() - Date.parse(v.generatedAt)) / 1000;
}
