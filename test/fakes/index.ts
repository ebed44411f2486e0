/**
 * In-memory test doubles for every port in shared/api/ports.ts. Each keeps state in memory,
 * records calls (`calls`, `callsOf`), takes injected failures (`failNext`, `failAlways`) and has
 * `reset()`.
 */
export { FakeBase, type RecordedCall } from './fake-base.ts';
export { FixedClock, DefaultFakeEpoch } from './fixed-clock.ts';
export { InMemoryNodeClaimStore } from './in-memory-node-claim-store.ts';
export { FakeCloudProvider, fakePrivateDnsName, type FakeCloudProviderOptions, type FakeOffering } from './fake-cloud-provider.ts';
export { FakeKubeApi, type FakeKubeApiOptions, type PodExit, DefaultPodGraceSeconds, selectorMatches } from './fake-kube-api.ts';
export { InMemoryBudgetCounter } from './in-memory-budget-counter.ts';
export { InMemoryUnavailableOfferings, type UnavailableEntry } from './in-memory-unavailable-offerings.ts';
export { FakeTerminationStarter, FakeTerminationStateMachineArn } from './fake-termination-starter.ts';
export { FakeEventPublisher } from './fake-event-publisher.ts';
export { pod, node, pdb, nodeClaim, nodeClaimOf, type PodOptions, type NodeOptions } from './builders.ts';

import { FixedClock } from './fixed-clock.ts';
import { InMemoryNodeClaimStore } from './in-memory-node-claim-store.ts';
import { FakeCloudProvider, type FakeCloudProviderOptions } from './fake-cloud-provider.ts';
import { FakeKubeApi, type FakeKubeApiOptions } from './fake-kube-api.ts';
import { InMemoryBudgetCounter } from './in-memory-budget-counter.ts';
import { InMemoryUnavailableOfferings } from './in-memory-unavailable-offerings.ts';
import { FakeTerminationStarter } from './fake-termination-starter.ts';
import { FakeEventPublisher } from './fake-event-publisher.ts';

/** Every fake, wired to one shared FixedClock. */
export interface FakeWorld {
  clock: FixedClock;
  store: InMemoryNodeClaimStore;
  cloud: FakeCloudProvider;
  kube: FakeKubeApi;
  budgets: InMemoryBudgetCounter;
  unavailable: InMemoryUnavailableOfferings;
  starter: FakeTerminationStarter;
  publisher: FakeEventPublisher;
  /** Resets every fake and the clock. */
  reset(): void;
}

/** Builds one of each fake sharing a clock (start default 2026-01-01T00:00:00Z). */
export function fakeWorld(
  opts: { start?: string | number | Date; cloud?: Omit<FakeCloudProviderOptions, 'clock'>; kube?: Omit<FakeKubeApiOptions, 'clock'> } = {},
): FakeWorld {
  const clock = new FixedClock(opts.start);
  const w = {
    clock,
    store: new InMemoryNodeClaimStore(),
    cloud: new FakeCloudProvider({ ...opts.cloud, clock }),
    kube: new FakeKubeApi({ ...opts.kube, clock }),
    budgets: new InMemoryBudgetCounter(),
    unavailable: new InMemoryUnavailableOfferings(),
    starter: new FakeTerminationStarter(),
    publisher: new FakeEventPublisher(),
    reset() {
      clock.reset();
      for (const f of [w.store, w.cloud, w.kube, w.budgets, w.unavailable, w.starter, w.publisher]) f.reset();
    },
  };
  return w;
}
export { InMemoryClusterViewStore } from './in-memory-cluster-view-store.ts';
