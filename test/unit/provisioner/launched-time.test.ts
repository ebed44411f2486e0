import { describe, expect, it } from 'vitest';
import { run, parseInput } from '../../../functions/provisioner/handler.ts';
import { getCondition } from '../../../shared/api/nodeclaim.ts';
import { pendingPod, provisionerWorld, unschedulableEvent } from './world.ts';

describe('Launched condition time', () => {
  it('is the instant CreateFleet returned, not the start of the pass', async () => {
    // Prepare: CreateFleet takes 10 s
    const pods = [pendingPod('inflate-0', '1')];
    const { w, deps } = provisionerWorld({ pods });
    const passStart = w.clock.nowIso();
    const create = w.cloud.create.bind(w.cloud);
    w.cloud.create = async (...args) => {
      const out = await create(...args);
      w.clock.advanceSeconds(10);
      return out;
    };
    // Act
    await run(parseInput(unschedulableEvent(pods)), deps);
    // Assess
    const claim = (await w.store.list())[0];
    expect(claim.createdAt).toBe(passStart);
    expect(getCondition(claim, 'Launched')?.lastTransitionTime).toBe(new Date(Date.parse(passStart) + 10_000).toISOString());
  });
});
