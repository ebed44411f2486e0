/**
 * `npm run real-rbac`: starts the real control plane (test/real/control-plane), applies infra/k8s
 * as it ships and checks every nodefleet identity's RBAC (test/real/rbac.ts). Exit 1 on any
 * failed check, 2 when the control plane cannot be built or started.
 */
import { startControlPlane, type ControlPlane } from './control-plane/cluster.ts';
import { applyShipped } from './control-plane/manifests.ts';
import { accessMatrix, AgentIdentity, agentToken, functionIdentities, realRequests, type CheckResult } from './rbac.ts';

/** Starts the tier, runs every check and stops it. */
export async function runRbacChecks(log: (line: string) => void): Promise<CheckResult[]> {
  const fns = functionIdentities();
  let cp: ControlPlane | undefined;
  try {
    cp = await startControlPlane({ identities: Object.fromEntries(fns.map((f) => [f.name, { user: f.user, groups: f.groups }])), log });
    await applyShipped(cp);
    const tokens = { ...cp.tokens, [AgentIdentity.name]: await agentToken(cp) };
    const identities = [...fns, AgentIdentity];
    log(`real-rbac: ${identities.length} identities: ${identities.map((i) => i.name).join(', ')}`);
    return [...(await accessMatrix(cp, identities, tokens)), ...(await realRequests(cp, identities, tokens))];
  } finally {
    await cp?.stop();
  }
}

if (import.meta.main) {
  const t0 = Date.now();
  let results: CheckResult[];
  try {
    results = await runRbacChecks((l) => console.error(l));
  } catch (err) {
    console.error(`real-rbac: ${(err as Error).message}`);
    process.exit(2);
  }
  const failed = results.filter((r) => !r.ok);
  for (const f of failed) console.log(`FAIL ${f.identity}: ${f.check}: expected ${f.expected}, got ${f.got}`);
  const ids = new Set(results.map((r) => r.identity)).size;
  const reviews = results.filter((r) => r.check.startsWith('access ')).length;
  console.log(
    `real-rbac: ${ids} identities, ${results.length} checks (${reviews} access reviews, ${results.length - reviews} real requests and identity checks), ${failed.length} failed (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  process.exit(failed.length ? 1 : 0);
}
