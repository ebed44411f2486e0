/**
 * What the simulation needs to know about one pending pod, computed once: requests, node
 * requirements (nodeSelector, required node affinity terms, volume topology), preferences,
 * tolerations, topology spread, pod (anti-)affinity and host ports; plus Karpenter's
 * relaxation of preferences (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/preferences.go): preferences start as if required
 * and are dropped one at a time when the pod cannot be placed.
 */
import type { LabelSelector, NodeSelectorTerm, Pod, Toleration, TopologySpreadConstraint } from '../api/kube.ts';
import type { Resources } from '../api/quantity.ts';
import { Requirements } from '../api/requirements.ts';
import { podRequests } from './resources.ts';
import { withMatchLabelKeys } from './selectors.ts';
import { termNamespaces, type NamespaceScope } from './topology.ts';

/** One alternative of required node affinity (terms are ORed), with the nodeSelector folded in. */
export interface NodeTerm {
  requirements: Requirements;
  /** From `matchFields: metadata.name In [...]`: only these existing nodes qualify; never a new node. */
  nodeNames?: ReadonlySet<string>;
  /** Why no new node can satisfy the term (unsupported matchFields). */
  unsupported?: string;
}

/** A topology spread constraint, resolved for this pod. */
export interface SpreadSpec {
  key: string;
  maxSkew: number;
  minDomains?: number;
  selector: LabelSelector | undefined;
  namespaces: NamespaceScope;
  /** nodeAffinityPolicy Honor (default): only nodes matching the pod's node affinity count. */
  honorAffinity: boolean;
  /** nodeTaintsPolicy Honor (default Ignore): only nodes whose taints the pod tolerates count. */
  honorTaints: boolean;
}

/** A pod (anti-)affinity term, resolved for this pod. */
export interface AffinitySpec {
  key: string;
  selector: LabelSelector | undefined;
  namespaces: NamespaceScope;
}

/** `namespace/name`. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
}

function termToNodeTerm(term: NodeSelectorTerm, base: Requirements): NodeTerm {
  const reqs = base.intersect(Requirements.fromSpecs(term.matchExpressions ?? []));
  const out: NodeTerm = { requirements: reqs };
  for (const f of term.matchFields ?? []) {
    if (f.key === 'metadata.name' && f.operator === 'In') out.nodeNames = new Set(f.values ?? []);
    else out.unsupported = `matchFields ${f.key} ${f.operator} is not supported`;
  }
  if (out.nodeNames) out.unsupported ??= `node affinity selects existing node(s) by name (${[...out.nodeNames].join(', ')})`;
  return out;
}

/**
 * The pod's required node terms combined with its volumes' topology alternatives
 * (shared/scheduling/volumes.ts): every term with every alternative, ORed, in term order. Pairs that
 * can never hold (a key with no value both allow) are dropped while another pair remains, so the
 * first term in force is one that can; with none left the pairs stay and the pod fails with the
 * conflict as its reason. No alternatives: the terms unchanged.
 */
function withVolumeAlternatives(terms: NodeTerm[], alternatives: readonly Requirements[]): NodeTerm[] {
  if (alternatives.length === 0) return terms;
  const all = terms.flatMap((t) => alternatives.map((a) => ({ ...t, requirements: t.requirements.intersect(a) })));
  const possible = all.filter((t) => t.requirements.all().every((r) => !r.isEmpty()));
  return possible.length > 0 ? possible : all;
}

/** Host ports a pod asks for, as `protocol/hostIP/port` strings. */
export function hostPorts(pod: Pod): string[] {
  const out: string[] = [];
  for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])]) {
    for (const p of c.ports ?? []) {
      if (p.hostPort) out.push(`${p.protocol ?? 'TCP'}/${p.hostIP && p.hostIP !== '0.0.0.0' ? p.hostIP : '*'}/${p.hostPort}`);
    }
  }
  return out;
}

/** Whether two host port strings conflict (same protocol and port, and either address is the wildcard or both are equal). */
export function portsConflict(a: string, b: string): boolean {
  const [pa, ia, na] = a.split('/');
  const [pb, ib, nb] = b.split('/');
  return pa === pb && na === nb && (ia === '*' || ib === '*' || ia === ib);
}

