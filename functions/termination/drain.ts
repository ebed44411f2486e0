/**
 * Task Drain: one drain round. Evicts the current priority tier through the Eviction API (a 429
 * from a PodDisruptionBudget is not an error: the pod is reported `blocked` and the state machine
 * waits and loops), holds do-not-disrupt pods, deletes pods early so their grace period ends by the
 * deadline, and reports whether the node is drained or the deadline has passed. Never sleeps: it
 * returns `retryAfterSeconds` for the WaitForDrain state.
 */
import { taskHandler } from './lambda.ts';
import { TaskInputSchema, type DrainResult, type TaskInput, type TerminationDeps } from './schemas.ts';
import { terminationDeadline } from '../../shared/api/termination-target.ts';
import { verifiedTarget } from './target.ts';
import { drainWaitSeconds, MaxDrainLoopsPerExecution, planDrain, TerminationHeartbeatSeconds } from '../../shared/disruption/drain-plan.ts';
import { podKey } from '../../shared/disruption/pods.ts';
import { updateClaim } from './claims.ts';

export { TaskInputSchema as InputSchema };

/** Names listed in the result (the history stays small; counts are exact). */
const ListedPods = 10;

/**
 * The node and the deadline come from the claim (the live Node checked against it each round); the
 * input's deadline is a request (terminationDeadline).
 * @throws TargetRefusedError; whatever the ports throw (TransientError …) for the state machine's Retry.
 */
export async function run(input: TaskInput, deps: Pick<TerminationDeps, 'kube' | 'clock' | 'log' | 'store' | 'clusterName'>): Promise<DrainResult> {
  const attempt = (input.drain?.attempt ?? 0) + 1;
  const nowMs = deps.clock.now().getTime();
  const { claim, nodeName } = await verifiedTarget('Drain', input, deps, { node: true, record: true });
  const deadline = terminationDeadline(claim, input.deadlineEpochMs, nowMs);
  const empty = { evicted: [], blocked: [], deletedEarly: [], remaining: [], remainingCount: 0, continueAsNew: false };
  if (!nodeName) return { done: true, deadlineReached: false, retryAfterSeconds: 0, attempt, ...empty };
  await heartbeat(input, deps, nowMs);

  const plan = planDrain(await deps.kube.listPods({ nodeName }), nowMs, deadline);
  const deletedEarly: string[] = [];
  for (const { pod, graceSeconds } of plan.deleteEarly) {
    await deps.kube.deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, graceSeconds);
    deletedEarly.push(podKey(pod));
  }
  const evicted: string[] = [];
  const blocked: string[] = [];
  if (!plan.deadlineReached) {
    for (const pod of plan.evict) {
      const r = await deps.kube.evictPod(pod.metadata.namespace ?? 'default', pod.metadata.name);
      (r === 'blocked' ? blocked : evicted).push(podKey(pod));
    }
  }
  if (evicted.length || deletedEarly.length || blocked.length) {
    deps.log?.info('draining node', { Node: nodeName, NodeClaim: input.nodeClaim, evicted, blockedByPdb: blocked, deletedEarly, attempt });
  }
  // Re-read after acting so a node whose pods left at once is reported drained without a wait.
  const after = evicted.length || deletedEarly.length ? planDrain(await deps.kube.listPods({ nodeName }), nowMs, deadline) : plan;
  const finished = after.drained || after.deadlineReached;
  const continueAsNew = !finished && attempt >= MaxDrainLoopsPerExecution;
  if (continueAsNew) deps.log?.info('drain continues as a new execution', { Node: nodeName, NodeClaim: input.nodeClaim, rounds: attempt, attempt: input.attempt ?? 1 });
  return {
    continueAsNew,
    done: after.drained,
    deadlineReached: after.deadlineReached,
    retryAfterSeconds: after.drained || after.deadlineReached ? 0 : drainWaitSeconds(attempt, nowMs, after.nextEventMs, deadline !== undefined),
    attempt,
    evicted: evicted.slice(0, ListedPods),
    blocked: blocked.slice(0, ListedPods),
    deletedEarly: deletedEarly.slice(0, ListedPods),
    remaining: after.blocking.slice(0, ListedPods).map(podKey),
    remainingCount: after.blocking.length,
  };
}

/**
 * Writes the drain's sign of life on the claim (`termination.heartbeatAt`) when the last one is
 * older than TerminationHeartbeatSeconds, so gc can tell a lost execution from a long drain. Only
 * the attempt the claim names writes (a superseded execution does not).
 */
async function heartbeat(input: TaskInput, deps: Pick<TerminationDeps, 'store'>, nowMs: number): Promise<void> {
  await updateClaim(deps.store, input.nodeClaim, (c) => {
    const t = c.termination;
    if (!t || c.phase !== 'Terminating' || t.attempt !== (input.attempt ?? 1)) return undefined;
    if (t.heartbeatAt && nowMs - Date.parse(t.heartbeatAt) < TerminationHeartbeatSeconds * 1000) return undefined;
    return { ...c, termination: { ...t, heartbeatAt: new Date(nowMs).toISOString() } };
  });
}

/** Lambda handler (statemachines/termination.asl.json Task Resource). */
export const handler = taskHandler('termination-drain', run);
