import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCase } from '../../../functions/cli/cases/load.ts';
import { formatReport, runCase } from '../../../functions/cli/cases/runner.ts';

const dir = mkdtempSync(join(tmpdir(), 'nodefleet-cases-'));
function write(name: string, text: string): string {
  const f = join(dir, `${name}.yaml`);
  writeFileSync(f, text);
  return f;
}

const pool = `nodePools:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: { name: default }
    spec:
      template:
        spec:
          nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }
          requirements: [{ key: karpenter.sh/capacity-type, operator: In, values: [on-demand] }]
instanceTypes:
  - { name: std, cpu: 4, memoryMiB: 16384, zones: [us-east-1a], capacityTypes: [on-demand], price: { on-demand: 0.2 } }
objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: { name: web }
    spec:
      replicas: 2
      template: { metadata: { labels: { app: web } }, spec: { containers: [{ name: a, resources: { requests: { cpu: "1" } } }] } }
`;

describe('case runner', () => {
  it('a knownDifference case that fails is reported, not failed; one that passes fails', async () => {
    const diff = await runCase(loadCase(write('diff', `name: diff\nknownDifference: counts claims differently\n${pool}expect:\n  nodeClaims: 3\n`)));
    expect(diff.status).toBe('known-difference');
    expect(formatReport([diff])).toMatch(/^DIFF diff: counts claims differently \| .*\n0 passed, 0 failed, 1 known differences$/);
    const stale = await runCase(loadCase(write('stale', `name: stale\nknownDifference: was different once\n${pool}expect:\n  nodeClaims: 1\n`)));
    expect(stale.status).toBe('failed');
    expect(stale.messages[0]).toMatch(/remove the marker/);
  });

  it('passes a case whose expectations hold', async () => {
    const r = await runCase(
      loadCase(write('ok', `name: ok\n${pool}expect:\n  scheduled: all\n  nodeClaims: 1\n  nodeClaimsMatch: [{ nodePool: default, instanceTypeIn: [std] }]\n`)),
    );
    expect(r).toMatchObject({ status: 'passed', messages: [] });
  });

  it('fails with expected vs got', async () => {
    const r = await runCase(loadCase(write('wrong', `name: wrong\n${pool}expect:\n  nodeClaims: 3\n`)));
    expect(r.status).toBe('failed');
    expect(r.messages[0]).toMatch(/^nodeClaims: expected 3, got 1/);
  });

  it('fails a case with an unknown key, a typo under expect, or no expect', async () => {
    expect((await runCase(loadCase(write('typo', `name: typo\n${pool}expect:\n  nodeClaim: 1\n`)))).messages).toEqual(['unknown key "expect.nodeClaim"']);
    expect((await runCase(loadCase(write('extra', `name: extra\nwhatever: 1\n${pool}expect:\n  nodeClaims: 1\n`)))).messages).toEqual([
      'unknown key "whatever"',
    ]);
    expect((await runCase(loadCase(write('none', `name: none\n${pool}`)))).messages).toEqual(['no expect']);
  });

  it('fails a misspelled key at any depth, naming its path', async () => {
    const msg = async (n: string, body: string) => (await runCase(loadCase(write(n, `name: ${n}\n${pool}${body}`)))).messages;
    expect(await msg('crit', 'expect:\n  nodeClaimsMatch: [{ instanceType: [no-such-type] }]\n')).toEqual([
      'unknown key "expect.nodeClaimsMatch[0].instanceType"',
    ]);
    expect(await msg('all', 'expect:\n  allNodeClaims: { launchTypes: { offerings: { zone: z } } }\n')).toEqual([
      'unknown key "expect.allNodeClaims.launchTypes.offerings"',
    ]);
    expect(await msg('rw', 'expect:\n  replaceWith: { instanceType: [x] }\n')).toEqual(['unknown key "expect.replaceWith.instanceType"']);
    expect(await msg('skew', 'expect:\n  maxSkew: [{ selector: app=web, topologyKey: k, maxSkew: 1 }]\n')).toEqual(['unknown key "expect.maxSkew[0].maxSkew"']);
    expect(await msg('range', 'expect:\n  nodeClaims: { minimum: 1 }\n')).toEqual(['unknown key "expect.nodeClaims.minimum"']);
    expect(await msg('taint', 'expect:\n  nodeClaimsMatch: [{ taints: [{ key: k, efect: NoSchedule }] }]\n')).toEqual([
      'unknown key "expect.nodeClaimsMatch[0].taints[0].efect"',
    ]);
    expect(await msg('settings', 'settings: { minValuePolicy: Strict }\nexpect:\n  nodeClaims: 1\n')).toEqual(['unknown key "settings.minValuePolicy"']);
  });

  it('checks pods per topology domain with domainCounts', async () => {
    const ok = await runCase(
      loadCase(write('dc', `name: dc\n${pool}expect:\n  domainCounts: { selector: app=web, topologyKey: kubernetes.io/hostname, counts: [2] }\n`)),
    );
    expect(ok).toMatchObject({ status: 'passed' });
    const bad = await runCase(
      loadCase(write('dcbad', `name: dcbad\n${pool}expect:\n  domainCounts: { selector: app=web, topologyKey: kubernetes.io/hostname, counts: [1, 1] }\n`)),
    );
    expect(bad.messages[0]).toMatch(/^domainCounts: expected app=web per kubernetes.io\/hostname \[1, 1\], got \[2\]/);
    const zone = await runCase(
      loadCase(write('dczone', `name: dczone\n${pool}expect:\n  domainCounts: { selector: app=web, topologyKey: topology.kubernetes.io/zone, counts: [2] }\n`)),
    );
    expect(zone).toMatchObject({ status: 'passed' });
  });

  it('checks validation errors by substring', async () => {
    const bad = `name: bad\nnodePools:\n  - { apiVersion: karpenter.sh/v1, kind: NodePool, metadata: { name: x }, spec: { template: { spec: { requirements: [] } } } }\nexpect:\n  errors: [nodeClassRef]\n`;
    expect((await runCase(loadCase(write('bad', bad)))).status).toBe('passed');
  });

  it('summarises as N passed, M failed', () => {
    expect(
      formatReport([
        { name: 'a', file: 'a', status: 'passed', messages: [] },
        { name: 'b', file: 'b', status: 'failed', messages: ['x'] },
      ]),
    ).toBe('FAIL b: x\n1 passed, 1 failed');
  });
});

