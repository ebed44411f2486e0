import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listScenarioNames, loadScenario, parseScenario, ScenarioError } from './scenario.ts';
import { kubeletFlags } from './environment.ts';

describe('scenario files', () => {
  it('lists every scenario file in the folder (so npm test runs each), including the four the CLI contract names', () => {
    const files = readdirSync(join(dirname(fileURLToPath(import.meta.url)), 'scenarios'))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => f.replace(/\.yaml$/, ''));
    expect(listScenarioNames()).toEqual([...files].sort());
    expect(listScenarioNames()).toEqual(expect.arrayContaining(['seed-inflate', 'web-stateful', 'spot-interruption', 'stuck-drain', 'static-capacity']));
  });

  it.each(['seed-inflate', 'web-stateful', 'spot-interruption', 'stuck-drain', 'static-capacity'])('%s parses, and its name is its file name', (name) => {
    const s = loadScenario(name);
    expect(s.name).toBe(name);
    expect(s.timeline.length).toBeGreaterThan(1);
  });

  it('reads the seed facts: ap-northeast-2, two m5.large managed nodes, inflate 0 → 5 at t=30s', () => {
    const s = loadScenario('seed-inflate');
    expect(s.region).toBe('ap-northeast-2');
    expect(s.cluster.nodes.map((n) => n.instanceType)).toEqual(['m5.large', 'm5.large']);
    expect(s.timeline[0]).toMatchObject({ at: 30, scale: { deployment: 'inflate', replicas: 5 } });
    expect(s.expect.launched).toEqual({ count: 1, instanceTypes: ['c5a.2xlarge'], capacityTypes: ['on-demand'] });
  });

  it('names the file and the path of a bad field', () => {
    const bad = 'name: x\nabout: y\ncluster: {}\ntimeline:\n  - { at: soon, scale: { deployment: a, replicas: 1 } }\n';
    expect(() => parseScenario(bad, 'bad.yaml')).toThrow(ScenarioError);
    expect(() => parseScenario(bad, 'bad.yaml')).toThrow(/bad\.yaml: timeline\.0\.at: "soon" is not a duration/);
  });

  it('rejects a step that does two things', () => {
    const bad = 'name: x\nabout: y\ncluster: {}\ntimeline:\n  - { scale: { deployment: a, replicas: 1 }, mark: m }\n';
    expect(() => parseScenario(bad, 'two.yaml')).toThrow(/a timeline step does one thing/);
  });
});

describe('kubeletFlags', () => {
  it('reads --node-labels and --register-with-taints from nodeadm user data', () => {
    const ud = Buffer.from(
      'flags:\n  - "--node-labels=karpenter.sh/nodepool=stateful,workload=stateful"\n  - "--register-with-taints=workload=stateful:NoSchedule,karpenter.sh/unregistered:NoExecute"\n',
    ).toString('base64');
    expect(kubeletFlags(ud)).toEqual({
      labels: { 'karpenter.sh/nodepool': 'stateful', workload: 'stateful' },
      taints: [
        { key: 'workload', value: 'stateful', effect: 'NoSchedule' },
        { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
      ],
    });
  });

  it('reads Bottlerocket settings TOML and the Windows bootstrap flags', () => {
    const want = {
      labels: { 'karpenter.sh/nodepool': 'br' },
      taints: [
        { key: 'workload', value: 'x', effect: 'NoSchedule' },
        { key: 'karpenter.sh/unregistered', effect: 'NoExecute' },
      ],
    };
    const toml =
      '[settings.kubernetes]\ncluster-name = "c"\n\n[settings.kubernetes.node-labels]\n"karpenter.sh/nodepool" = "br"\n\n[settings.kubernetes.node-taints]\nworkload = ["x:NoSchedule"]\n"karpenter.sh/unregistered" = [":NoExecute"]\n';
    expect(kubeletFlags(Buffer.from(toml).toString('base64'))).toEqual(want);
    const ps = `<powershell>\n& $EKSBootstrapScriptFile -EKSClusterName 'c' -KubeletExtraArgs '--node-labels="karpenter.sh/nodepool=br" --register-with-taints="workload=x:NoSchedule,karpenter.sh/unregistered:NoExecute" --max-pods=110'\n</powershell>`;
    expect(kubeletFlags(Buffer.from(ps).toString('base64'))).toEqual(want);
  });
});
