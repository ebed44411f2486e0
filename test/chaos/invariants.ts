/**
 * The promises a chaos run checks, every {@link CheckEverySeconds} of virtual time and at the end.
 * Everything is read from the stand-ins (EC2 instances, the cluster's nodes, pods and PDBs, the
 * DynamoDB table, the state machines' executions, the bus), never from nodefleet's own counters.
 *
 * Bounds (virtual time) and why — each is the product's own constant plus {@link GcPassesAllowed}
 * gc periods (one pass may be lost to an injected crash or throttling) and one check period:
 * - orphan instance: {@link OrphanBoundSeconds} = the launch grace gc gives a new instance
 *   (OrphanInstanceGraceSeconds, 30 s) + three gc periods (one gc run can be lost to an injected
 *   crash or throttling, and the next one may see the claim write still settling).
 * - termination: the node and instance are gone by the execution's deadline + 2 minutes; with no
 *   deadline, something is working on it: a RUNNING termination execution for the claim, at most
 *   {@link AbandonBoundSeconds} without one (gc restarts a failed attempt within
 *   TerminationRestartBackoff.maxSeconds, 3 min). The deadline is a promise nodefleet can keep
 *   only while EC2 accepts TerminateInstances: while the harness makes EC2 refuse it
 *   (terminate-fail-*), the "+ 2 minutes" run from the end of the refusal, not from the deadline
 *   (no product can terminate an instance the cloud refuses to terminate; what it must do is
 *   keep trying and finish promptly once it can). The same holds for the orphan and node-gone
 *   bounds below: their clocks start again when a refusal ends.
 * - `karpenter.sh/disrupted` taint or budget slot without a RUNNING termination execution or
 *   disruption loop execution for that node: at most {@link DisruptionAbandonBoundSeconds}
 *   (gc reclaims a slot lease not renewed for DisruptionLeaseSeconds, 3 min, and its taint).
 * - a registered claim whose node is gone while its instance runs (a node deleted out of band):
 *   at most {@link NodeGoneBoundSeconds} before something terminates it (gc's node_gone rule,
 *   NodeGoneGraceSeconds after registration).
 * - every pod running: checked at the end, after faults stopped and the cluster settled (the run
 *   waits up to the registration timeout + 5 minutes, the longest recovery: a node that never
 *   registers is only given up after RegistrationTimeoutSeconds). "Settled" ({@link Monitor.settled})
 *   allows one kind of termination to go on running: a drain with no deadline (its NodePool sets no
 *   terminationGracePeriod) that waits for good ({@link drainWaitsForGood}: every pod it would evict
 *   is refused by a PDB and nothing in the drain changes on its own), since such a drain never
 *   makes a pod pend. A drain with no deadline that is only paced by a PDB is not settled: with
 *   maxUnavailable 1 it evicts one pod, waits until that pod's replacement runs on a new node, then
 *   evicts the next, and every eviction makes a pod Pending again. Seed 35 (one `node-delete`
 *   fault) ended that way before: an expiring pool-1 node with four app-0 pods under such a PDB
 *   was still draining one pod a minute when every pod happened to be running between two rounds
 *   (640 s); the run called itself settled, the next round (645 s) evicted the last app-0 pod, and
 *   the final check found its replacement Pending while the provisioner was launching its node.
 *   The product was right (expiration honours PDBs; no deadline, no cutoff); the harness looked
 *   too early. This does not loosen the invariant: the run only waits longer before checking.
 */
import { DisruptionLeaseSeconds, NodeGoneGraceSeconds, OrphanInstanceGraceSeconds, TerminationRestartBackoff } from '../../shared/disruption/gc.ts';
import { budgetCap } from '../../shared/disruption/budgets.ts';
import { NodePoolSchema } from '../../shared/api/nodepool.ts';
import { keys, Table } from '../../shared/api/contract.ts';
import { AsyncInvokeRetries, MaxReceiveCount } from '../../infra/local/bus.ts';
import { ScheduleIntervalSeconds, type LocalEnvironment } from '../../infra/local/environment.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { Pod } from '../../shared/api/kube.ts';
import { planDrain } from '../../shared/disruption/drain-plan.ts';
import type { ChaosInjector } from './injector.ts';
import { LocalCluster } from '../../infra/local/kube/index.ts';
import { matchesLabelSelector } from '../../infra/local/kube/selectors.ts';

