/**
 * shared/api/settings.ts: Karpenter v1.15's settings and feature gates, parsed with Karpenter's
 * defaults, refused in one line when bad or not supported — at synth (CDK context), at runtime
 * (the functions' environment) and in scenario cases — and read where they take effect.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DefaultSettings, FeatureGateDefaults, parseSettings, SettingDefs, SettingNames, settingsFromCase } from '../../../shared/api/settings.ts';
import { parseRuntimeEnv } from '../../../shared/runtime/env.ts';
import { readSnapshot, type SnapshotDeps } from '../../../functions/disruption/snapshot.ts';
import { NodePoolSchema } from '../../../shared/api/nodepool.ts';
import { fakeWorld } from '../../fakes/index.ts';
import { buildTestStack } from '../infra/stack-fixture.ts';

const baseEnv = { NODEFLEET_CLUSTER_NAME: 'c1', NODEFLEET_TABLE_NAME: 't', AWS_REGION: 'us-east-1' };

describe('settings', () => {
  it("has Karpenter v1.15's defaults", () => {
    expect(DefaultSettings).toMatchObject({
      batchMaxDuration: 10_000,
      batchIdleDuration: 1_000,
      preferencePolicy: 'Respect',
      minValuesPolicy: 'Strict',
      vmMemoryOverheadPercent: 0.075,
      reservedENIs: 0,
      isolatedVPC: false,
    });
    expect(DefaultSettings.featureGates).toEqual({
      NodeRepair: false,
      ReservedCapacity: true,
      SpotToSpotConsolidation: false,
      NodeOverlay: false,
      StaticCapacity: false,
      CapacityBuffer: false,
      TerminateFirstDrift: false,
      TerminateFirstRepair: false,
      PodDeletionCostManagement: false,
    });
    expect(parseSettings({})).toEqual(DefaultSettings);
  });

  it('parses what nodefleet reads', () => {
    const s = parseSettings({
      BATCH_MAX_DURATION: '20s',
      BATCH_IDLE_DURATION: '500ms',
      MIN_VALUES_POLICY: 'BestEffort',
      PREFERENCE_POLICY: 'Ignore',
      VM_MEMORY_OVERHEAD_PERCENT: '0.1',
      RESERVED_ENIS: '1',
      FEATURE_GATES: 'SpotToSpotConsolidation=true',
      CLUSTER_ENDPOINT: 'https://example.eks.amazonaws.com',
      ISOLATED_VPC: 'true',
    });
    expect(s).toMatchObject({
      batchMaxDuration: 20_000,
      batchIdleDuration: 500,
      minValuesPolicy: 'BestEffort',
      preferencePolicy: 'Ignore',
      vmMemoryOverheadPercent: 0.1,
      reservedENIs: 1,
      clusterEndpoint: 'https://example.eks.amazonaws.com',
      isolatedVPC: true,
    });
    expect(s.featureGates).toEqual({ ...FeatureGateDefaults, SpotToSpotConsolidation: true });
  });

  it.each([
    [{ MIN_VALUES_POLICY: 'Loose' }, 'setting MIN_VALUES_POLICY: must be one of Strict, BestEffort, got "Loose"'],
    [{ PREFERENCE_POLICY: 'respect' }, 'setting PREFERENCE_POLICY: must be one of Respect, Ignore, got "respect"'],
    [{ BATCH_IDLE_DURATION: '1 second' }, 'setting BATCH_IDLE_DURATION: "1 second" is not a duration such as 1s, 500ms or 10s'],
    [{ VM_MEMORY_OVERHEAD_PERCENT: '-0.1' }, 'setting VM_MEMORY_OVERHEAD_PERCENT: cannot be negative'],
    [{ RESERVED_ENIS: '-1' }, 'setting RESERVED_ENIS: must be a whole number ≥ 0, got "-1"'],
    [{ CLUSTER_ENDPOINT: 'example.com' }, 'setting CLUSTER_ENDPOINT: "example.com" is not an absolute URL with a host'],
    [{ FEATURE_GATES: 'SpotToSpot=true' }, 'setting FEATURE_GATES: unknown feature gate "SpotToSpot"'],
    [{ FEATURE_GATES: 'CapacityBuffer=true' }, 'setting FEATURE_GATES: CapacityBuffer=true is not supported'],
    [{ FEATURE_GATES: 'NodeOverlay=true' }, 'setting FEATURE_GATES: NodeOverlay=true is not supported'],
  ])('refuses %o in one line', (env, message) => {
    expect(() => parseSettings(env)).toThrow(message);
    const text = (() => {
      try {
        parseSettings(env);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(text.split('\n')).toHaveLength(1);
  });

  it('refuses at synth, naming the context key (the stack passing them: test/unit/infra/stack.test.ts)', () => {
    expect(() => buildTestStack({ FEATURE_GATES: 'CapacityBuffer=true' })).toThrow("context 'FEATURE_GATES': CapacityBuffer=true is not supported");
    expect(() => buildTestStack({ METRICS_PORT: '9090' })).toThrow(/context 'METRICS_PORT': not supported/);
    expect(() => buildTestStack({ MIN_VALUES_POLICY: 'x' })).toThrow(/context 'MIN_VALUES_POLICY'/);
  });

  it('refuses at runtime, naming the variable', () => {
    expect(() => parseRuntimeEnv({ ...baseEnv, FEATURE_GATES: 'CapacityBuffer=true' })).toThrow(
      'environment variable FEATURE_GATES: CapacityBuffer=true is not supported',
    );
    // NodeRepair is implemented (gc, shared/disruption/repair.ts): accepted, off by default as in Karpenter.
    expect(parseRuntimeEnv({ ...baseEnv, FEATURE_GATES: 'NodeRepair=true' }).settings?.featureGates.NodeRepair).toBe(true);
    expect(parseRuntimeEnv({ ...baseEnv, LEGACY_NODE_REPAIR: 'true' }).settings).toBeDefined();
    expect(parseRuntimeEnv({ ...baseEnv, RESERVED_ENIS: '2' }).settings?.reservedENIs).toBe(2);
  });

  it('scenario cases use the same settings (camelCase)', () => {
    expect(settingsFromCase({ featureGates: { SpotToSpotConsolidation: true }, minValuesPolicy: 'BestEffort', reservedENIs: 1 })).toMatchObject({
      minValuesPolicy: 'BestEffort',
      reservedENIs: 1,
      featureGates: { SpotToSpotConsolidation: true },
    });
    expect(() => settingsFromCase({ featureGates: { CapacityBuffer: true } })).toThrow('CapacityBuffer=true is not supported');
  });

  it('disruption reads SpotToSpotConsolidation (off by default) and the scheduling policies', async () => {
    const w = fakeWorld({ start: new Date('2026-03-01T12:00:00Z') });
    w.kube.setNodePools([
      NodePoolSchema.parse({
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        metadata: { name: 'default' },
        spec: { template: { spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements: [] } } },
      }),
    ]);
    const snap = async (env: Record<string, string>) => {
      const deps: SnapshotDeps = { env: parseRuntimeEnv({ ...baseEnv, ...env }), store: w.store, unavailable: w.unavailable, kube: w.kube, budgets: w.budgets };
      return (await readSnapshot(deps, w.clock.now())).settings;
    };
    expect((await snap({}))?.spotToSpotConsolidation).toBe(false);
    const on = await snap({ FEATURE_GATES: 'SpotToSpotConsolidation=true', PREFERENCE_POLICY: 'Ignore' });
    expect(on?.spotToSpotConsolidation).toBe(true);
    expect(on?.scheduling?.preferencePolicy).toBe('Ignore');
  });

  it('docs/settings.md has a row for every Karpenter setting and gate, with its default', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/settings.md'), 'utf8');
    for (const d of SettingDefs) expect(doc).toContain(`| \`${d.name}\` | ${d.default === '' ? '—' : `\`${d.default}\``} |`);
    for (const [gate, on] of Object.entries(FeatureGateDefaults)) expect(doc).toContain(`| \`FEATURE_GATES\` › \`${gate}\` | \`${on}\` |`);
    expect(SettingNames).toHaveLength(new Set(SettingNames).size);
  });
});
