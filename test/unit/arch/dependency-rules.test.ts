/**
 * The architecture rules in .dependency-cruiser.cjs, run by the real dependency-cruiser CLI over a
 * small tree written to a temp folder: every forbidden import in the table is reported under the
 * right rule, and every allowed one is not.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** path → source; imports only (the rules look at nothing else). */
const tree: Record<string, string> = {
  'shared/api/a.ts':
    "import { z } from 'zod'; import { parse } from 'yaml'; import { CronExpressionParser } from 'cron-parser'; import { createHash } from 'node:crypto'; import { x } from '../catalog/c.ts'; import fs from 'node:fs'; export const a = 1;",
  'shared/api/b.ts': "import { EC2Client } from '@aws-sdk/client-ec2'; export const b = 1;",
  'shared/catalog/c.ts': "import { a } from '../api/a.ts'; import { s } from '../scheduling/s.ts'; export const x = 1;",
  'shared/scheduling/s.ts': "import { d } from '../disruption/d.ts'; export const s = 1;",
  'shared/disruption/d.ts':
    "import { s } from '../scheduling/s.ts'; import { k } from '../kube/k.ts'; import { CronExpressionParser } from 'cron-parser'; import { h } from '../../functions/gc/handler.ts'; export const d = 1;",
  'shared/aws/w.ts':
    "import { EC2Client } from '@aws-sdk/client-ec2'; import { x } from '../catalog/c.ts'; import { s } from '../scheduling/s.ts'; import { Logger } from '@aws-lambda-powertools/logger'; export const w = 1;",
  'shared/aws/eventbridge-publisher.ts': 'export const e = 1;',
  'shared/kube/k.ts': "import * as k8s from '@kubernetes/client-node'; import { w } from '../aws/w.ts'; export const k = 1;",
  'shared/runtime/r.ts':
    "import middy from '@middy/core'; import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware'; import { w } from '../aws/w.ts'; import { s } from '../scheduling/s.ts'; export const r = 1;",
  'functions/gc/handler.ts':
    "import { p } from '../provisioner/handler.ts'; import { l } from '../../infra/local/l.ts'; import * as k8s from '@kubernetes/client-node'; export const h = 1;",
  'functions/provisioner/handler.ts': "import { r } from '../../shared/runtime/r.ts'; import { s } from '../../shared/scheduling/s.ts'; export const p = 1;",
  'functions/agent/main.ts':
    "import { s } from '../../shared/scheduling/s.ts'; import { w } from '../../shared/aws/w.ts'; import { e } from '../../shared/aws/eventbridge-publisher.ts'; export const m = 1;",
  'functions/cli/main.ts': "import { p } from '../provisioner/handler.ts'; import { l } from '../../infra/local/l.ts'; export const c = 1;",
  'infra/aws/stack.ts':
    "import * as cdk from 'aws-cdk-lib'; import fs from 'node:fs'; import { a } from '../../shared/api/a.ts'; import { l } from '../local/l.ts'; export const st = 1;",
  'infra/local/l.ts':
    "import { h } from '../../functions/gc/handler.ts'; import { x } from '../../shared/catalog/c.ts'; import { st } from '../aws/stack.ts'; import { w } from '../../shared/aws/w.ts'; import { EC2Client } from '@aws-sdk/client-ec2'; import { Stack } from 'aws-cdk-lib'; import { nope } from './missing.ts'; export const l = 1;",
  'infra/local/l.test.ts': "import { EC2Client } from '@aws-sdk/client-ec2'; export const t = 1;",
};

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: unknown[];
}