/**
 * Whether the Eviction API would refuse `p` now: the embedded API server's own rule, or on the real
 * tier the controller-manager's PDB status (a running pod covered by more than one PDB, or by one
 * that allows no disruption).
 */
export function evictionRefusedBy(env: Pick<LocalEnvironment, 'cluster'>): (p: Pod) => boolean {
  if (env.cluster instanceof LocalCluster) {
    const api = env.cluster.api;
    return (p) => api.evictionRefusal(p) !== undefined;
  }
  const cluster = env.cluster;
  return (p) => {
    if (p.metadata.deletionTimestamp || p.status?.phase !== 'Running') return false;
    const pdbs = cluster
      .objects('policy/v1', 'PodDisruptionBudget', p.metadata.namespace ?? 'default')
      .filter((b) => matchesLabelSelector((b as { spec?: { selector?: never } }).spec?.selector, p.metadata.labels)) as {
      status?: { disruptionsAllowed?: number };
    }[];
    return pdbs.length > 1 || (pdbs.length === 1 && (pdbs[0].status?.disruptionsAllowed ?? 0) <= 0);
  };
}

export const CheckEverySeconds = 20;
/** gc passes a bound allows for: the one that should act, and one lost to an injected fault. */
export const GcPassesAllowed = 2;
const gcSlack = GcPassesAllowed * ScheduleIntervalSeconds + CheckEverySeconds;
export const OrphanBoundSeconds = OrphanInstanceGraceSeconds + 3 * ScheduleIntervalSeconds;
/** A terminating claim with no RUNNING execution: gc's restart backoff cap + slack (320 s). */
export const AbandonBoundSeconds = TerminationRestartBackoff.maxSeconds + gcSlack;
/** A disrupted taint / held slot with no run working on it: the slot lease + slack (320 s). */
export const DisruptionAbandonBoundSeconds = DisruptionLeaseSeconds + gcSlack;
/** A registered claim whose Node is gone while its instance runs: gc's grace + slack (170 s). */
export const NodeGoneBoundSeconds = NodeGoneGraceSeconds + gcSlack;
/** Termination deadline slack (the issue's "+ 2 minutes"). */
export const DeadlineSlackSeconds = 120;
const Voluntary = new Set(['emptiness', 'consolidation', 'drift']);

/**
 * True when a drain with no deadline cannot move on unless something outside it changes (an
 * operator edits a PDB or an annotation): the node still holds pods to drain, the drain plan has no
 * event of its own coming (a terminating pod going or turning stuck, a do-not-disrupt hold
 * expiring), and the API server would refuse the eviction of every pod the drain evicts now
 * (`refused`, the eviction subresource's PDB check). A drain refused only because a PDB allows no
 * disruption *yet* is not waiting for good once the pods it evicted are running again: then
 * `refused` answers false and the drain's next round evicts.
 * @param pods pods bound to the node
 * @param nowMs epoch ms (virtual)
 */
export function drainWaitsForGood(pods: Pod[], nowMs: number, refused: (p: Pod) => boolean): boolean {
  const plan = planDrain(pods, nowMs, undefined);
  return !plan.drained && plan.nextEventMs === undefined && plan.evict.every(refused);
}

/**
 * The one-claim-per-need check on plain data: for each pod of `pending` (`namespace/name`), the
 * distinct launching claims whose `pods` name it when more than one does (`severalClaims`), and
 * each claim that names it more than once (`namedTwice`: one claim sized for the pod twice —
 * before, both showed as one list with the claim twice, "[pool-1-42q6c, pool-1-42q6c]").
 */
export function claimsPerPendingPod(
  launching: readonly Pick<NodeClaim, 'name' | 'pods'>[],
  pending: ReadonlySet<string>,
): { severalClaims: { pod: string; claims: string[] }[]; namedTwice: { pod: string; claim: string; times: number }[] } {
  const byPod = new Map<string, Map<string, number>>();
  for (const c of launching) {
    for (const p of c.pods ?? []) {
      if (!pending.has(p)) continue;
      const m = byPod.get(p) ?? new Map<string, number>();
      m.set(c.name, (m.get(c.name) ?? 0) + 1);
      byPod.set(p, m);
    }
  }
  const severalClaims: { pod: string; claims: string[] }[] = [];
  const namedTwice: { pod: string; claim: string; times: number }[] = [];
  for (const [pod, m] of byPod) {
    if (m.size > 1) severalClaims.push({ pod, claims: [...m.keys()] });
    for (const [claim, times] of m) if (times > 1) namedTwice.push({ pod, claim, times });
  }
  return { severalClaims, namedTwice };
}

