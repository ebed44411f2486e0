import { mkdtempSync, mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvironmentBusyError, LocalEnvironment, LockFileName, StateDirName, zonesOf, scheduledEvent } from './environment.ts';
import { loadScenario } from './scenario.ts';

describe('LocalEnvironment', () => {
  it('refuses a state folder another live demo holds, naming its pid', async () => {
    // Prepare: a lock held by a live process (our parent)
    const dir = mkdtempSync(join(tmpdir(), 'nodefleet-lock-'));
    mkdirSync(join(dir, StateDirName));
    writeFileSync(join(dir, StateDirName, LockFileName), String(process.ppid));
    try {
      // Act
      const env = new LocalEnvironment({ scenario: loadScenario('seed-inflate'), workDir: dir });
      const started = env.start();
      // Assess
      await expect(started).rejects.toBeInstanceOf(EnvironmentBusyError);
      await expect(started).rejects.toThrow(`pid ${process.ppid}`);
      expect(existsSync(join(dir, StateDirName, LockFileName))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('knows the four ap-northeast-2 zones with their zone ids', () => {
    expect(zonesOf('ap-northeast-2')).toEqual([
      { zone: 'ap-northeast-2a', zoneId: 'apne2-az1' },
      { zone: 'ap-northeast-2b', zoneId: 'apne2-az2' },
      { zone: 'ap-northeast-2c', zoneId: 'apne2-az3' },
      { zone: 'ap-northeast-2d', zoneId: 'apne2-az4' },
    ]);
  });

  it('builds the scheduled event the disruption and gc functions receive', () => {
    const e = scheduledEvent('ap-northeast-2', 'gc', Date.parse('2026-03-06T15:58:00.400Z'));
    expect(e).toMatchObject({ source: 'aws.events', 'detail-type': 'Scheduled Event', time: '2026-03-06T15:58:00Z', detail: {} });
  });
});
