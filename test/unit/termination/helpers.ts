/** Shared setup for the termination tests: a fake world with one node, its instance and claim. */
import { createLocalTermination } from '../../../infra/local/sfn.ts';
import { fakeWorld, node, nodeClaim, type FakeWorld } from '../../fakes/index.ts';
import type { TerminationInput } from '../../../shared/api/ports.ts';
import type { ExecutionRecord } from '../../../shared/api/termination.ts';
import type { MetricsSink } from '../../../shared/runtime/observability.ts';

export const NodeName = 'ip-10-0-1-23.ec2.internal';
export const InstanceId = 'i-0abc1234def56789a';
export const ClaimName = 'default-x7k2p';
export const ProviderId = `aws:///us-east-1a/${InstanceId}`;
/** The tags a launch sets (shared/aws/ec2.ts launchTags): cluster (the fake claim's `test`), NodePool, NodeClaim. */
export const InstanceTags = { 'nodefleet.io/cluster': 'test', 'karpenter.sh/nodepool': 'default', 'karpenter.sh/nodeclaim': ClaimName };

export interface Harness {
  w: FakeWorld;
  /** Start instant, epoch ms. */
  t0: number;
  /** Clock time of each cloud.terminate call (epoch ms). */
  terminateCalls: number[];
  run(input?: Partial<TerminationInput>): Promise<ExecutionRecord>;
  /** The local Step Functions and its starter (gc restarts attempts through it). */
  sfn: ReturnType<typeof createLocalTermination>['sfn'];
  starter: ReturnType<typeof createLocalTermination>['starter'];
  statesVisited(rec: ExecutionRecord): string[];
}

/** One Ready node with a claim and a running instance; Waits advance the FixedClock instantly. */
export function harness(opts: { withNode?: boolean; withInstance?: boolean; metrics?: MetricsSink } = {}): Harness {
  const w = fakeWorld({ kube: { podTermination: 'graceful' } });
  const t0 = w.clock.nowMs();
  w.store.put(
    nodeClaim({
      name: ClaimName,
      nodeName: NodeName,
      instanceId: InstanceId,
      providerId: ProviderId,
      instanceType: 'm5.large',
      zone: 'us-east-1a',
      capacityType: 'on-demand',
    }),
  );
  if (opts.withNode !== false) w.kube.addNode(node({ name: NodeName, providerID: ProviderId, labels: { 'karpenter.sh/nodepool': 'default' } }));
  if (opts.withInstance !== false) w.cloud.addInstance({ instanceId: InstanceId, tags: InstanceTags });
  const terminateCalls: number[] = [];
  const terminate = w.cloud.terminate.bind(w.cloud);
  w.cloud.terminate = async (id: string) => {
    terminateCalls.push(w.clock.nowMs());
    return terminate(id);
  };
  const { sfn, starter } = createLocalTermination(
    {
      kube: w.kube,
      cloud: w.cloud,
      store: w.store,
      budgets: w.budgets,
      clock: w.clock,
      publisher: w.publisher,
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
    },
    { wait: (s) => w.clock.advanceSeconds(s), retryPauseMs: 0 },
  );
  return {
    w,
    t0,
    sfn,
    starter,
    terminateCalls,
    async run(input = {}) {
      // The deadline is the claim's, not the input's (shared/api/termination-target.ts): a test
      // asking for a deadline on a claim with no grace period of its own gives the claim the grace
      // period that makes it so. A claim with its own grace period or notice is left as it is.
      const c = w.store.peek(ClaimName);
      if (input.deadlineEpochMs != null && c && c.terminationGracePeriodSeconds === undefined && c.noticeDeadlineEpochMs === undefined && !c.termination) {
        w.store.put({ ...c, terminationGracePeriodSeconds: Math.max(0, (input.deadlineEpochMs - w.clock.nowMs()) / 1000) });
      }
      const arn = await starter.start({ nodeClaim: ClaimName, reason: 'consolidation', ...input });
      return sfn.waitForExecution(arn.split(':').pop()!);
    },
    statesVisited(rec) {
      return rec.events.filter((e) => e.type.endsWith('StateEntered')).map((e) => e.stateName!);
    },
  };
}
