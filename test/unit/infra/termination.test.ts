import { describe, expect, it } from 'vitest';
import { kebab, parseTerminationDefinition, TerminationDefinitionError } from '../../../infra/aws/termination.ts';

const task = (resource: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ StartAt: 'A', States: { A: { Type: 'Task', Resource: resource, End: true, ...extra } } });

describe('parseTerminationDefinition', () => {
  it('maps ${XxxFunctionArn} to functions/termination/<kebab>.ts and keeps resource substitutions', () => {
    const def = parseTerminationDefinition(
      JSON.stringify({
        StartAt: 'A',
        States: {
          A: { Type: 'Task', Resource: '${TerminateInstanceFunctionArn}', Next: 'B' },
          B: {
            Type: 'Parallel',
            Branches: [
              {
                StartAt: 'C',
                States: { C: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', Parameters: { TableName: '${TableName}' }, End: true } },
              },
            ],
            End: true,
          },
        },
      }),
    );
    expect(def.tasks).toEqual([
      { substitution: 'TerminateInstanceFunctionArn', name: 'TerminateInstance', entry: 'functions/termination/terminate-instance.ts' },
    ]);
    expect(def.resources).toEqual(['TableName']);
    expect(def.dynamodbActions).toEqual(['dynamodb:PutItem']);
    expect(def.putsEvents).toBe(false);
  });

  it('rejects an unknown substitution, naming it', () => {
    expect(() => parseTerminationDefinition(task('${SomethingElse}'))).toThrow(TerminationDefinitionError);
    expect(() => parseTerminationDefinition(task('${SomethingElse}'))).toThrow(/\$\{SomethingElse\}/);
  });

  it('rejects a service integration the stack would not grant', () => {
    expect(() => parseTerminationDefinition(task('arn:aws:states:::sqs:sendMessage'))).toThrow(/sqs:sendMessage/);
  });

  it('rejects invalid JSON', () => {
    expect(() => parseTerminationDefinition('{')).toThrow(/not valid JSON/);
  });
});

describe('kebab', () => {
  it.each([
    ['Cordon', 'cordon'],
    ['DeleteNode', 'delete-node'],
    ['RecordFailure', 'record-failure'],
    ['TerminateInstance', 'terminate-instance'],
    ['EC2Thing', 'ec2-thing'],
  ])('%s → %s', (name, want) => expect(kebab(name)).toBe(want));
});