/** `app=web,tier In (a,b)`: a label selector in one short line (`everything` when empty). */
function formatSelector(sel: LabelSelector | undefined): string {
  const parts = [
    ...Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(sel?.matchExpressions ?? []).map((e) =>
      e.values?.length ? `${e.key} ${e.operator} (${e.values.join(',')})` : `${e.operator === 'DoesNotExist' ? '!' : ''}${e.key}`,
    ),
  ];
  return parts.length > 0 ? parts.join(',') : 'everything';
}

/** One relaxation step ({@link PodInfo.relax}). */
export interface Relaxation {
  /** What was dropped, e.g. `preferred pod anti-affinity (topologyKey kubernetes.io/hostname, app=web)`. */
  what: string;
  /**
   * False for moving on to the next required node-affinity term: the pod still meets a term it
   * requires, so no preference is given up.
   */
  preference: boolean;
}

/** Pending pod as the simulation sees it. Mutable only through {@link PodInfo.relax}. */
export class PodInfo {
  readonly key: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /** Canonical units, including `pods: 1`. */
  readonly requests: Resources;
  readonly priority: number;
  readonly hostPorts: string[];
  /** Alternatives of required node affinity; the first is in force. */
  requiredTerms: NodeTerm[];
  /** Preferred node affinity terms, heaviest first; the first is in force. */
  preferredNode: Requirements[];
  tolerations: Toleration[];
  /** After the last relaxation step: PreferNoSchedule taints are tolerated. */
  toleratePreferNoSchedule = false;
  spreads: SpreadSpec[];
  /** ScheduleAnyway spreads, in force until relaxed. */
  spreadsAnyway: SpreadSpec[];
  affinity: AffinitySpec[];
  preferredAffinity: AffinitySpec[];
  anti: AffinitySpec[];
  preferredAnti: AffinitySpec[];
  /** How many relaxation steps were taken (part of the signature). */
  relaxations = 0;
  /** Text identical for pods that schedule identically (same spec, namespace and labels). */
  private readonly baseSignature: string;
  private cachedRequirements?: Requirements;

