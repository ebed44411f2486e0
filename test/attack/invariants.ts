/**
 * What must hold after a trial whatever the forged input, checked on the settled world from its
 * effect log (test/attack/world.ts), never from nodefleet's own account of what it did:
 * - terminated-without-drain: an instance is terminated, or a Node deleted, while pods a drain
 *   must move are still on it, unless its own claim's legitimate deadline ({@link Truth.legitDeadline}) has passed;
 * - pod-deleted-early: a pod is deleted (grace 0 at the cutoff, or early so its grace ends by the
 *   deadline) before its claim's legitimate deadline allows it — PDB and do-not-disrupt named;
 * - evicted-do-not-disrupt: a pod held by karpenter.sh/do-not-disrupt is evicted;
 * - foreign-touched: anything is done to a node, instance or pod nodefleet does not own (the
 *   managed node group's node, its instance, CoreDNS), or an instance that is not a launch of this world;
 * - launch-beyond-need: the provisioner launches a claim for a pod that is, live, neither pending
 *   nor on a node being deleted, or for more CPU than its pods request live, or two claims for one pod;
 * - launch-suppressed: a pod pending live from the start has no claim at the end;
 * - handler-crash: a handler or a state-machine task throws anything but a documented refusal or
 *   transient error (world.ts DocumentedErrors);
 * - tainted-without-owner: a node left with the karpenter.sh/disrupted taint or cordoned, that was
 *   not before, with no running execution working on it;
 * - future-pod-event: a claim's last pod event recorded later than the clock (consolidation held off for ever);
 * - claim-bound-elsewhere: a claim registered to a node that is not its instance's;
 * - untainted-while-terminating: the karpenter.sh/disrupted taint taken off a node whose claim is
 *   being terminated (new pods would land on a node being drained);
 * - disrupted-on-forged-input: in a world where no voluntary disruption is due (every NodePool's
 *   consolidateAfter 1h, claims current, nothing drifted), a claim's node is cordoned, tainted,
 *   drained or terminated though neither its expiry nor an input nodefleet rightly obeys asked
 *   for it ({@link Truth.mayDisrupt}).
 */
import { AnnotationLastPodEventTime } from '../../shared/api/agent-events.ts';
import { TaintDisrupted } from '../../shared/api/labels.ts';
import { AnnotationDisruptionCommand } from '../../functions/disruption/act.ts';
import { DocumentedErrors, ManagedInstanceId, ManagedNodeName, type AttackWorld } from './world.ts';

export interface Violation {
  invariant: string;
  message: string;
}

/** A deletion may end up to this much before the deadline (whole-second grace periods). */
const GraceRoundingMs = 1000;

function at(w: AttackWorld, ms: number): string {
  return `t0+${Math.round((ms - w.truth.t0) / 1000)}s`;
}

/** The claim (of the honest world) whose node this is. */
function claimOfNode(w: AttackWorld, nodeName: string | undefined): string | undefined {
  return w.truth.nodes.find((n) => n.nodeName === nodeName)?.claim;
}

function claimOfNodeName(w: AttackWorld, claim: string): string | undefined {
  return w.truth.nodes.find((n) => n.claim === claim)?.nodeName;
}

/** Slack on a claim's CPU over its pods' live requests (rounding of quantities). */
const CpuSlack = 0.01;

