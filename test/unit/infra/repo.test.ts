/**
 * The stack against the repository as it is: the real statemachines/termination.asl.json and the
 * real function entries. NodejsFunction is used as in `npm run synth`, but with bundling skipped
 * (CDK context `aws:cdk:bundling-stacks: []`) so the test does not run esbuild.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TerminationTaskFunctions } from '../../../shared/api/termination.ts';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { readConfig } from '../../../infra/aws/config.ts';
import { Functions, TerminationTaskPermissions } from '../../../infra/aws/functions.ts';
import { NodefleetStack } from '../../../infra/aws/nodefleet-stack.ts';
import { readTerminationDefinition, type TerminationDefinition } from '../../../infra/aws/termination.ts';

const exportsHandler = (file: string) =>
  /export\s+(const|async function|function|let)\s+handler\b|export\s*\{[^}]*\bhandler\b[^}]*\}/.test(readFileSync(join(RepoRoot, file), 'utf8'));

describe('the stack against the repository', { timeout: 240_000 }, () => {
  let definition: TerminationDefinition | undefined;
  beforeAll(() => {
    definition = readTerminationDefinition(RepoRoot);
  });

  it('derives the task functions from statemachines/termination.asl.json as shared/api/termination.ts names them', () => {
    expect(definition, 'statemachines/termination.asl.json').toBeDefined();
    const derived = Object.fromEntries(definition!.tasks.map((t) => [t.substitution, t.entry]));
    const declared = Object.fromEntries(Object.entries(TerminationTaskFunctions).map(([k, file]) => [k, `functions/termination/${file}.ts`]));
    expect(derived).toEqual(declared);
  });

  it('has an entry exporting `handler` for every termination task', () => {
    for (const t of definition!.tasks) {
      expect(existsSync(join(RepoRoot, t.entry)), t.entry).toBe(true);
      expect(exportsHandler(t.entry), `${t.entry} exports handler`).toBe(true);
    }
  });

  it('declares least-privilege permissions for the seven tasks known today (a new task gets table + kube until listed)', () => {
    expect(Object.keys(TerminationTaskPermissions).sort()).toEqual([
      'Cordon',
      'Cutoff',
      'DeleteNode',
      'Drain',
      'Finalize',
      'RecordFailure',
      'TerminateInstance',
    ]);
    expect(TerminationTaskPermissions.TerminateInstance).toContain('ec2Terminate');
    for (const [task, perms] of Object.entries(TerminationTaskPermissions)) if (task !== 'TerminateInstance') expect(perms, task).not.toContain('ec2Terminate');
  });

  it('finds `handler` in every registry entry that exists', () => {
    for (const f of Functions.filter((x) => existsSync(join(RepoRoot, x.entry)))) expect(exportsHandler(f.entry), f.entry).toBe(true);
  });

  it('builds NodejsFunctions for every existing entry and substitutes every ${…} of the real definition', () => {
    const app = new App({ context: { clusterName: 'repo-check', 'aws:cdk:bundling-stacks': [] } });
    const stack = new NodefleetStack(app, 'Repo', { config: readConfig(app.node), repoRoot: RepoRoot });
    const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    const missing = Functions.filter((f) => !existsSync(join(RepoRoot, f.entry))).map((f) => f.entry);
    expect(stack.missingEntries).toEqual(missing);
    const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(fns).toHaveLength(Functions.length - missing.length + definition!.tasks.length);
    for (const f of fns) expect(f.Properties.Handler).toBe('index.handler');
    const machines = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
    expect(machines.map(([id]) => id.replace(/[A-F0-9]{8}$/, '')).sort()).toEqual(['DisruptionLoop', 'Termination']);
    const sm = machines.find(([id]) => id.startsWith('Termination'))![1];
    const placeholders = [...new Set([...definition!.body.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]))].sort();
    expect(Object.keys(sm.Properties.DefinitionSubstitutions).sort()).toEqual(placeholders);
    // The disruption loop: the real statemachines/disruption-loop.asl.json, its one substitution the disruption function.
    const loop = machines.find(([id]) => id.startsWith('DisruptionLoop'))![1];
    expect(loop.Properties.DefinitionString).toBe(readFileSync(join(RepoRoot, 'statemachines/disruption-loop.asl.json'), 'utf8'));
    expect(loop.Properties.DefinitionSubstitutions).toEqual({
      DisruptionFunctionArn: { 'Fn::GetAtt': [expect.stringMatching(/^Disruption[A-F0-9]{8}$/), 'Arn'] },
    });
  });
});
