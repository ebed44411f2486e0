/**
 * A scenario's `expect` block checked against what the run produced: the instances the local EC2
 * launched, the NodeClaims in DynamoDB, the cluster's nodes and pods, the termination
 * executions' records and the captured log lines. Each expectation is one named check with
 * the measured value in its detail, so a failure says what was seen.
 */
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import { TaintDisrupted } from '../../shared/api/labels.ts';
import type { LocalEnvironment } from './environment.ts';
import type { CountOrRangeT, ScenarioExpect } from './scenario.ts';
import { podsMatch, type InterruptionFact } from './conditions.ts';
import { IamNotEnforced, type LocalAuthorizer } from './iam/authorizer.ts';

/** What the runner measured while the scenario ran. */
export interface RunFacts {
  maxConcurrentNodeClaims: number;
  interruptions: InterruptionFact[];
  /** Named instants from `mark` steps (virtual epoch ms). */
  marks: Record<string, number>;
  finalNodeClaims?: NodeClaim[];
  /** Per NodePool of `budgetsHonoured`: the most nodes seen disrupting at once, and every moment over the budget. */
  budgets?: Record<string, { maxDisrupting: number; violations: string[] }>;
  /** Instances the `strayInstance` fault started. */
  strays?: string[];
  /** `runningAgainAfterDeletion`: when the first matching pod was deleted, and when a matching pod was next Running (virtual epoch ms). */
  podGap?: { pod: string; deletedAtMs: number; runningAtMs?: number; runningPod?: string };
  /** Mirrored NodeClaim objects removed during the run, each with its instance's state then (`nodeClaimObjectsOutliveInstances`). */
  nodeClaimObjectRemovals?: { name: string; instanceId?: string; instanceState?: string }[];
}

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
}

/** A termination execution as T's runner records it (shared/api/termination.ts ExecutionRecord). */
interface ExecutionLike {
  name: string;
  status: string;
  startDate: string;
  stopDate?: string;
  input: string;
  events: { type: string; stateName?: string; timestamp: string }[];
}

function inRange(n: number, r: CountOrRangeT | { min?: number; max?: number }): boolean {
  if (typeof r === 'number') return n === r;
  return (r.min === undefined || n >= r.min) && (r.max === undefined || n <= r.max);
}

function rangeText(r: CountOrRangeT | { min?: number; max?: number }): string {
  if (typeof r === 'number') return String(r);
  return `${r.min ?? '-∞'}..${r.max ?? '∞'}`;
}

/** Termination execution records from the local Step Functions (empty when it is not running). */
export function executions(env: LocalEnvironment): ExecutionLike[] {
  return (env.sfn?.listExecutions?.() ?? []) as ExecutionLike[];
}

