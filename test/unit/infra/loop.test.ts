/**
 * infra/aws/loop.ts: the disruption loop definition the stack deploys, and the checks that keep a
 * loop's state machine role to lambda:InvokeFunction on its own function.
 */
import { describe, expect, it } from 'vitest';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { Functions } from '../../../infra/aws/functions.ts';
import { LoopDefinitionError, loopSubstitution, parseLoopDefinition, readLoopDefinition } from '../../../infra/aws/loop.ts';

const task = (resource: string) => JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Task', Resource: resource, End: true } } });

describe('loop definitions', () => {
  it('reads statemachines/disruption-loop.asl.json: one substitution, the disruption function, 1 h execution timeout', () => {
    const spec = Functions.find((f) => f.name === 'disruption')!;
    expect(spec.trigger).toEqual({ kind: 'loop', minutes: 1, definition: 'statemachines/disruption-loop.asl.json' });
    const def = readLoopDefinition(RepoRoot, 'statemachines/disruption-loop.asl.json', 'disruption')!;
    expect(def.substitution).toBe('DisruptionFunctionArn');
    expect(def.timeoutSeconds).toBe(3600);
    const doc = JSON.parse(def.body);
    expect(doc.States.Disrupt.Resource).toBe('${DisruptionFunctionArn}');
  });

  it('names the substitution after the function', () => {
    expect(loopSubstitution('disruption')).toBe('DisruptionFunctionArn');
  });

  it('rejects other substitutions, other Task resources, no Task and invalid JSON', () => {
    expect(() => parseLoopDefinition(task('${GcFunctionArn}'), 'disruption', 'x.json')).toThrow(/unknown substitution.*GcFunctionArn/);
    expect(() => parseLoopDefinition(task('arn:aws:states:::dynamodb:putItem'), 'disruption', 'x.json')).toThrow(LoopDefinitionError);
    expect(() => parseLoopDefinition(JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Pass', End: true } } }), 'disruption', 'x.json')).toThrow(/no Task/);
    expect(() => parseLoopDefinition('{', 'disruption', 'x.json')).toThrow(/not valid JSON/);
    expect(parseLoopDefinition(task('${DisruptionFunctionArn}'), 'disruption', 'x.json').timeoutSeconds).toBeUndefined();
  });

  it('is undefined for a missing file (the stack then skips the function with a warning)', () => {
    expect(readLoopDefinition(RepoRoot, 'functions/disruption/nope.asl.json', 'disruption')).toBeUndefined();
  });
});