let dir: string;
let found: string[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'nodefleet-depcruise-'));
  for (const [path, source] of Object.entries(tree)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), source + '\n');
  }
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  copyFileSync(join(repo, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  copyFileSync(join(repo, 'package.json'), join(dir, 'package.json'));
  // The real rules; preserveSymlinks keeps node_modules paths as `node_modules/…` in the temp tree.
  writeFileSync(
    join(dir, 'rules.cjs'),
    `const c = require(${JSON.stringify(join(repo, '.dependency-cruiser.cjs'))});\n` +
      'module.exports = { ...c, options: { ...c.options, preserveSymlinks: true } };\n',
  );
  let out: string;
  try {
    out = execFileSync(
      process.execPath,
      [
        join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
        'functions',
        'shared',
        'infra',
        '--config',
        'rules.cjs',
        '--output-type',
        'json',
      ],
      {
        cwd: dir,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
  } catch (err) {
    out = (err as { stdout: string }).stdout; // exit code 1 when violations are found
  }
  const violations = (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
  found = violations.filter((v) => !v.cycle?.length).map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')}`);
  found.push(...violations.filter((v) => v.cycle?.length).map((v) => `${v.rule.name}: ${v.from}`));
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('.dependency-cruiser.cjs', () => {
  it('reports every forbidden import under its rule', () => {
    const expected = [
      'api-imports-nothing-else: shared/api/a.ts → fs',
      'api-imports-nothing-else: shared/api/a.ts → shared/catalog/c.ts',
      'api-imports-nothing-else: shared/api/b.ts → @aws-sdk/client-ec2',
      'aws-sdk-only-in-shared-aws: shared/api/b.ts → @aws-sdk/client-ec2',
      'catalog-imports-api: shared/catalog/c.ts → shared/scheduling/s.ts',
      'scheduling-imports-api-catalog: shared/scheduling/s.ts → shared/disruption/d.ts',
      'disruption-imports-api-catalog-scheduling: shared/disruption/d.ts → shared/kube/k.ts',
      'disruption-imports-api-catalog-scheduling: shared/disruption/d.ts → functions/gc/handler.ts',
      'shared-stays-in-shared: shared/disruption/d.ts → functions/gc/handler.ts',
      'aws-adapters-layers: shared/aws/w.ts → shared/scheduling/s.ts',
      'powertools-middy-only-in-shared-runtime: shared/aws/w.ts → @aws-lambda-powertools/logger',
      'kube-adapters-layers: shared/kube/k.ts → shared/aws/w.ts',
      'runtime-layers: shared/runtime/r.ts → shared/scheduling/s.ts',
      'function-imports-no-other-function: functions/gc/handler.ts → functions/provisioner/handler.ts',
      'function-imports-no-infra: functions/gc/handler.ts → infra/local/l.ts',
      'kube-client-only-in-shared-kube: functions/gc/handler.ts → @kubernetes/client-node',
      'agent-decides-nothing: functions/agent/main.ts → shared/scheduling/s.ts',
      'agent-decides-nothing: functions/agent/main.ts → shared/aws/w.ts',
      'infra-aws-imports-cdk-and-contract: infra/aws/stack.ts → shared/api/a.ts',
      'infra-aws-imports-cdk-and-contract: infra/aws/stack.ts → infra/local/l.ts',
      'infra-local-layers: infra/local/l.ts → infra/aws/stack.ts',
      'infra-local-layers: infra/local/l.ts → shared/aws/w.ts',
      'aws-sdk-only-in-shared-aws: infra/local/l.ts → @aws-sdk/client-ec2',
      'cdk-only-in-infra-aws: infra/local/l.ts → aws-cdk-lib',
      'no-unresolvable-local: infra/local/l.ts → ./missing.ts',
    ];
    for (const v of expected) expect(found, v).toContain(v);
  });

  it('reports cycles inside shared/ only (infra/aws ↔ infra/local is another rule)', () => {
    const cycles = found.filter((f) => f.startsWith('no-circular-in-shared: '));
    expect(cycles).toContain('no-circular-in-shared: shared/disruption/d.ts'); // d → s → d
    expect(cycles.filter((f) => !f.startsWith('no-circular-in-shared: shared/'))).toEqual([]);
  });

  it('lets the allowed imports through', () => {
    const allowed = [
      'shared/api/a.ts → zod',
      'shared/api/a.ts → yaml',
      'shared/api/a.ts → cron-parser',
      'shared/api/a.ts → crypto',
      'shared/catalog/c.ts → shared/api/a.ts',
      'shared/disruption/d.ts → shared/scheduling/s.ts',
      'shared/disruption/d.ts → cron-parser',
      'shared/aws/w.ts → @aws-sdk/client-ec2',
      'shared/aws/w.ts → shared/catalog/c.ts',
      'shared/kube/k.ts → @kubernetes/client-node',
      'shared/runtime/r.ts → @middy/core',
      'shared/runtime/r.ts → @aws-lambda-powertools/logger',
      'shared/runtime/r.ts → shared/aws/w.ts',
      'functions/provisioner/handler.ts → shared/',
      'functions/agent/main.ts → shared/aws/eventbridge-publisher.ts',
      'functions/cli/main.ts',
      'infra/aws/stack.ts → aws-cdk-lib',
      'infra/aws/stack.ts → fs',
      'infra/local/l.ts → functions/gc/handler.ts',
      'infra/local/l.ts → shared/catalog/c.ts',
      'infra/local/l.test.ts',
    ];
    for (const a of allowed)
      expect(
        found.filter((f) => f.slice(f.indexOf(': ') + 2).startsWith(a)),
        a,
      ).toEqual([]);
  });
});
