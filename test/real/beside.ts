/**
 * Who touched whose nodes, from the API server's audit log (test/real/control-plane/cluster.ts
 * `auditWrites`): each write to a Node, a pod (delete, eviction), a NodeClaim or a NodePool is
 * attributed to its sender (nodefleet's identities, Karpenter's ServiceAccount, anyone else) and to
 * the owner of its target (the NodePool it belongs to, as the watch cache saw it). Beside each
 * other, neither autoscaler may write to an object of the other's NodePools.
 */
import { existsSync, readFileSync } from 'node:fs';

export type Side = 'nodefleet' | 'karpenter';

/** One audited write: sender, verb, target. */
export interface AuditWrite {
  user: string;
  verb: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  code?: number;
  at: string;
}

/** The audited writes of an audit log (JSON lines); nothing when there is no file. */
export function readAuditWrites(file: string | undefined): AuditWrite[] {
  if (!file || !existsSync(file)) return [];
  const out: AuditWrite[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as {
      verb?: string;
      user?: { username?: string };
      objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
      responseStatus?: { code?: number };
      stageTimestamp?: string;
    };
    if (!e.objectRef?.resource || !e.verb || e.verb === 'get' || e.verb === 'list' || e.verb === 'watch') continue;
    out.push({
      user: e.user?.username ?? '',
      verb: e.verb,
      resource: e.objectRef.resource,
      ...(e.objectRef.subresource ? { subresource: e.objectRef.subresource } : {}),
      ...(e.objectRef.namespace ? { namespace: e.objectRef.namespace } : {}),
      ...(e.objectRef.name ? { name: e.objectRef.name } : {}),
      ...(e.responseStatus?.code !== undefined ? { code: e.responseStatus.code } : {}),
      at: e.stageTimestamp ?? '',
    });
  }
  return out;
}

/**
 * The owner of every Node, NodeClaim, NodePool and pod the cluster showed, by NodePool: a Node or
 * NodeClaim by its `karpenter.sh/nodepool` label, a pod by the Node it was bound to (its last one).
 */
export class Owners {
  private readonly nodes = new Map<string, string>();
  private readonly nodeClaims = new Map<string, string>();
  private readonly podNodes = new Map<string, string>();

  /** Records an object the cluster showed (any event type). */
  see(kind: string, o: { metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: { nodeName?: string } }): void {
    const pool = o.metadata.labels?.['karpenter.sh/nodepool'];
    if (kind === 'Node' && pool) this.nodes.set(o.metadata.name, pool);
    if (kind === 'NodeClaim' && pool) this.nodeClaims.set(o.metadata.name, pool);
    if (kind === 'Pod' && o.spec?.nodeName) this.podNodes.set(`${o.metadata.namespace}/${o.metadata.name}`, o.spec.nodeName);
  }

  /** The NodePool a write's target belongs to; undefined when it is none's (or was never seen). */
  poolOf(w: AuditWrite): string | undefined {
    if (!w.name) return undefined;
    if (w.resource === 'nodes') return this.nodes.get(w.name);
    if (w.resource === 'nodeclaims') return this.nodeClaims.get(w.name);
    if (w.resource === 'nodepools') return w.name;
    if (w.resource === 'pods') {
      const node = this.podNodes.get(`${w.namespace}/${w.name}`);
      return node ? this.nodes.get(node) : undefined;
    }
    return undefined;
  }
}

/** A write of one side to an object of the other's NodePools. */
export interface Trespass {
  by: Side;
  write: AuditWrite;
  pool: string;
}

export interface BesideVerdict {
  /** Writes of each side to objects of the other's NodePools (must be none). */
  trespasses: Trespass[];
  /** Writes of each side to objects of its own NodePools, by resource (the audit sees each side at work). */
  own: Record<Side, Record<string, number>>;
}

/**
 * Attributes each write: `sides` names each side's users and NodePools. A create is not a touch
 * (except an eviction, which is a create on a pod's subresource).
 */
export function besideVerdict(writes: AuditWrite[], owners: Owners, sides: Record<Side, { users: Set<string>; pools: Set<string> }>): BesideVerdict {
  const trespasses: Trespass[] = [];
  const own: BesideVerdict['own'] = { nodefleet: {}, karpenter: {} };
  for (const w of writes) {
    if (w.verb === 'create' && w.subresource !== 'eviction') continue;
    const by = (Object.keys(sides) as Side[]).find((s) => sides[s].users.has(w.user));
    if (!by) continue;
    const pool = owners.poolOf(w);
    if (pool === undefined) continue;
    const other: Side = by === 'nodefleet' ? 'karpenter' : 'nodefleet';
    const key = w.subresource ? `${w.resource}/${w.subresource}` : w.resource;
    if (sides[other].pools.has(pool)) trespasses.push({ by, write: w, pool });
    else if (sides[by].pools.has(pool)) own[by][key] = (own[by][key] ?? 0) + 1;
  }
  return { trespasses, own };
}