  /**
   * @param cache shared between the pods of one simulation: pods with identical scheduling
   *   fields reuse one parsed copy of their constraints (it is never mutated, only replaced).
   */
  constructor(
    readonly pod: Pod,
    volumeAlternatives: readonly Requirements[] = [],
    ignorePreferences = false,
    cache?: Map<string, PodInfo>,
  ) {
    const spec = pod.spec;
    this.key = podKey(pod);
    this.namespace = pod.metadata.namespace ?? 'default';
    this.labels = pod.metadata.labels ?? {};
    this.requests = podRequests(spec);
    this.priority = spec.priority ?? 0;
    this.hostPorts = hostPorts(pod);
    this.tolerations = spec.tolerations ?? [];
    this.baseSignature = JSON.stringify([
      this.namespace,
      this.labels,
      spec.nodeSelector,
      spec.affinity,
      spec.tolerations,
      spec.topologySpreadConstraints,
      this.requests,
      this.hostPorts,
      // Exact, not toString(): an empty In and a DoesNotExist print alike.
      volumeAlternatives.map((reqs) => reqs.all().map((r) => [r.key, r.complement, [...r.values], r.allowAbsent, r.greaterThan, r.lessThan])),
      this.priority,
      ignorePreferences,
    ]);
    const same = cache?.get(this.baseSignature);
    if (same) {
      this.requiredTerms = same.requiredTerms;
      this.preferredNode = same.preferredNode;
      this.spreads = same.spreads;
      this.spreadsAnyway = same.spreadsAnyway;
      this.affinity = same.affinity;
      this.anti = same.anti;
      this.preferredAffinity = same.preferredAffinity;
      this.preferredAnti = same.preferredAnti;
      this.nodeFilterTerms = same.nodeFilterTerms;
      this.unrelaxed = same.unrelaxed;
      return;
    }
    cache?.set(this.baseSignature, this);

    const base = Requirements.fromLabels(spec.nodeSelector ?? {});
    const na = spec.affinity?.nodeAffinity;
    const terms = na?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const podTerms = terms.length > 0 ? terms.map((t) => termToNodeTerm(t, base)) : [{ requirements: base }];
    this.requiredTerms = withVolumeAlternatives(podTerms, volumeAlternatives);
    this.preferredNode = [...(na?.preferredDuringSchedulingIgnoredDuringExecution ?? [])]
      .sort((a, b) => b.weight - a.weight)
      .map((p) => Requirements.fromSpecs(p.preference.matchExpressions ?? []));

    const nodeFilterTerms = terms.length > 0 || spec.nodeSelector ? this.requiredTerms.map((t) => t.requirements) : undefined;
    const spread = (c: TopologySpreadConstraint): SpreadSpec => ({
      key: c.topologyKey,
      maxSkew: c.maxSkew,
      minDomains: c.minDomains,
      selector: withMatchLabelKeys(c.labelSelector, c.matchLabelKeys, this.labels),
      namespaces: new Set([this.namespace]),
      honorAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor' && nodeFilterTerms !== undefined,
      honorTaints: c.nodeTaintsPolicy === 'Honor',
    });
    const tscs = spec.topologySpreadConstraints ?? [];
    this.spreads = tscs.filter((c) => c.whenUnsatisfiable !== 'ScheduleAnyway').map(spread);
    this.spreadsAnyway = tscs.filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway').map(spread);
    this.nodeFilterTerms = nodeFilterTerms;

    const term = (t: {
      labelSelector?: LabelSelector;
      namespaces?: string[];
      namespaceSelector?: LabelSelector;
      topologyKey: string;
      matchLabelKeys?: string[];
    }): AffinitySpec => ({
      key: t.topologyKey,
      selector: withMatchLabelKeys(t.labelSelector, t.matchLabelKeys, this.labels),
      namespaces: termNamespaces(pod, t.namespaces, t.namespaceSelector),
    });
    const pa = spec.affinity?.podAffinity;
    const paa = spec.affinity?.podAntiAffinity;
    this.affinity = (pa?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map(term);
    this.anti = (paa?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map(term);
    this.preferredAffinity = [...(pa?.preferredDuringSchedulingIgnoredDuringExecution ?? [])]
      .sort((a, b) => b.weight - a.weight)
      .map((w) => term(w.podAffinityTerm));
    this.preferredAnti = [...(paa?.preferredDuringSchedulingIgnoredDuringExecution ?? [])]
      .sort((a, b) => b.weight - a.weight)
      .map((w) => term(w.podAffinityTerm));

    if (ignorePreferences) {
      this.preferredNode = [];
      this.preferredAffinity = [];
      this.preferredAnti = [];
      this.spreadsAnyway = [];
    }
    this.unrelaxed = {
      requiredTerms: this.requiredTerms,
      preferredNode: this.preferredNode,
      spreadsAnyway: this.spreadsAnyway,
      preferredAffinity: this.preferredAffinity,
      preferredAnti: this.preferredAnti,
    };
  }

  /** The constraints as the pod spec gives them, before any relaxation ({@link reset}). */
  private readonly unrelaxed: Pick<PodInfo, 'requiredTerms' | 'preferredNode' | 'spreadsAnyway' | 'preferredAffinity' | 'preferredAnti'>;

  /**
   * Undoes every relaxation: a pod that failed even fully relaxed is retried later with its
   * preferences again, as Karpenter requeues the pod as written (KC scheduler.go `Solve` relaxes a
   * copy and pushes the original back).
   */
  reset(): void {
    if (this.relaxations === 0) return;
    Object.assign(this, this.unrelaxed);
    this.toleratePreferNoSchedule = false;
    this.relaxations = 0;
    this.cachedRequirements = undefined;
  }

  /** The pod's node requirements used as spread node filter (nodeAffinityPolicy Honor); undefined when it has none. */
  readonly nodeFilterTerms: Requirements[] | undefined;

  /** Identical for pods that behave identically at the current relaxation step. */
  get signature(): string {
    if (this.cachedSignature?.[0] !== this.relaxations) this.cachedSignature = [this.relaxations, `${this.relaxations}|${this.baseSignature}`];
    return this.cachedSignature[1];
  }
  private cachedSignature?: [number, string];

  /** Node requirements in force: the first required term ∩ the heaviest remaining preferred term. */
  get requirements(): Requirements {
    if (!this.cachedRequirements) {
      const req = this.requiredTerms[0].requirements;
      this.cachedRequirements = this.preferredNode.length > 0 ? req.intersect(this.preferredNode[0]) : req;
      this.cachedHasRequirements = this.cachedRequirements.keys().length > 0;
    }
    return this.cachedRequirements;
  }
  private cachedHasRequirements = false;

  /**
   * The node requirements in force without the preferred node affinity: the domains the pod's
   * required pod affinity may look for matching pods in. A preference must not hide a domain where
   * such pods already run (KC scheduler.go `updateCachedPodData` StrictRequirements, passed to
   * topology as the pod's domains by nodeclaim.go and existingnode.go).
   */
  get strictRequirements(): Requirements {
    return this.requiredTerms[0].requirements;
  }

  /** Whether the pod has node requirements in force. */
  get hasRequirements(): boolean {
    void this.requirements;
    return this.cachedHasRequirements;
  }

  /** Whether any spread or pod (anti-)affinity is in force. */
  get hasTopology(): boolean {
    return (
      this.spreads.length + this.spreadsAnyway.length + this.affinity.length + this.preferredAffinity.length + this.anti.length + this.preferredAnti.length > 0
    );
  }

  /** The node term in force. */
  get nodeTerm(): NodeTerm {
    return this.requiredTerms[0];
  }

  /** All spreads in force (required, then ScheduleAnyway ones not relaxed yet). */
  get activeSpreads(): SpreadSpec[] {
    return this.spreadsAnyway.length > 0 ? [...this.spreads, ...this.spreadsAnyway] : this.spreads;
  }

  get activeAffinity(): AffinitySpec[] {
    return this.preferredAffinity.length > 0 ? [...this.affinity, ...this.preferredAffinity] : this.affinity;
  }

  get activeAnti(): AffinitySpec[] {
    return this.preferredAnti.length > 0 ? [...this.anti, ...this.preferredAnti] : this.anti;
  }

  /** Whether any preference is still in force (placement might need a relaxation step). */
  get hasPreferences(): boolean {
    return (
      this.requiredTerms.length > 1 ||
      this.preferredAffinity.length > 0 ||
      this.preferredAnti.length > 0 ||
      this.preferredNode.length > 0 ||
      this.spreadsAnyway.length > 0 ||
      !this.toleratePreferNoSchedule
    );
  }

  /**
   * Drops one preference, in Karpenter's order: next required node term, heaviest preferred pod
   * affinity, heaviest preferred anti-affinity, heaviest preferred node affinity, a
   * ScheduleAnyway spread, then PreferNoSchedule taints become tolerated.
   * @returns what was relaxed, or undefined when nothing is left to relax.
   */
  relax(): Relaxation | undefined {
    let r: Relaxation | undefined;
    const term = (kind: string, a: AffinitySpec) => ({ what: `${kind} (topologyKey ${a.key}, ${formatSelector(a.selector)})`, preference: true });
    if (this.requiredTerms.length > 1) {
      this.requiredTerms = this.requiredTerms.slice(1);
      r = { what: 'required node affinity term', preference: false };
    } else if (this.preferredAffinity.length > 0) {
      r = term('preferred pod affinity', this.preferredAffinity[0]);
      this.preferredAffinity = this.preferredAffinity.slice(1);
    } else if (this.preferredAnti.length > 0) {
      r = term('preferred pod anti-affinity', this.preferredAnti[0]);
      this.preferredAnti = this.preferredAnti.slice(1);
    } else if (this.preferredNode.length > 0) {
      r = { what: `preferred node affinity (${this.preferredNode[0].toString()})`, preference: true };
      this.preferredNode = this.preferredNode.slice(1);
    } else if (this.spreadsAnyway.length > 0) {
      const s = this.spreadsAnyway[0];
      r = { what: `ScheduleAnyway topology spread (topologyKey ${s.key}, maxSkew ${s.maxSkew}, ${formatSelector(s.selector)})`, preference: true };
      this.spreadsAnyway = this.spreadsAnyway.slice(1);
    } else if (!this.toleratePreferNoSchedule) {
      this.toleratePreferNoSchedule = true;
      r = { what: 'PreferNoSchedule taints (now tolerated)', preference: true };
    }
    if (r) {
      this.relaxations++;
      this.cachedRequirements = undefined;
    }
    return r;
  }
}