/** A termination something works on: an attempt runs, or the last one ended within {@link AbandonBoundSeconds} (gc restarts it). */
function attended(t: TerminationView, nowMs: number): boolean {
  return t.running || nowMs - t.lastActiveMs <= AbandonBoundSeconds * 1000;
}

export interface Violation {
  invariant: string;
  seed: number;
  /** Virtual seconds since the run started. */
  atSeconds: number;
  message: string;
  objects: string[];
}

interface Execution {
  name: string;
  status: string;
  startDate: string;
  stopDate?: string;
  input: string;
  events?: unknown[];
}

interface TerminationView {
  claim: string;
  nodeName?: string;
  instanceId?: string;
  reason: string;
  startedMs: number;
  deadlineMs?: number;
  running: boolean;
  /** Virtual epoch ms the latest execution stopped (or now, while one runs): an attempt that failed at once still counts as work. */
  lastActiveMs: number;
}

export class Monitor {
  readonly violations: Violation[] = [];
  private readonly orphanSince = new Map<string, number>();
  private readonly unattendedSince = new Map<string, number>();
  private readonly voluntary = new Set<string>();
  private readonly reported = new Set<string>();

  constructor(
    private readonly env: LocalEnvironment,
    private readonly seed: number,
    private readonly injector: ChaosInjector,
  ) {}

  private add(invariant: string, key: string, message: string, objects: string[]): void {
    if (this.reported.has(`${invariant}|${key}`)) return;
    this.reported.add(`${invariant}|${key}`);
    this.violations.push({ invariant, seed: this.seed, atSeconds: Math.round(this.env.clock.elapsedSeconds()), message, objects });
  }

  private terminations(): TerminationView[] {
    const byClaim = new Map<string, TerminationView>();
    const execs: Execution[] = (this.env.sfn?.listExecutions?.() ?? []) as Execution[];
    for (const e of execs) {
      let input: any;
      try {
        input = JSON.parse(e.input);
      } catch {
        continue;
      }
      const claim = String(input?.nodeClaim ?? '');
      if (!claim) continue;
      const started = Date.parse(e.startDate);
      const prev = byClaim.get(claim);
      const running = e.status === 'RUNNING';
      const active = running ? this.env.clock.nowMs() : Date.parse(e.stopDate ?? e.startDate);
      if (!prev)
        byClaim.set(claim, {
          claim,
          nodeName: input.nodeName,
          instanceId: input.instanceId,
          reason: input.reason,
          startedMs: started,
          deadlineMs: input.deadlineEpochMs,
          running,
          lastActiveMs: active,
        });
      else {
        prev.running ||= running;
        prev.lastActiveMs = Math.max(prev.lastActiveMs, active);
        prev.nodeName ??= input.nodeName;
        prev.instanceId ??= input.instanceId;
        // The first execution's start is when termination started; the earliest deadline binds.
        if (started < prev.startedMs) prev.startedMs = started;
        if (typeof input.deadlineEpochMs === 'number')
          prev.deadlineMs = prev.deadlineMs === undefined ? input.deadlineEpochMs : Math.min(prev.deadlineMs, input.deadlineEpochMs);
      }
    }
    return [...byClaim.values()];
  }

  private runningDisruptionMentions(name: string): boolean {
    const execs: Execution[] = (this.env.disruptionSfn?.listExecutions?.() ?? []) as Execution[];
    return execs.some((e) => e.status === 'RUNNING' && JSON.stringify(e.events ?? []).includes(name));
  }