describe('case runner: zones and groups', () => {
  const twoZones = pool.replace('zones: [us-east-1a]', 'zones: [us-east-1a, us-east-1b]');

  it('a claim that may launch in several zones fails a zone check; pinned, it passes', async () => {
    const loose = await runCase(
      loadCase(write('loose', `name: loose\n${twoZones}expect:\n  nodeClaimsMatch: [{ labels: { topology.kubernetes.io/zone: us-east-1a } }]\n`)),
    );
    expect(loose.status).toBe('failed');
    const skew = await runCase(
      loadCase(write('skew', `name: skew\n${twoZones}expect:\n  maxSkew: { selector: app=web, topologyKey: topology.kubernetes.io/zone, skew: 5 }\n`)),
    );
    expect(skew.messages.join()).toMatch(/not pinned to one topology.kubernetes.io\/zone/);
    const pinned = await runCase(
      loadCase(write('pinned', `name: pinned\n${pool}expect:\n  nodeClaimsMatch: [{ labels: { topology.kubernetes.io/zone: us-east-1a } }]\n`)),
    );
    expect(pinned.status).toBe('passed');
  });

  it('runs each case of a group file over the shared keys, with included files and per-case overrides', async () => {
    write('_shared', pool.split('objects:')[0]);
    const objects = 'objects:' + pool.split('objects:')[1];
    const f = write(
      'group',
      `origin: suite_test.go\ninclude: [_shared.yaml]\n${objects}cases:\n  - name: two\n    origin: "It: two"\n    expect: { scheduled: 2 }\n  - name: none\n    objects: []\n    expect: { nodeClaims: 0 }\n  - name: wrong\n    expect: { nodeClaims: 5 }\n`,
    );
    const { loadCaseFile } = await import('../../../functions/cli/cases/load.ts');
    const cases = loadCaseFile(f);
    expect(cases.map((c) => c.name)).toEqual(['group/two', 'group/none', 'group/wrong']);
    expect(cases[0].doc.origin).toBe('suite_test.go: It: two');
    const results = await Promise.all(cases.map(runCase));
    expect(results.map((r) => r.status)).toEqual(['passed', 'passed', 'failed']);
  });
});
