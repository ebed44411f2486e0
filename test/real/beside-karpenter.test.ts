/**
 * Karpenter's own controller beside nodefleet on the real tier (issue 25 item 5, docs/migration.md):
 * scenario test/real/scenarios/beside-karpenter-kwok.yaml with Karpenter's kwok controller
 * (test/real/control-plane/karpenter.ts) managing NodePool `kwok` and nodefleet, deployed with
 * besideKarpenter, managing NodePool `nf`. Both scale their own NodePool up and down (the
 * scenario's waits and expectations); the API server's audit log then shows that no nodefleet
 * identity wrote to a node, NodeClaim, pod or NodePool of Karpenter's, and Karpenter to none of
 * nodefleet's (test/real/beside.ts), and every TerminateInstances the local EC2 got named an
 * instance nodefleet launched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../infra/local/scenario.ts';
import { runScenario } from '../../infra/local/runner.ts';
import { realClusterWith, type RealCluster } from './scenarios/real-cluster.ts';
import { KarpenterUser } from './control-plane/karpenter.ts';
import { AgentIdentity, functionIdentities } from './rbac.ts';
import { besideVerdict, Owners, readAuditWrites, type AuditWrite, type BesideVerdict } from './beside.ts';

const scenario = loadScenario(join(import.meta.dirname, 'scenarios', 'beside-karpenter-kwok.yaml'));
const workDir = mkdtempSync(join(tmpdir(), 'nodefleet-beside-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** Every user nodefleet's code sends as on this tier (real-cluster.ts: the functions, the termination tasks' one user, the agent). */
const NodefleetUsers = new Set([...functionIdentities().map((f) => f.user), 'nodefleet-termination', AgentIdentity.user]);

describe('real tier: Karpenter (kwok provider) beside nodefleet', () => {
  it(
    'each scales its own NodePool up and down; neither writes to the other’s nodes, NodeClaims, pods or NodePools',
    async () => {
      const lines: string[] = [];
      const owners = new Owners();
      let writes: AuditWrite[] = [];
      let terminated: string[] = [];
      let nodefleetInstances = new Set<string>();
      let karpenterErrors: string[] = [];
      const result = await runScenario(scenario, {
        cluster: realClusterWith({ besideKarpenter: true }),
        workDir: join(workDir, scenario.name),
        persist: false,
        failFast: true,
        out: (l) => lines.push(l),
        onStarted: (env) => {
          env.cluster.onChange((e) => owners.see(e.object.kind, e.object as Parameters<Owners['see']>[1]));
        },
        keepUntil: async (env) => {
          const c = env.cluster as RealCluster;
          writes = readAuditWrites(c.cp.auditLog);
          karpenterErrors = c.karpenter?.errors() ?? ['karpenter: not running'];
          terminated = env.ec2.calls.filter((x) => x.action === 'TerminateInstances').flatMap((x) => x.detail as string[]);
          nodefleetInstances = new Set(
            [...env.ec2.instances.values()].filter((i) => !i.preexisting && i.tags['nodefleet.io/cluster'] === scenario.clusterName).map((i) => i.instanceId),
          );
        },
      });
      const failed = result.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
      process.stdout.write(`${scenario.name}: ${result.ok ? 'ok' : 'FAILED'} in ${result.realSeconds.toFixed(0)} s\n`);
      if (failed.length) process.stdout.write(`${lines.join('\n')}\n`);
      expect(failed).toEqual([]);

      const verdict: BesideVerdict = besideVerdict(writes, owners, {
        nodefleet: { users: NodefleetUsers, pools: new Set(['nf']) },
        karpenter: { users: new Set([KarpenterUser]), pools: new Set(['kwok']) },
      });
      process.stdout.write(`${scenario.name}: own writes ${JSON.stringify(verdict.own)}\n`);
      expect(verdict.trespasses).toEqual([]);
      // The audit saw each side remove its own nodes (so it would have seen a trespass): nodefleet
      // cordons and deletes its Nodes; Karpenter taints (a patch or update) and deletes its own.
      expect(verdict.own.nodefleet.nodes ?? 0).toBeGreaterThan(0);
      expect(verdict.own.karpenter.nodes ?? 0).toBeGreaterThan(0);
      expect(verdict.own.karpenter.nodeclaims ?? 0).toBeGreaterThan(0);
      // Karpenter's nodes are not EC2 instances: every TerminateInstances named one of nodefleet's.
      expect([...new Set(terminated)].sort()).toEqual([...nodefleetInstances].sort());
      expect(nodefleetInstances.size).toBe(2);
      // Karpenter simulates every pending pod, nodefleet's too, and logs at ERROR that it cannot
      // schedule those (no NodePool of its own fits): its only errors, and only for nodefleet's pods.
      const unexpected = karpenterErrors.filter((l) => {
        const e = JSON.parse(l) as { message?: string; Pod?: { name?: string } };
        return !(e.message === 'could not schedule pod' && e.Pod?.name?.startsWith('on-nodefleet-'));
      });
      expect(unexpected).toEqual([]);
    },
    (scenario.timeout + 300) * 1000,
  );
});