/** Checks every expectation present in `expect`. */
export function checkExpectations(env: LocalEnvironment, expect: ScenarioExpect, facts: RunFacts): CheckResult[] {
  const out: CheckResult[] = [];
  const launched = [...env.ec2.instances.values()].filter((i) => !i.preexisting).sort((a, b) => a.launchTimeMs - b.launchTimeMs);
  const launchedText = launched.map((i) => `${i.instanceType}/${i.capacityType}/${i.tags['karpenter.sh/nodepool'] ?? '?'}`).join(', ') || 'none';

  for (const l of expect.launched === undefined ? [] : Array.isArray(expect.launched) ? expect.launched : [expect.launched]) {
    const set = launched.filter((i) => !l.nodePool || i.tags['karpenter.sh/nodepool'] === l.nodePool);
    const scope = l.nodePool ? `launched(${l.nodePool})` : 'launched';
    const text = set.map((i) => `${i.instanceType}/${i.capacityReservationId ? `reserved ${i.capacityReservationId}` : i.capacityType}`).join(', ') || 'none';
    if (l.count !== undefined)
      out.push({
        name: `${scope}.count`,
        ok: inRange(set.length, l.count),
        detail: `launched ${set.length} (want ${rangeText(l.count)}): ${l.nodePool ? text : launchedText}`,
      });
    if (l.instanceTypes) {
      const bad = set.filter((i) => !l.instanceTypes!.includes(i.instanceType));
      out.push({ name: `${scope}.instanceTypes`, ok: bad.length === 0 && set.length > 0, detail: `launched ${text}; allowed ${l.instanceTypes.join(', ')}` });
    }
    if (l.excludeInstanceTypes) {
      const bad = set.filter((i) => l.excludeInstanceTypes!.includes(i.instanceType));
      out.push({
        name: `${scope}.excludeInstanceTypes`,
        ok: bad.length === 0 && set.length > 0,
        detail: `launched ${text}; none may be ${l.excludeInstanceTypes.join(', ')}`,
      });
    }
    if (l.capacityTypes) {
      const bad = set.filter((i) => !l.capacityTypes!.includes(i.capacityType));
      out.push({ name: `${scope}.capacityTypes`, ok: bad.length === 0 && set.length > 0, detail: `launched ${text}; allowed ${l.capacityTypes.join(', ')}` });
    }
    if (l.reserved !== undefined) {
      const n = set.filter((i) => i.capacityReservationId).length;
      out.push({
        name: `${scope}.reserved`,
        ok: inRange(n, l.reserved),
        detail: `${n} of ${set.length} launched into a capacity reservation (want ${rangeText(l.reserved)})`,
      });
    }
    if (l.archs) {
      const archOf = (t: string) => env.archOf(t);
      const bad = set.filter((i) => !l.archs!.includes(archOf(i.instanceType) as 'amd64' | 'arm64'));
      out.push({
        name: `${scope}.archs`,
        ok: bad.length === 0 && set.length > 0,
        detail: `launched ${set.map((i) => `${i.instanceType}(${archOf(i.instanceType)})`).join(', ') || 'none'}; allowed ${l.archs.join(', ')}`,
      });
    }
  }

  for (const name of expect.untouchedNodes ?? []) {
    const node = env.cluster.nodes().find((n) => n.metadata.name === name);
    const instanceId = node?.spec?.providerID?.split('/').at(-1);
    const state = instanceId ? env.ec2.instances.get(instanceId)?.state : undefined;
    const named = executions(env).filter((e) => e.input.includes(`"${name}"`) || (instanceId !== undefined && e.input.includes(`"${instanceId}"`)));
    const problems = [
      ...(node ? [] : ['the node is gone']),
      ...(node?.spec?.unschedulable ? ['cordoned'] : []),
      ...(node?.spec?.taints?.some((t) => t.key === TaintDisrupted.key) ? [`tainted ${TaintDisrupted.key}`] : []),
      ...(node?.metadata.deletionTimestamp ? ['being deleted'] : []),
      ...(state === 'running' ? [] : [`instance ${instanceId ?? '?'} ${state ?? 'unknown'}`]),
      ...named.map((e) => `termination ${e.name} named it`),
    ];
    out.push({
      name: `untouchedNodes.${name}`,
      ok: problems.length === 0,
      detail: problems.length ? problems.join('; ') : `node ${name} and instance ${instanceId} untouched`,
    });
  }

  if (expect.maxConcurrentNodeClaims !== undefined) {
    out.push({
      name: 'maxConcurrentNodeClaims',
      ok: inRange(facts.maxConcurrentNodeClaims, expect.maxConcurrentNodeClaims),
      detail: `at most ${facts.maxConcurrentNodeClaims} NodeClaim(s) at once (want ${rangeText(expect.maxConcurrentNodeClaims)})`,
    });
  }

  if (expect.final) {
    const f = expect.final;
    const claims = (facts.finalNodeClaims ?? []).filter((c) => c.phase !== 'Terminated');
    if (f.nodeClaims !== undefined)
      out.push({
        name: 'final.nodeClaims',
        ok: claims.length === f.nodeClaims,
        detail: `${claims.length} NodeClaim(s) left (want ${f.nodeClaims})${claims.length ? `: ${claims.map((c) => `${c.name}[${c.phase}]`).join(', ')}` : ''}`,
      });
    if (f.instances !== undefined) {
      const live = env.liveInstances();
      out.push({
        name: 'final.instances',
        ok: live.length === f.instances,
        detail: `${live.length} nodefleet instance(s) not terminated (want ${f.instances})${live.length ? `: ${live.map((i) => `${i.instanceId} ${i.instanceType} ${i.state}`).join(', ')}` : ''}`,
      });
    }
    if (f.nodes !== undefined) {
      const nodes = env.cluster.nodes();
      out.push({
        name: 'final.nodes',
        ok: nodes.length === f.nodes,
        detail: `${nodes.length} node(s) (want ${f.nodes}): ${nodes.map((n) => n.metadata.name).join(', ')}`,
      });
    }
    if (f.pods) {
      const r = podsMatch(env, f.pods, facts);
      out.push({ name: 'final.pods', ok: r.ok, detail: `pods ${f.pods.selector}: ${r.detail}` });
    }
  }

  if (expect.terminations) {
    const all = executions(env);
    for (const [i, t] of expect.terminations.entries()) {
      const matching = all.filter((e) => {
        const input = safeJson(e.input);
        return (!t.reason || input?.reason === t.reason) && e.status === t.status;
      });
      const name = `terminations[${i}]${t.reason ? ` (${t.reason})` : ''}`;
      const want = t.count ?? { min: 1 };
      const seen = all.map((e) => `${e.name}:${safeJson(e.input)?.reason ?? '?'}:${e.status}`).join(', ') || 'none';
      out.push({
        name: `${name}.count`,
        ok: inRange(matching.length, want),
        detail: `${matching.length} ${t.status} execution(s) (want ${rangeText(want)}); all executions: ${seen}`,
      });
      if (t.notBefore) {
        const limit = Date.parse(t.notBefore);
        const early = matching.filter((e) => Date.parse(e.startDate) < limit);
        out.push({
          name: `${name}.notBefore`,
          ok: early.length === 0,
          detail: early.length
            ? `${early.map((e) => `${e.name} started ${e.startDate}`).join(', ')} (before ${t.notBefore})`
            : `${matching.length} execution(s), none before ${t.notBefore}${matching.length ? ` (first ${matching.map((e) => e.startDate).sort()[0]})` : ''}`,
        });
      }
      if (t.notBeforeMark) {
        const markMs = facts.marks[t.notBeforeMark.mark];
        const limit = markMs === undefined ? undefined : markMs + t.notBeforeMark.seconds * 1000;
        const early = limit === undefined ? [] : matching.filter((e) => Date.parse(e.startDate) < limit);
        out.push({
          name: `${name}.notBeforeMark`,
          ok: limit !== undefined && early.length === 0,
          detail:
            limit === undefined
              ? `mark ${t.notBeforeMark.mark} never reached`
              : early.length
                ? `${early.map((e) => `${e.name} started ${e.startDate}`).join(', ')} (before ${new Date(limit).toISOString()})`
                : `${matching.length} execution(s), none before ${t.notBeforeMark.mark} + ${t.notBeforeMark.seconds}s`,
        });
      }
      if (t.terminatedAfterSeconds) {
        for (const e of matching) {
          const input = safeJson(e.input);
          const inst = input?.instanceId ? env.ec2.instances.get(input.instanceId) : undefined;
          const took = inst?.terminatingAtMs !== undefined ? (inst.terminatingAtMs - Date.parse(e.startDate)) / 1000 : undefined;
          out.push({
            name: `${name}.terminatedAfterSeconds`,
            ok: took !== undefined && inst?.terminatedBy === 'api' && inRange(took, t.terminatedAfterSeconds),
            detail:
              took === undefined
                ? `instance ${input?.instanceId ?? '?'} of ${e.name} was never terminated`
                : `TerminateInstances ${took.toFixed(1)}s after the execution started (want ${rangeText(t.terminatedAfterSeconds)}), by ${inst?.terminatedBy}`,
          });
        }
      }
    }
  }

  if (expect.interruption) {
    const x = expect.interruption;
    if (facts.interruptions.length === 0) out.push({ name: 'interruption', ok: false, detail: 'no spot interruption happened' });
    for (const it of facts.interruptions) {
      const inst = env.ec2.instances.get(it.instanceId);
      if (x.terminatedByNodefleetBeforeNoticeEnds) {
        const ok = inst?.terminatedBy === 'api' && inst.terminatingAtMs !== undefined && inst.terminatingAtMs < it.deadlineMs;
        const when = inst?.terminatingAtMs !== undefined ? `${((inst.terminatingAtMs - it.noticeAtMs) / 1000).toFixed(1)}s after the notice` : 'never';
        out.push({
          name: 'interruption.terminatedBeforeNoticeEnds',
          ok,
          detail: `${it.instanceId} terminated ${when} by ${inst?.terminatedBy ?? 'nobody'} (notice ${((it.deadlineMs - it.noticeAtMs) / 1000).toFixed(0)}s)`,
        });
      }
      if (x.replacementLaunched) {
        const repl = launched.filter((i) => i.launchTimeMs >= it.noticeAtMs && i.instanceId !== it.instanceId);
        out.push({
          name: 'interruption.replacementLaunched',
          ok: repl.length > 0,
          detail: repl.length
            ? `replacement ${repl.map((r) => `${r.instanceType}/${r.capacityType} ${((r.launchTimeMs - it.noticeAtMs) / 1000).toFixed(1)}s after the notice`).join(', ')}`
            : 'no instance launched after the notice',
        });
      }
    }
  }

  if (expect.logs) {
    const seen = env.logs.messages();
    const missing = expect.logs.filter((m) => !seen.has(m));
    out.push({
      name: 'logs',
      ok: missing.length === 0,
      detail: missing.length ? `missing log message(s): ${missing.map((m) => `"${m}"`).join(', ')}` : `all ${expect.logs.length} log messages seen`,
    });
  }

  if (expect.straysTerminated) {
    const strays = facts.strays ?? [];
    if (strays.length === 0) out.push({ name: 'straysTerminated', ok: false, detail: 'no strayInstance fault ran' });
    for (const id of strays) {
      const inst = env.ec2.instances.get(id);
      const took = inst?.terminatingAtMs !== undefined ? (inst.terminatingAtMs - inst.launchTimeMs) / 1000 : undefined;
      out.push({
        name: `straysTerminated.${id}`,
        ok: took !== undefined && inst?.terminatedBy === 'api' && took <= expect.straysTerminated.withinSeconds,
        detail:
          took === undefined
            ? `${id} is still ${inst?.state ?? 'unknown'}`
            : `${id} terminated ${took.toFixed(0)}s after it started (want ≤ ${expect.straysTerminated.withinSeconds}s), by ${inst?.terminatedBy}`,
      });
    }
  }

  for (const [mark, before] of Object.entries(expect.marksBefore ?? {})) {
    const at = facts.marks[mark];
    out.push({
      name: `marksBefore.${mark}`,
      ok: at !== undefined && at < Date.parse(before),
      detail: at === undefined ? `mark ${mark} never reached` : `${mark} at ${new Date(at).toISOString()} (want before ${before})`,
    });
  }

  if (expect.capacityErrors) {
    const fleets = env.ec2.calls.filter((c) => c.action === 'CreateFleet');
    const errors = fleets.flatMap((c) => ((c.detail as { errors?: string[] })?.errors ?? []).filter((e) => /Insufficient|Unfulfillable/.test(e)));
    out.push({
      name: 'capacityErrors',
      ok: errors.length >= expect.capacityErrors.min,
      detail: `${errors.length} insufficient-capacity error(s) in ${fleets.length} CreateFleet call(s) (want ≥ ${expect.capacityErrors.min})`,
    });
  }

  if (expect.noErrorLogs) {
    const allowed = new Set(expect.noErrorLogs === true ? [] : expect.noErrorLogs.except);
    const errors = env.logs.records.filter((r) => r.level === 'ERROR' && !allowed.has(r.message));
    out.push({
      name: 'noErrorLogs',
      ok: errors.length === 0,
      detail: errors.length
        ? `${errors.length} ERROR line(s): ${errors
            .slice(0, 3)
            .map((r) => `${r.controller}: ${r.message} ${JSON.stringify(r.fields).slice(0, 160)}`)
            .join('; ')}`
        : 'no ERROR log line',
    });
  }

  if (expect.evictionsRefusedByPdb !== undefined) {
    const refused = env.cluster.evictionsRefused();
    out.push({
      name: 'evictionsRefusedByPdb',
      ok: inRange(refused.length, expect.evictionsRefusedByPdb),
      detail: `${refused.length} eviction(s) refused by a PDB (want ${rangeText(expect.evictionsRefusedByPdb)})${refused.length ? `: ${[...new Set(refused.map((r) => `${r.pod} by ${r.pdb}`))].slice(0, 3).join(', ')}` : ''}`,
    });
  }

  if (expect.runningAgainAfterDeletion) {
    const want = expect.runningAgainAfterDeletion;
    const gap = facts.podGap;
    const seconds = gap?.runningAtMs !== undefined ? (gap.runningAtMs - gap.deletedAtMs) / 1000 : undefined;
    out.push({
      name: 'runningAgainAfterDeletion',
      ok: seconds !== undefined && inRange(seconds, want.seconds),
      detail: !gap
        ? `no pod matching ${want.selector} was deleted`
        : seconds === undefined
          ? `${gap.pod} deleted; no pod matching ${want.selector} Running again by the end (want ${rangeText(want.seconds)} s)`
          : `${gap.runningPod} Running ${seconds.toFixed(1)} s after ${gap.pod} was deleted (want ${rangeText(want.seconds)} s)`,
    });
  }

  for (const b of expect.budgetsHonoured ?? []) {
    const seen = facts.budgets?.[b.nodePool];
    out.push({
      name: `budgetsHonoured(${b.nodePool})`,
      ok: !!seen && seen.violations.length === 0,
      detail: !seen
        ? 'not sampled'
        : seen.violations.length
          ? `${seen.violations.length} moment(s) over budget: ${seen.violations.slice(0, 3).join('; ')}`
          : `at most ${seen.maxDisrupting} node(s) disrupting at once, never over the budget in force`,
    });
  }

  if (expect.nodeClaimObjectsOutliveInstances) {
    const removals = facts.nodeClaimObjectRemovals ?? [];
    const early = removals.filter((r) => r.instanceState === 'running' || r.instanceState === 'pending');
    out.push({
      name: 'nodeClaimObjectsOutliveInstances',
      ok: removals.length > 0 && early.length === 0,
      detail:
        removals.length === 0
          ? 'no NodeClaim object was removed'
          : early.length
            ? `removed while the instance ran: ${early.map((r) => `${r.name} (${r.instanceId} ${r.instanceState})`).join(', ')}`
            : `${removals.length} NodeClaim object(s) removed, each after its instance: ${removals.map((r) => `${r.name} (${r.instanceId ?? 'no instance'} ${r.instanceState ?? ''})`).join(', ')}`,
    });
  }

  if (expect.noFailedDeliveries) {
    const failed = env.bus.deliveries.filter((d) => !d.ok);
    const errors = env.logs.records.filter((r) => r.level === 'ERROR');
    const failedExecs = executions(env).filter((e) => e.status === 'FAILED');
    const ok = failed.length === 0 && env.bus.deadLetters.length === 0 && failedExecs.length === 0;
    out.push({
      name: 'noFailedDeliveries',
      ok,
      detail: ok
        ? `${env.bus.deliveries.length} deliveries, none failed (${errors.length} ERROR log line(s))`
        : `${failed.length} failed deliveries, ${env.bus.deadLetters.length} dead-lettered, ${failedExecs.length} failed execution(s): ${[...failed.map((d) => `${d.rule}: ${d.error}`), ...failedExecs.map((e) => `${e.name} failed`)].slice(0, 5).join('; ')}`,
    });
  }
  // Always: every local EC2/SSM call was allowed by the calling function's IAM policy (the policy the CDK stack deploys).
  if (env.authorizer) out.push(iamCheck(env.authorizer));
  return out;
}

/** The `iam` check: every EC2/SSM call allowed by its caller's policy, or says IAM was not enforced. */
export function iamCheck(authorizer: Pick<LocalAuthorizer, 'denials' | 'allowed' | 'enforced'>): CheckResult {
  const denials = authorizer.denials;
  const calls = [...authorizer.allowed.values()].reduce((a, b) => a + b, 0);
  return {
    name: 'iam',
    ok: denials.length === 0,
    detail:
      denials.length === 0
        ? authorizer.enforced
          ? `${calls} EC2/SSM call(s), each allowed by its function's IAM policy`
          : `${calls} EC2/SSM call(s) unchecked: ${IamNotEnforced}`
        : `${denials.length} call(s) denied: ${denials
            .slice(0, 3)
            .map((d) => `${d.principal ?? '?'} ${d.action}: ${d.code}: ${d.message}`)
            .join('; ')}`,
  };
}

function safeJson(s: string | undefined): any {
  try {
    return s ? JSON.parse(s) : undefined;
  } catch {
    return undefined;
  }
}