/** The invariants on the settled world. Call before stopping it (running executions own their nodes). */
export async function checkInvariants(w: AttackWorld): Promise<Violation[]> {
  const out: Violation[] = [];
  const add = (invariant: string, message: string) => out.push({ invariant, message });
  const legit = (claim: string | undefined) => (claim ? w.truth.legitDeadline.get(claim) : undefined);
  // nodefleet's instances: the world's, and those launched during the trial (tagged by the launch).
  const known = new Set([...w.truth.nodes.map((n) => n.instanceId), ...w.effects.flatMap((e) => (e.kind === 'create' ? [e.instanceId] : []))]);

  for (const e of w.effects) {
    switch (e.kind) {
      case 'terminate': {
        if (e.instanceId === ManagedInstanceId || !known.has(e.instanceId)) {
          add(
            'foreign-touched',
            `instance ${e.instanceId} (not a nodefleet launch of this world${e.instanceId === ManagedInstanceId ? ": the managed node group's" : ''}) terminated at ${at(w, e.atMs)}`,
          );
          break;
        }
        const claim = w.truth.nodes.find((n) => n.instanceId === e.instanceId)?.claim;
        const d = legit(claim);
        if (e.podsLeft.length && !(d !== undefined && e.atMs >= d)) {
          add(
            'terminated-without-drain',
            `instance ${e.instanceId} (nodeclaim ${claim}, node ${e.nodeName}) terminated at ${at(w, e.atMs)} with ${e.podsLeft.join(', ')} still on it; ${d === undefined ? 'its claim has no legitimate deadline' : `its deadline is ${at(w, d)}`}`,
          );
        }
        break;
      }
      case 'deleteNode': {
        if (e.nodeName === ManagedNodeName) {
          add('foreign-touched', `managed node group node ${e.nodeName} deleted at ${at(w, e.atMs)}`);
          break;
        }
        const claim = claimOfNode(w, e.nodeName);
        const d = legit(claim);
        if (e.podsLeft.length && !(d !== undefined && e.atMs >= d)) {
          add(
            'terminated-without-drain',
            `node ${e.nodeName} (nodeclaim ${claim ?? 'none'}) deleted at ${at(w, e.atMs)} with ${e.podsLeft.join(', ')} still on it; ${d === undefined ? 'no legitimate deadline' : `deadline ${at(w, d)}`}`,
          );
        }
        break;
      }
      case 'deletePod': {
        if (e.nodeName === ManagedNodeName || e.pod.startsWith('kube-system/')) {
          add('foreign-touched', `pod ${e.pod} on ${e.nodeName ?? 'no node'} deleted (grace ${e.graceSeconds}s) at ${at(w, e.atMs)}`);
          break;
        }
        const claim = claimOfNode(w, e.nodeName);
        const d = legit(claim);
        if (!(d !== undefined && e.atMs + e.graceSeconds * 1000 >= d - GraceRoundingMs)) {
          const what = [e.graceSeconds === 0 ? 'grace 0' : `grace ${e.graceSeconds}s`, e.pdb ? 'under a PDB' : '', e.doNotDisrupt ? 'do-not-disrupt' : '']
            .filter(Boolean)
            .join(', ');
          add(
            'pod-deleted-early',
            `pod ${e.pod} on ${e.nodeName ?? 'no node'} (nodeclaim ${claim ?? 'none'}) deleted at ${at(w, e.atMs)} (${what}); ${d === undefined ? 'its claim has no legitimate deadline' : `its deadline is ${at(w, d)}`}`,
          );
        }
        break;
      }
      case 'evict': {
        if (e.nodeName === ManagedNodeName || e.pod.startsWith('kube-system/')) {
          add('foreign-touched', `pod ${e.pod} on ${e.nodeName ?? 'no node'} evicted at ${at(w, e.atMs)}`);
          break;
        }
        if (e.doNotDisrupt) add('evicted-do-not-disrupt', `pod ${e.pod} (karpenter.sh/do-not-disrupt) on ${e.nodeName} evicted at ${at(w, e.atMs)}`);
        break;
      }
      case 'patchNode':
        if (e.nodeName === ManagedNodeName)
          add('foreign-touched', `managed node group node ${e.nodeName} patched at ${at(w, e.atMs)}: ${JSON.stringify(e.patch)}`);
        if (e.untaintsTerminating)
          add(
            'untainted-while-terminating',
            `node ${e.nodeName} (nodeclaim ${claimOfNode(w, e.nodeName)}, Terminating) lost its karpenter.sh/disrupted taint at ${at(w, e.atMs)}`,
          );
        break;
      case 'create': {
        const claim = await w.store.get(e.nodeClaim);
        // A disruption replacement is made for a command the loop validated live, not for pods.
        if (claim?.annotations?.[AnnotationDisruptionCommand]) break;
        const needless = e.pods.filter((p) => p.live === 'not-needed').map((p) => p.pod);
        if (needless.length || e.pods.length === 0) {
          add(
            'launch-beyond-need',
            `nodeclaim ${e.nodeClaim} launched at ${at(w, e.atMs)} for ${needless.length ? `${needless.join(', ')}, neither pending nor on a node being deleted` : 'no pod'} (live pending: ${w.truth.pendingPods.join(', ') || 'none'})`,
          );
        }
        const liveCpu = e.pods.reduce((s, p) => s + p.cpu, 0);
        if (e.cpu > liveCpu + CpuSlack)
          add('launch-beyond-need', `nodeclaim ${e.nodeClaim} launched at ${at(w, e.atMs)} for ${e.cpu} CPU; its pods request ${liveCpu} live`);
        break;
      }
    }
  }

  // One claim per pod: a pod named by two provisioner claims still standing was launched for twice.
  const byPod = new Map<string, string[]>();
  const standing = (await w.store.list()).filter((c) => !c.annotations?.[AnnotationDisruptionCommand] && c.phase !== 'Failed' && c.phase !== 'Terminated');
  for (const c of standing) for (const p of c.pods ?? []) byPod.set(p, [...(byPod.get(p) ?? []), c.name]);
  for (const [pod, claims] of byPod)
    if (claims.length > 1) add('launch-beyond-need', `pod ${pod} is named by ${claims.length} nodeclaims: ${claims.join(', ')}`);
  // And no scale-up suppressed: every pod still pending has a claim launched for it.
  for (const key of w.truth.pendingPods) {
    const [namespace, name] = key.split('/');
    const p = w.w.kube.peekPod(namespace, name);
    if (!p || p.spec.nodeName || p.metadata.deletionTimestamp) continue;
    if (!byPod.has(key)) add('launch-suppressed', `pod ${key} is still pending and no nodeclaim was launched for it`);
  }

  // A quiet world: only the expired claim and rightly obeyed inputs may disrupt anything.
  const quiet = w.truth.pools.every((p) => p.spec.disruption.consolidateAfter === '1h');
  if (quiet) {
    const disrupted = new Map<string, string>();
    for (const e of w.effects) {
      const node = e.kind === 'terminate' ? w.truth.nodes.find((n) => n.instanceId === e.instanceId)?.nodeName : 'nodeName' in e ? e.nodeName : undefined;
      const claim = claimOfNode(w, node);
      if (!claim || w.truth.mayDisrupt.has(claim) || disrupted.has(claim)) continue;
      const marks =
        e.kind === 'patchNode' &&
        ((e.patch as { unschedulable?: boolean }).unschedulable === true ||
          !!(e.patch as { taints?: { key: string }[] }).taints?.some((t) => t.key === TaintDisrupted.key));
      if (marks || e.kind === 'evict' || e.kind === 'deletePod' || e.kind === 'terminate' || e.kind === 'deleteNode')
        disrupted.set(claim, `${e.kind === 'patchNode' ? 'tainted/cordoned' : e.kind} at ${at(w, e.atMs)}${'pod' in e ? ` (${e.pod})` : ''}`);
    }
    for (const [claim, how] of disrupted)
      add('disrupted-on-forged-input', `nodeclaim ${claim}'s node ${claimOfNodeName(w, claim)} ${how}; nothing nodefleet should obey asked for it`);
  }

  for (const t of w.thrown) {
    if (!DocumentedErrors.has(t.name)) add('handler-crash', `${t.where} threw ${t.name}: ${t.message.slice(0, 300)}`);
  }

  const running = w.sfn.listExecutions().filter((e) => e.status === 'RUNNING');
  const initiallyMarked = new Set(
    w.initial.nodes.filter((n) => n.spec?.unschedulable || n.spec?.taints?.some((t) => t.key === TaintDisrupted.key)).map((n) => n.metadata.name),
  );
  for (const n of await w.w.kube.listNodes()) {
    const name = n.metadata.name;
    const marked = n.spec?.unschedulable || n.spec?.taints?.some((t) => t.key === TaintDisrupted.key);
    if (!marked || initiallyMarked.has(name)) continue;
    const claim = claimOfNode(w, name);
    const owned = running.some((e) => (claim !== undefined && JSON.parse(e.input ?? '{}')?.nodeClaim === claim) || JSON.stringify(e.events).includes(name));
    const how = [n.spec?.unschedulable ? 'cordoned' : '', n.spec?.taints?.some((t) => t.key === TaintDisrupted.key) ? 'tainted karpenter.sh/disrupted' : '']
      .filter(Boolean)
      .join(' and ');
    if (!owned) add('tainted-without-owner', `node ${name} (nodeclaim ${claim ?? 'none'}) left ${how} with no running execution on it`);
  }

  const nowMs = w.w.clock.nowMs();
  const stored = await w.store.list();
  for (const claim of stored) {
    const own = w.truth.nodes.find((n) => n.claim === claim.name);
    if (own && claim.nodeName !== undefined && claim.nodeName !== own.nodeName)
      add('claim-bound-elsewhere', `nodeclaim ${claim.name} (instance ${own.instanceId}, node ${own.nodeName}) is registered to node ${claim.nodeName}`);
  }
  for (const claim of stored) {
    const t = Date.parse(claim.annotations?.[AnnotationLastPodEventTime] ?? '');
    if (!Number.isNaN(t) && t > nowMs)
      add('future-pod-event', `nodeclaim ${claim.name}: last pod event recorded at ${new Date(t).toISOString()}, after now (${new Date(nowMs).toISOString()})`);
  }
  return out;
}
