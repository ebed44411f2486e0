import { describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { LocalCluster } from '../../../infra/local/kube/index.ts';
import { c5a2xlarge } from './builders.ts';

describe('background reconciles on a compressed clock', () => {
  it('a 60 s boot delay passes in about a second of real time at 100x', async () => {
    const start = Date.now();
    const clock = { now: () => new Date(start + (Date.now() - start) * 100) };
    const cluster = new LocalCluster({ clock, reconcileIntervalMs: 20 });
    await cluster.start();
    try {
      const kc = new KubeConfig();
      kc.loadFromString(cluster.kubeconfig());
      const core = kc.makeApiClient(CoreV1Api);
      const { nodeName } = cluster.addInstance(c5a2xlarge('i-0fast', { bootDelaySeconds: 60, readyDelaySeconds: 30, startupTaints: [] }));
      expect((await core.listNode()).items).toHaveLength(0);
      let ready = false;
      while (!ready && Date.now() - start < 5000) {
        await new Promise((r) => setTimeout(r, 50));
        const n = (await core.listNode()).items.find((x) => x.metadata?.name === nodeName);
        ready = n?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      }
      const realMs = Date.now() - start;
      expect(ready).toBe(true);
      expect(realMs).toBeGreaterThanOrEqual(850); // 90 cluster seconds / 100
      expect(realMs).toBeLessThan(3000);
    } finally {
      await cluster.stop();
    }
  });
});

describe('idle background passes are skipped until something is due', () => {
  it('still starts pods after podStartupSeconds and finishes terminations on time', async () => {
    const start = Date.now();
    const clock = { now: () => new Date(start + (Date.now() - start) * 100) };
    const cluster = new LocalCluster({ clock, reconcileIntervalMs: 10, podStartupSeconds: 30, podTerminationSeconds: 40 });
    await cluster.start();
    try {
      cluster.addInstance(c5a2xlarge('i-0idle', { startupTaints: [] }));
      cluster.apply([
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', namespace: 'default' },
          spec: { containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
        },
      ]);
      const waitFor = async (f: () => boolean) => {
        while (!f() && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 20));
        return Date.now() - start;
      };
      const runningAfter = await waitFor(() => cluster.pods()[0]?.status?.phase === 'Running');
      expect(runningAfter).toBeGreaterThanOrEqual(280); // 30 cluster seconds
      expect(runningAfter).toBeLessThan(1500);
      const deletedAt = Date.now() - start;
      cluster.delete('v1', 'Pod', 'p', 'default');
      const goneAfter = await waitFor(() => cluster.pods().length === 0);
      expect(goneAfter - deletedAt).toBeGreaterThanOrEqual(280); // capped at the 30 s grace period, not the 40 s stop time
      expect(goneAfter - deletedAt).toBeLessThan(1500);
    } finally {
      await cluster.stop();
    }
  });
});