  /** One continuous check. */
  async check(): Promise<void> {
    const env = this.env;
    const now = env.clock.nowMs();
    const claims: NodeClaim[] = await env.nodeClaims();
    const live = claims.filter((c) => c.phase !== 'Terminated');
    const instances = env.liveInstances();
    const nodes = env.cluster.nodes();
    const terms = this.terminations();
    const termByClaim = new Map(terms.map((t) => [t.claim, t]));

    // 1. No instance tagged for the cluster runs without a live NodeClaim for longer than the bound.
    const claimed = new Set(live.map((c) => c.instanceId).filter(Boolean));
    // Bounds on "nothing terminates it" start again once EC2 accepts TerminateInstances (module doc).
    const refused = this.injector.terminateRefusedAt(now);
    for (const i of instances) {
      if (claimed.has(i.instanceId) || refused) {
        this.orphanSince.delete(i.instanceId);
        continue;
      }
      const since = this.orphanSince.get(i.instanceId) ?? Math.max(now, i.launchTimeMs);
      this.orphanSince.set(i.instanceId, since);
      if (now - since > OrphanBoundSeconds * 1000) {
        this.add(
          'orphan-instance',
          i.instanceId,
          `instance ${i.instanceId} (${i.instanceType}, NodeClaim tag ${i.tags['karpenter.sh/nodeclaim'] ?? '-'}) has run ${Math.round((now - since) / 1000)}s without a live NodeClaim (bound ${OrphanBoundSeconds}s)`,
          [i.instanceId, i.tags['karpenter.sh/nodeclaim'] ?? ''],
        );
      }
    }

    // 2. Termination: gone by the deadline + 2 min; with no deadline, never abandoned.
    for (const t of terms) {
      const inst = t.instanceId ? env.ec2.instances.get(t.instanceId) : undefined;
      const instAlive = inst && (inst.state === 'pending' || inst.state === 'running' || inst.state === 'stopping' || inst.state === 'stopped');
      const nodeAlive = t.nodeName ? nodes.some((n) => n.metadata.name === t.nodeName) : false;
      if (!instAlive && !nodeAlive) continue;
      // While EC2 refuses TerminateInstances (an injected refusal), the deadline moves to the refusal's end.
      const due = t.deadlineMs === undefined ? undefined : Math.max(t.deadlineMs, Math.min(now, this.injector.terminateRefusedUntil(now)));
      if (due !== undefined && now > due + DeadlineSlackSeconds * 1000) {
        const late =
          due === t.deadlineMs ? 'its deadline' : `its deadline (EC2 refused TerminateInstances until ${Math.round((due - env.clock.startEpochMs()) / 1000)}s)`;
        this.add(
          'termination-deadline',
          t.claim,
          `NodeClaim ${t.claim} (${t.reason}): ${instAlive ? `instance ${t.instanceId} ${inst!.state}` : ''}${instAlive && nodeAlive ? ', ' : ''}${nodeAlive ? `node ${t.nodeName} exists` : ''} ${Math.round((now - due) / 1000)}s after ${late}`,
          [t.claim, t.nodeName ?? '', t.instanceId ?? ''],
        );
      }
      // Never abandoned: an attempt runs, or the last one ended (even at once, failing) within the bound.
      if (!attended(t, now)) {
        this.add(
          'termination-abandoned',
          t.claim,
          `NodeClaim ${t.claim} (${t.reason}): termination started, no execution running or started for ${Math.round((now - t.lastActiveMs) / 1000)}s (bound ${AbandonBoundSeconds}s), ${instAlive ? `instance ${t.instanceId} still ${inst!.state}` : `node ${t.nodeName} still exists`}`,
          [t.claim, t.nodeName ?? '', t.instanceId ?? ''],
        );
      }
    }

    // 2b. The zombie of seed 002 by another road: a registered claim whose node is gone while its instance keeps running.
    const nodeNames = new Set(nodes.map((n) => n.metadata.name));
    const providerIds = new Set(nodes.map((n) => n.spec?.providerID).filter(Boolean));
    const liveIds = new Set(instances.map((i) => i.instanceId));
    for (const c of live) {
      const gone =
        (c.phase === 'Registered' || c.phase === 'Initialized') &&
        c.nodeName &&
        !nodeNames.has(c.nodeName) &&
        !(c.providerId && providerIds.has(c.providerId)) &&
        c.instanceId &&
        liveIds.has(c.instanceId);
      this.unattended(
        `nodegone|${c.name}`,
        !!gone && !refused,
        now,
        'instance-without-node',
        `NodeClaim ${c.name} (${c.phase}): node ${c.nodeName} is gone, instance ${c.instanceId} still runs and nothing terminates it`,
        [c.name, c.nodeName ?? '', c.instanceId ?? ''],
        NodeGoneBoundSeconds,
      );
    }

    // 3. At most one instance per NodeClaim.
    const perClaim = new Map<string, string[]>();
    for (const i of instances) {
      const c = i.tags['karpenter.sh/nodeclaim'];
      if (c) perClaim.set(c, [...(perClaim.get(c) ?? []), i.instanceId]);
    }
    for (const [c, ids] of perClaim) if (ids.length > 1) this.add('one-instance-per-claim', c, `NodeClaim ${c} has ${ids.length} live instances`, [c, ...ids]);
    // … and no pending pod is the reason for two claims still launching, or twice for one.
    const launching = live.filter((c) => ['Pending', 'Launched', 'Registered'].includes(c.phase));
    const pending = new Set(env.cluster.pendingPods().map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`));
    const needs = claimsPerPendingPod(launching, pending);
    for (const { pod, claims: cs } of needs.severalClaims)
      this.add('one-claim-per-need', pod, `pending pod ${pod} is the reason for ${cs.length} launching NodeClaims`, [pod, ...cs]);
    for (const { pod, claim, times } of needs.namedTwice)
      this.add(
        'one-claim-per-need',
        `${pod}|${claim}`,
        `pending pod ${pod} is named ${times} times by launching NodeClaim ${claim} (sized for it ${times} times)`,
        [pod, claim],
      );

    // 4. Budgets, counted from the cluster when a voluntary disruption starts.
    const pools = env.cluster.objects('karpenter.sh/v1', 'NodePool');
    const tainted = (n: (typeof nodes)[number]) => n.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted');
    const claimOfNode = new Map(live.filter((c) => c.nodeName).map((c) => [c.nodeName!, c]));
    const disrupting = new Map<string, string[]>();
    for (const n of nodes) {
      const pool = n.metadata.labels?.['karpenter.sh/nodepool'];
      if (!pool) continue;
      const claim = claimOfNode.get(n.metadata.name);
      const t = claim ? termByClaim.get(claim.name) : undefined;
      const voluntary = t ? Voluntary.has(t.reason) : tainted(n);
      if (voluntary && (tainted(n) || t?.running)) disrupting.set(pool, [...(disrupting.get(pool) ?? []), n.metadata.name]);
    }
    for (const [pool, names] of disrupting) {
      const fresh = names.filter((n) => !this.voluntary.has(n));
      for (const n of names) this.voluntary.add(n);
      if (!fresh.length) continue;
      const obj = pools.find((p) => p.metadata.name === pool);
      const parsed = obj ? NodePoolSchema.safeParse(obj) : undefined;
      if (!parsed?.success) continue;
      const poolNodes = nodes.filter((n) => n.metadata.labels?.['karpenter.sh/nodepool'] === pool).length;
      const cap = budgetCap(parsed.data, 'Empty', poolNodes, new Date(now));
      if (cap !== undefined && names.length > cap) {
        this.add(
          'budget',
          `${pool}@${Math.round(now / 1000)}`,
          `NodePool ${pool}: ${names.length} nodes disrupted at once (${names.join(', ')}), budget allows ${cap} of ${poolNodes}`,
          [pool, ...names],
        );
      }
    }
    for (const n of [...this.voluntary]) if (!nodes.some((x) => x.metadata.name === n && (tainted(x) || x.spec?.unschedulable))) this.voluntary.delete(n);

    // 5. No pod deleted past its PDB (DELETE instead of eviction) before its node's termination
    //    deadline. Karpenter deletes a pod its terminationGracePeriodSeconds before the deadline, so
    //    that it ends by then (ANCHORS.md §2.6): a delete at or after deadline − grace is the cutoff.
    for (const d of this.injector.podDeletes.splice(0)) {
      const nodeName = d.nodeName;
      const claim = nodeName ? (claimOfNode.get(nodeName) ?? claims.find((c) => c.nodeName === nodeName)) : undefined;
      const t = claim ? termByClaim.get(claim.name) : undefined;
      if (!t || t.deadlineMs === undefined || d.atMs < t.deadlineMs - d.graceSeconds * 1000) {
        this.add(
          'force-delete-before-deadline',
          `${d.namespace}/${d.name}@${d.atMs}`,
          `pod ${d.namespace}/${d.name} on ${nodeName ?? '?'} deleted without eviction ${t?.deadlineMs !== undefined ? `${Math.round((t.deadlineMs - d.atMs) / 1000)}s before the deadline (grace ${d.graceSeconds}s)` : '(no deadline)'}`,
          [`${d.namespace}/${d.name}`, nodeName ?? '', claim?.name ?? ''],
        );
      }
    }

    // 6. No disrupted taint / budget slot without live work on that node.
    for (const n of nodes) {
      if (!tainted(n)) {
        this.unattendedSince.delete(`taint|${n.metadata.name}`);
        continue;
      }
      const claim = claimOfNode.get(n.metadata.name);
      const t = claim ? termByClaim.get(claim.name) : undefined;
      const working = (t && attended(t, now)) || this.runningDisruptionMentions(n.metadata.name);
      this.unattended(
        `taint|${n.metadata.name}`,
        !working,
        now,
        'disrupted-taint-unattended',
        `node ${n.metadata.name} carries karpenter.sh/disrupted with no running termination or disruption execution`,
        [n.metadata.name, claim?.name ?? ''],
        DisruptionAbandonBoundSeconds,
      );
    }
    for (const pool of pools) {
      const holders = await this.holders(pool.metadata.name);
      for (const h of Object.keys(holders)) {
        const t = termByClaim.get(h);
        const c = claims.find((x) => x.name === h);
        const working = (t && attended(t, now)) || this.runningDisruptionMentions(h) || (c?.nodeName ? this.runningDisruptionMentions(c.nodeName) : false);
        this.unattended(
          `slot|${pool.metadata.name}|${h}`,
          !working,
          now,
          'budget-slot-unattended',
          `NodePool ${pool.metadata.name} budget slot held by ${h} with no running termination or disruption execution`,
          [pool.metadata.name, h],
          DisruptionAbandonBoundSeconds,
        );
      }
    }
  }

  private unattended(key: string, idle: boolean, now: number, invariant: string, message: string, objects: string[], boundSeconds: number): void {
    if (!idle) {
      this.unattendedSince.delete(key);
      return;
    }
    const since = this.unattendedSince.get(key) ?? now;
    this.unattendedSince.set(key, since);
    if (now - since > boundSeconds * 1000) this.add(invariant, key, `${message} for ${Math.round((now - since) / 1000)}s (bound ${boundSeconds}s)`, objects);
  }

  private async holders(pool: string): Promise<Record<string, string>> {
    try {
      const out = await this.env.dynamo.call('GetItem', {
        TableName: this.env.dynamo.tableName,
        Key: { [Table.partitionKey]: { S: keys.cluster(this.env.scenario.clusterName) }, [Table.sortKey]: { S: keys.budget(pool) } },
        ConsistentRead: true,
      });
      const m = out.Item?.holders?.M ?? {};
      return Object.fromEntries(Object.entries(m).map(([k, v]: [string, any]) => [k, String(v?.S ?? '')]));
    } catch {
      return {};
    }
  }

  /** True when nothing is left to do: every pod running, nothing launching, nothing terminating but drains with no deadline that wait for good ({@link drainWaitsForGood}). */
  async settled(): Promise<boolean> {
    const env = this.env;
    const pods = env.cluster.pods().filter((p) => !p.metadata.deletionTimestamp);
    if (pods.some((p) => p.status?.phase !== 'Running')) return false;
    const claims = (await env.nodeClaims()).filter((c) => c.phase !== 'Terminated');
    // A claim whose node registered but never turns Ready is settled here; gc replaces it after InitializationTimeoutSeconds (its pods then pend, so the run is not settled until they run).
    if (claims.some((c) => ['Pending', 'Launched'].includes(c.phase))) return false;
    const now = env.clock.nowMs();
    const refused = evictionRefusedBy(env);
    const onNode = (name: string | undefined) => (name ? env.cluster.pods().filter((p) => p.spec?.nodeName === name) : []);
    return !this.terminations().some((t) => t.running && (t.deadlineMs !== undefined || !drainWaitsForGood(onNode(t.nodeName), now, refused)));
  }

  /** One line: what is not running, launching or terminating (for logs). */
  async describe(): Promise<string> {
    const env = this.env;
    const notRunning = env.cluster
      .pods()
      .filter((p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Running')
      .map((p) => `${p.metadata.name}:${p.status?.phase ?? '?'}`);
    const claims = (await env.nodeClaims()).filter((c) => c.phase !== 'Terminated').map((c) => `${c.name}:${c.phase}`);
    const running = this.terminations()
      .filter((t) => t.running)
      .map((t) => `${t.claim}(${t.reason}${t.deadlineMs ? '' : ', no deadline'})`);
    return `pods not running [${notRunning.join(' ')}]; claims [${claims.join(' ')}]; terminations running [${running.join(' ')}]; instances ${env.liveInstances().length}`;
  }

  /** Several lines: nodes (taints, readiness), claims, pending pods, recent failed deliveries (for a run that did not settle). */
  async dump(): Promise<string> {
    const env = this.env;
    const lines: string[] = [];
    for (const n of env.cluster.nodes()) {
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
      lines.push(
        `  node ${n.metadata.name} pool=${n.metadata.labels?.['karpenter.sh/nodepool'] ?? '-'} ready=${ready} unschedulable=${!!n.spec?.unschedulable} taints=${(n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).join(',')} ${n.spec?.providerID ?? ''}`,
      );
    }
    for (const c of await env.nodeClaims())
      lines.push(
        `  claim ${c.name} ${c.phase} node=${c.nodeName ?? '-'} inst=${c.instanceId ?? '-'} pods=${(c.pods ?? []).length} created=${c.createdAt} ${c.lastError ?? ''}`,
      );
    for (const p of env.cluster.pendingPods()) lines.push(`  pending ${p.metadata.name} ${JSON.stringify(p.status?.conditions ?? [])}`);
    for (const d of env.bus.deadLetters) lines.push(`  dead-letter ${d.rule} ${d.event['detail-type']} ${d.error}`);
    for (const f of env.bus.dropped) lines.push(`  dropped ${f.rule} ${f.detailType} at ${Math.round((f.atMs - env.clock.startEpochMs()) / 1000)}s`);
    return lines.join('\n');
  }

  /** End-of-run checks (after faults stopped and the run settled or ran out of time). */
  async final(): Promise<void> {
    await this.check();
    const env = this.env;
    // 7. Every pod that can be scheduled is running.
    for (const p of env.cluster.pods()) {
      if (p.metadata.deletionTimestamp || p.status?.phase === 'Running' || p.status?.phase === 'Succeeded') continue;
      this.add(
        'pod-not-running',
        `${p.metadata.namespace}/${p.metadata.name}`,
        `pod ${p.metadata.namespace}/${p.metadata.name} is ${p.status?.phase ?? 'Pending'}${p.spec?.nodeName ? ` on ${p.spec.nodeName}` : ''} at the end`,
        [`${p.metadata.namespace}/${p.metadata.name}`, p.spec?.nodeName ?? ''],
      );
    }
    // 8. Every failed event delivery ended in a DLQ with its reason, or succeeded on a retry; nothing retried for ever.
    const bus = env.bus;
    const byKey = new Map<string, { ok: boolean; attempts: number; errors: string[] }>();
    for (const d of bus.deliveries) {
      const k = `${d.rule}|${d.eventId}`;
      const v = byKey.get(k) ?? { ok: false, attempts: 0, errors: [] };
      v.ok ||= d.ok;
      v.attempts = Math.max(v.attempts, d.attempt);
      if (d.error) v.errors.push(d.error);
      byKey.set(k, v);
    }
    const dead = new Set(bus.deadLetters.map((d) => `${d.rule}|${d.event.id}`));
    const maxAttempts = Math.max(AsyncInvokeRetries + 1, MaxReceiveCount);
    for (const [k, v] of byKey) {
      if (v.attempts > maxAttempts) this.add('retried-for-ever', k, `${k} was attempted ${v.attempts} times (max ${maxAttempts})`, [k]);
      if (!v.ok && !dead.has(k) && !this.inRetry(k))
        this.add('failed-event-not-dead-lettered', k, `${k} failed (${v.errors.at(-1)}) and is not in a dead-letter queue`, [k]);
    }
    for (const d of bus.deadLetters)
      if (!d.error) this.add('dead-letter-without-reason', `${d.rule}|${d.event.id}`, `dead letter for ${d.rule} has no reason`, [d.event.id]);
  }

  /** A delivery still waiting for its retry (its last attempt was recent). */
  private inRetry(key: string): boolean {
    const last = [...this.env.bus.deliveries].reverse().find((d) => `${d.rule}|${d.eventId}` === key);
    return !!last && this.env.clock.nowMs() - last.atMs < 60_000;
  }
}
