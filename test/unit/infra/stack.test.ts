/**
 * Template tests for infra/aws (aws-cdk-lib/assertions). The stack is built with inline stand-in
 * code (no esbuild: see stack-fixture.ts) and a fixture termination definition with three task
 * functions (Cordon, Drain, TerminateInstance) and a direct DynamoDB integration.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AgentDetailTypes,
  AgentSource,
  Env,
  EventRules,
  InterruptionRuleNames,
  Table,
  TerminationSource,
  tableCreateInput,
} from '../../../shared/api/contract.ts';
import { ConfigError } from '../../../infra/aws/config.ts';
import { Functions } from '../../../infra/aws/functions.ts';
import { MetricNames, MetricsNamespace } from '../../../shared/api/metrics.ts';
import { buildTestStack, TestCluster } from './stack-fixture.ts';

type Resources = Record<string, { Type: string; Properties: any }>;
type Statement = { Sid?: string; Effect: string; Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, unknown>> };

const ClusterTag = `kubernetes.io/cluster/${TestCluster}`;
/** What a launch must tag what it creates with: nodefleet's own cluster tag, then Karpenter's. */
const RequestTags = {
  StringEquals: {
    'aws:RequestTag/nodefleet.io/cluster': TestCluster,
    [`aws:RequestTag/${ClusterTag}`]: 'owned',
    'aws:RequestTag/eks:eks-cluster-name': TestCluster,
  },
  StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
};
/** What an instance or launch template must carry to be used, terminated or deleted. */
const ResourceTags = {
  StringEquals: { 'aws:ResourceTag/nodefleet.io/cluster': TestCluster, [`aws:ResourceTag/${ClusterTag}`]: 'owned' },
  StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
};
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

/** The logical id of the resource whose id starts with `prefix` (exactly one). */
function logicalId(resources: Resources, type: string, prefix: string): string {
  if (resources[prefix]?.Type === type) return prefix;
  const pattern = new RegExp(`^${prefix}[A-F0-9]{8}$`);
  const ids = Object.keys(resources).filter((id) => resources[id].Type === type && pattern.test(id));
  if (ids.length !== 1) throw new Error(`expected one ${type} ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0];
}

/** Every statement of the inline policies attached to the role `rolePrefix`. */
function roleStatements(resources: Resources, rolePrefix: string): Statement[] {
  const roleId = logicalId(resources, 'AWS::IAM::Role', rolePrefix);
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
}

function actionsOf(statements: Statement[]): string[] {
  return statements.flatMap((s) => asArray(s.Action));
}

const OidcProviderArn = 'arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC123';
const VariantSubnets = ['subnet-0a1b2c3d4e5f60718', 'subnet-0a1b2c3d4e5f60719'];

/** Builds are slow on a loaded machine: two per file (default, and every option at once). */
const BuildTimeoutMs = 240_000;

describe('NodefleetStack template', { timeout: BuildTimeoutMs }, () => {
  let template: Template;
  let resources: Resources;
  /** Every non-default option at once: logLevel, interruption off, IRSA, VPC, provisioner behind FIFO. */
  let variant: Resources;
  let variantOutputs: Record<string, { Value: unknown }>;
  beforeAll(() => {
    template = buildTestStack().template;
    resources = template.toJSON().Resources;
    const functions = Functions.map((f) =>
      f.name === 'provisioner' ? { ...f, trigger: { kind: 'fifoQueue', rule: 'provisioner' } as const, reservedConcurrency: undefined } : f,
    );
    const variantTemplate = buildTestStack(
      {
        logLevel: 'debug',
        packing: 'karpenter',
        interruption: 'false',
        agentIdentity: 'irsa',
        oidcProviderArn: OidcProviderArn,
        vpcId: 'vpc-0123456789abcdef0',
        subnetIds: VariantSubnets.join(','),
        FEATURE_GATES: 'SpotToSpotConsolidation=true',
        MIN_VALUES_POLICY: 'BestEffort',
        BATCH_IDLE_DURATION: '2s',
      },
      { functions },
    ).template.toJSON();
    variant = variantTemplate.Resources;
    variantOutputs = variantTemplate.Outputs;
  }, BuildTimeoutMs);

  describe('DynamoDB', () => {
    it('has one table keyed by contract.ts Table with the byInstanceId GSI, TTL, PITR, deletion protection and encryption', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', 1);
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        KeySchema: [
          { AttributeName: Table.partitionKey, KeyType: 'HASH' },
          { AttributeName: Table.sortKey, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: Table.ttlAttribute, Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
        SSESpecification: { SSEEnabled: true },
        GlobalSecondaryIndexes: [
          {
            IndexName: Table.instanceIdIndex,
            KeySchema: [{ AttributeName: Table.instanceIdAttribute, KeyType: 'HASH' }],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      });
    });

    it('has the keys and indexes of contract.ts tableCreateInput (the definition dynalite creates), the sparse in-flight LSI included', () => {
      const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
      const want = tableCreateInput('x');
      const bySortedName = <T extends { AttributeName?: string; IndexName?: string }>(xs: T[]) =>
        [...xs].sort((a, b) => String(a.AttributeName ?? a.IndexName).localeCompare(String(b.AttributeName ?? b.IndexName)));
      expect(table.Properties.KeySchema).toEqual(want.KeySchema);
      expect(bySortedName(table.Properties.AttributeDefinitions)).toEqual(bySortedName(want.AttributeDefinitions));
      expect(table.Properties.GlobalSecondaryIndexes).toEqual(want.GlobalSecondaryIndexes);
      expect(table.Properties.LocalSecondaryIndexes).toEqual(want.LocalSecondaryIndexes);
      expect(table.Properties.LocalSecondaryIndexes).toEqual([
        {
          IndexName: Table.inFlightIndex,
          KeySchema: [
            { AttributeName: Table.partitionKey, KeyType: 'HASH' },
            { AttributeName: Table.inFlightAttribute, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ]);
      // Replacing the table (an LSI added to a deployed stack) keeps the old one: it holds which instances nodefleet owns.
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.UpdateReplacePolicy).toBe('Retain');
    });
  });

  describe('functions', () => {
    it('builds the five registry functions and one per ASL task (8), each nodejs22.x arm64 with X-Ray', () => {
      const fns = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
      expect(fns).toHaveLength(Functions.length + 3);
      for (const f of fns) {
        expect(f.Properties.Runtime).toBe('nodejs22.x');
        expect(f.Properties.Architectures).toEqual(['arm64']);
        expect(f.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      }
    });

    it('gives every function its own role', () => {
      const roles = Object.values(resources)
        .filter((r) => r.Type === 'AWS::Lambda::Function')
        .map((r) => JSON.stringify(r.Properties.Role));
      expect(new Set(roles).size).toBe(roles.length);
    });

    it('sets the contract.ts env names and Powertools variables', () => {
      const provisioner = resources[logicalId(resources, 'AWS::Lambda::Function', 'Provisioner')];
      const env = provisioner.Properties.Environment.Variables;
      expect(env[Env.clusterName]).toBe(TestCluster);
      expect(env[Env.tableName]).toEqual({ Ref: expect.stringMatching(/^Table/) });
      expect(env[Env.eventBusName]).toEqual({ Ref: expect.stringMatching(/^Bus/) });
      expect(env[Env.nodeRoleName]).toEqual({ Ref: expect.stringMatching(/^NodeRole/) });
      expect(env[Env.instanceProfileName]).toEqual({ Ref: expect.stringMatching(/^NodeInstanceProfile/) });
      expect(env[Env.logLevel]).toBe('INFO');
      expect(env.POWERTOOLS_SERVICE_NAME).toBe('provisioner');
      expect(provisioner.Properties.ReservedConcurrentExecutions).toBe(1);
      expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe('nodefleet');
      expect(env[Env.region]).toBeUndefined(); // reserved: Lambda sets it

      const disruption = resources[logicalId(resources, 'AWS::Lambda::Function', 'Disruption')].Properties.Environment.Variables;
      expect(disruption[Env.stateMachineArn]).toEqual({ Ref: expect.stringMatching(/^Termination/) });
      const registration = resources[logicalId(resources, 'AWS::Lambda::Function', 'Registration')].Properties.Environment.Variables;
      // A deleted Node holding the finalizer starts its claim's termination (functions/registration).
      expect(registration[Env.stateMachineArn]).toEqual({ Ref: expect.stringMatching(/^Termination/) });
      expect(registration[Env.nodeRoleName]).toBeUndefined();
    });

    it('passes context packing to the provisioner and disruption only, as NODEFLEET_PACKING (unset by default)', () => {
      const packingOf = (r: Resources) =>
        Object.fromEntries(
          Object.entries(r)
            .filter(([, x]) => x.Type === 'AWS::Lambda::Function')
            .map(([id, x]) => [id.replace(/[A-F0-9]{8}$/, ''), x.Properties.Environment.Variables[Env.packing]])
            .filter(([, v]) => v !== undefined),
        );
      expect(packingOf(variant)).toEqual({ Provisioner: 'karpenter', Disruption: 'karpenter' });
      expect(packingOf(resources)).toEqual({});
    });

    it("passes Karpenter's settings set as context to every function under their names, the agent's as the AgentSettings output", () => {
      const fns = Object.values(variant).filter((r) => r.Type === 'AWS::Lambda::Function');
      for (const f of fns)
        expect(f.Properties.Environment.Variables).toMatchObject({ FEATURE_GATES: 'SpotToSpotConsolidation=true', MIN_VALUES_POLICY: 'BestEffort' });
      for (const f of Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function'))
        expect(f.Properties.Environment.Variables.FEATURE_GATES).toBeUndefined();
      expect(variantOutputs.AgentSettings.Value).toBe('BATCH_IDLE_DURATION=2s');
    });

    it('passes context logLevel to POWERTOOLS_LOG_LEVEL', () => {
      const fns = Object.values(variant).filter((r) => r.Type === 'AWS::Lambda::Function');
      expect(fns.map((f) => f.Properties.Environment.Variables[Env.logLevel])).toEqual(fns.map(() => 'DEBUG'));
    });

    it('gives async-invoked functions (provisioner, registration, gc) a DLQ; disruption is invoked synchronously by its loop', () => {
      for (const name of ['Provisioner', 'Registration', 'Gc']) {
        const fn = resources[logicalId(resources, 'AWS::Lambda::Function', name)];
        expect(fn.Properties.DeadLetterConfig?.TargetArn, name).toEqual({ 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^${name}Dlq`)), 'Arn'] });
      }
      expect(resources[logicalId(resources, 'AWS::Lambda::Function', 'Disruption')].Properties.DeadLetterConfig).toBeUndefined();
    });

    it('gives disruption 300 s (Karpenter 1 + 3 min consolidation budgets) and the env it reads (termination machine, cluster, table, instance profile)', () => {
      const fn = resources[logicalId(resources, 'AWS::Lambda::Function', 'Disruption')].Properties;
      expect(fn.Timeout).toBe(300);
      expect(fn.MemorySize).toBe(2048);
      const env = fn.Environment.Variables;
      expect(env[Env.stateMachineArn]).toEqual({ Ref: expect.stringMatching(/^Termination[A-F0-9]{8}$/) });
      expect(env[Env.clusterName]).toBe(TestCluster);
      expect(env[Env.tableName]).toEqual({ Ref: expect.stringMatching(/^Table/) });
      expect(env[Env.instanceProfileName]).toEqual({ Ref: expect.stringMatching(/^NodeInstanceProfile/) });
    });
  });

  describe('EventBridge', () => {
    it("sets the bus policy inline on the bus (an AWS::Events::EventBusPolicy is named by its statement id account-wide: two clusters' stacks would collide)", () => {
      template.resourceCountIs('AWS::Events::EventBusPolicy', 0);
      const bus = Object.values(resources).find((r) => r.Type === 'AWS::Events::EventBus')!;
      const sids = (bus.Properties.Policy.Statement as Statement[]).map((x) => [x.Sid, x.Effect]);
      expect(sids).toEqual([
        ['DenyPutEventsButPublishers', 'Deny'],
        ['DenyPublisher0OtherSources', 'Deny'],
        ['DenyPublisher0OtherDetailTypes', 'Deny'],
        // The termination's Drain task: its source and detail-types only.
        ['DenyPublisher1OtherSources', 'Deny'],
        ['DenyPublisher1OtherDetailTypes', 'Deny'],
      ]);
      const drainSources = (bus.Properties.Policy.Statement as Statement[]).find((x) => x.Sid === 'DenyPublisher1OtherSources')!;
      expect(JSON.stringify(drainSources)).toContain(TerminationSource);
    });
    it("routes agent events on nodefleet's bus with the contract patterns (the provisioner's: the termination's source too)", () => {
      template.hasResourceProperties('AWS::Events::EventBus', { Name: `nodefleet-${TestCluster}` });
      template.hasResourceProperties('AWS::Events::Rule', {
        EventBusName: { Ref: Match.stringLikeRegexp('^Bus') },
        EventPattern: { source: [AgentSource, TerminationSource], 'detail-type': EventRules.provisioner['detail-type'] },
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Provisioner'), 'Arn'] }, DeadLetterConfig: Match.anyValue() })],
      });
      template.hasResourceProperties('AWS::Events::Rule', {
        EventBusName: { Ref: Match.stringLikeRegexp('^Bus') },
        EventPattern: { source: [AgentSource], 'detail-type': EventRules.registration['detail-type'] },
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Registration'), 'Arn'] }, DeadLetterConfig: Match.anyValue() })],
      });
    });

    it('can put the provisioner behind a FIFO queue instead (one message group per cluster, FIFO DLQ)', () => {
      const res = variant;
      const queueId = logicalId(res, 'AWS::SQS::Queue', 'ProvisionerQueue');
      const queue = res[queueId].Properties;
      expect(queue.FifoQueue).toBe(true);
      expect(queue.ContentBasedDeduplication).toBe(true);
      expect(queue.SqsManagedSseEnabled).toBe(true);
      expect(res[queue.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0]].Properties.FifoQueue).toBe(true);
      const rule = Object.values(res).find(
        (r) => r.Type === 'AWS::Events::Rule' && r.Properties.EventPattern['detail-type'][0] === EventRules.provisioner['detail-type'][0],
      )!;
      expect(rule.Properties.Targets[0]).toMatchObject({ Arn: { 'Fn::GetAtt': [queueId, 'Arn'] }, SqsParameters: { MessageGroupId: TestCluster } });
      const mapping = Object.values(res).find((r) => r.Type === 'AWS::Lambda::EventSourceMapping')!;
      expect(mapping.Properties).toMatchObject({ EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] }, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    });

    it('sends the five interruption rules from the default bus to an encrypted queue with a DLQ', () => {
      const queueId = logicalId(resources, 'AWS::SQS::Queue', 'InterruptionQueue');
      const rules = Object.values(resources).filter(
        (r) => r.Type === 'AWS::Events::Rule' && r.Properties.Targets.some((t: any) => t.Arn?.['Fn::GetAtt']?.[0] === queueId),
      );
      expect(rules).toHaveLength(InterruptionRuleNames.length);
      for (const r of rules) expect(r.Properties.EventBusName).toBeUndefined();
      const patterns = rules.map((r) => r.Properties.EventPattern);
      for (const name of InterruptionRuleNames) expect(patterns).toContainEqual(JSON.parse(JSON.stringify(EventRules[name])));
      const queue = resources[queueId].Properties;
      expect(queue.MessageRetentionPeriod).toBe(300);
      expect(queue.SqsManagedSseEnabled).toBe(true);
      expect(queue.RedrivePolicy.maxReceiveCount).toBe(3);
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
        FunctionName: { Ref: Match.stringLikeRegexp('^Interruption') },
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      // Only EventBridge, for these five rules, may send to it (an explicit Deny for every other sender); and only over TLS.
      const policy = Object.values(resources).find((r) => r.Type === 'AWS::SQS::QueuePolicy' && r.Properties.Queues[0].Ref === queueId)!;
      const statements = policy.Properties.PolicyDocument.Statement as Statement[];
      const denies = statements.filter((x) => x.Effect === 'Deny');
      expect(denies).toHaveLength(2);
      expect(denies).toContainEqual(expect.objectContaining({ Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
      const notFromRules = denies.find((x) => x.Sid === 'DenySendButFromRules')!;
      expect(notFromRules).toMatchObject({ Principal: { AWS: '*' }, Action: 'sqs:SendMessage' });
      expect(notFromRules.Condition?.ArnNotEquals?.['aws:SourceArn']).toHaveLength(InterruptionRuleNames.length);
      const allows = statements.filter((x) => x.Effect === 'Allow');
      expect(allows).toHaveLength(InterruptionRuleNames.length);
      for (const a of allows) {
        expect((a as any).Principal).toEqual({ Service: 'events.amazonaws.com' });
        expect(asArray(a.Action)).toContain('sqs:SendMessage');
        expect(a.Condition?.ArnEquals?.['aws:SourceArn']).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Rule/), 'Arn'] });
      }
    });

    it('omits the interruption path when interruption=false', () => {
      const res = variant;
      expect(Object.keys(res).filter((id) => id.startsWith('Interruption'))).toEqual([]);
      expect(Object.values(res).filter((r) => r.Type === 'AWS::Events::Rule')).toHaveLength(2);
    });
  });

  describe('Scheduler', () => {
    it('starts a disruption loop execution and invokes gc every minute, with a DLQ and no stale retries', () => {
      const schedules = Object.values(resources).filter((r) => r.Type === 'AWS::Scheduler::Schedule');
      expect(schedules).toHaveLength(2);
      const loopId = logicalId(resources, 'AWS::StepFunctions::StateMachine', 'DisruptionLoop');
      const gcId = logicalId(resources, 'AWS::Lambda::Function', 'Gc');
      // The disruption function is never a Scheduler target: invoked directly it only plans.
      expect(schedules.map((s) => s.Properties.Target.Arn).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
        { 'Fn::GetAtt': [gcId, 'Arn'] },
        { Ref: loopId },
      ]);
      const loopSchedule = schedules.find((s) => s.Properties.Target.Arn.Ref === loopId)!;
      expect(JSON.parse(loopSchedule.Properties.Target.Input)).toEqual({});
      // Its role may start executions of the loop and nothing else.
      const roleId = loopSchedule.Properties.Target.RoleArn['Fn::GetAtt'][0];
      const statements = roleStatements(resources, roleId).filter((st) => !actionsOf([st]).every((a) => a.startsWith('sqs:')));
      expect(statements).toEqual([expect.objectContaining({ Effect: 'Allow', Action: 'states:StartExecution', Resource: { Ref: loopId } })]);
      for (const s of schedules) {
        expect(s.Properties.ScheduleExpression).toBe('rate(1 minute)');
        expect(s.Properties.Target.DeadLetterConfig.Arn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^DeliveryDlq/), 'Arn'] });
        expect(s.Properties.Target.RetryPolicy).toEqual({ MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 0 });
      }
    });
  });

  describe('termination state machine', () => {
    it('is a Standard machine with logging ALL and X-Ray, substituting every ${…} of the definition', () => {
      const sm = resources[logicalId(resources, 'AWS::StepFunctions::StateMachine', 'Termination')].Properties;
      expect(sm.StateMachineType).toBe('STANDARD');
      expect(sm.TracingConfiguration).toEqual({ Enabled: true });
      expect(sm.LoggingConfiguration.Level).toBe('ALL');
      expect(Object.keys(sm.DefinitionSubstitutions).sort()).toEqual(['CordonFunctionArn', 'DrainFunctionArn', 'TableName', 'TerminateInstanceFunctionArn']);
      expect(sm.DefinitionSubstitutions.DrainFunctionArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^TerminationDrain/), 'Arn'] });
      expect(sm.DefinitionSubstitutions.TableName).toEqual({ Ref: expect.stringMatching(/^Table/) });
    });

    it('lets the state machine invoke only its task functions and use the table directly only as the definition does', () => {
      const smRoleId = resources[logicalId(resources, 'AWS::StepFunctions::StateMachine', 'Termination')].Properties.RoleArn['Fn::GetAtt'][0];
      const statements = roleStatements(resources, smRoleId);
      const invoke = statements.filter((s) => asArray(s.Action).includes('lambda:InvokeFunction'));
      const invoked = invoke.flatMap((s) => asArray(s.Resource as any)).map((r: any) => r['Fn::GetAtt']?.[0] ?? r['Fn::Join'][1][0]['Fn::GetAtt'][0]);
      expect([...new Set(invoked)].sort()).toEqual([
        expect.stringMatching(/^TerminationCordon/),
        expect.stringMatching(/^TerminationDrain/),
        expect.stringMatching(/^TerminationTerminateInstance/),
      ]);
      expect(actionsOf(statements).filter((a) => a.startsWith('dynamodb:'))).toEqual(['dynamodb:UpdateItem']);
    });
  });

  describe('disruption loop state machine', () => {
    it('is a Standard machine from statemachines/disruption-loop.asl.json with logging ALL and X-Ray, invoking the disruption function', () => {
      const sm = resources[logicalId(resources, 'AWS::StepFunctions::StateMachine', 'DisruptionLoop')].Properties;
      expect(sm.StateMachineType).toBe('STANDARD');
      expect(sm.TracingConfiguration).toEqual({ Enabled: true });
      expect(sm.LoggingConfiguration.Level).toBe('ALL');
      expect(sm.LoggingConfiguration.IncludeExecutionData).toBe(true);
      expect(sm.DefinitionSubstitutions).toEqual({
        DisruptionFunctionArn: { 'Fn::GetAtt': [logicalId(resources, 'AWS::Lambda::Function', 'Disruption'), 'Arn'] },
      });
      const definition = JSON.parse(sm.DefinitionString);
      expect(definition.States.Disrupt.Resource).toBe('${DisruptionFunctionArn}');
      expect(definition.States.Wait.SecondsPath).toBe('$.retryAfterSeconds');
      expect(definition.States.Disrupt.Retry[0].ErrorEquals).toContain('TransientError');
    });

    it('may invoke only the disruption function (unqualified), besides logging and tracing', () => {
      const sm = resources[logicalId(resources, 'AWS::StepFunctions::StateMachine', 'DisruptionLoop')].Properties;
      const statements = roleStatements(resources, sm.RoleArn['Fn::GetAtt'][0]);
      const invoke = statements.filter((s) => asArray(s.Action).includes('lambda:InvokeFunction'));
      expect(invoke).toEqual([
        expect.objectContaining({
          Action: 'lambda:InvokeFunction',
          Resource: { 'Fn::GetAtt': [logicalId(resources, 'AWS::Lambda::Function', 'Disruption'), 'Arn'] },
        }),
      ]);
      const others = actionsOf(statements).filter((a) => a !== 'lambda:InvokeFunction');
      for (const a of others) expect(a).toMatch(/^(logs|xray):/);
    });
  });

  describe('IAM least privilege', () => {
    it('never grants a wildcard action', () => {
      const statements = Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
      expect(statements.length).toBeGreaterThan(20);
      for (const a of actionsOf(statements)) expect(a).not.toMatch(/\*/);
    });

    it('uses Resource "*" only for actions without resource-level permissions', () => {
      const allowed =
        /^(ec2:Describe[A-Za-z]+|pricing:GetProducts|xray:(PutTraceSegments|PutTelemetryRecords|GetSamplingRules|GetSamplingTargets)|logs:(CreateLogDelivery|GetLogDelivery|UpdateLogDelivery|DeleteLogDelivery|ListLogDeliveries|PutResourcePolicy|DescribeResourcePolicies|DescribeLogGroups))$/;
      const star = Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[])
        .filter((s) => asArray(s.Resource as any).includes('*'));
      for (const a of actionsOf(star)) expect(a).toMatch(allowed);
      for (const s of star.filter((x) => actionsOf([x]).some((a) => a.startsWith('ec2:')))) {
        expect(s.Condition).toEqual({ StringEquals: { 'aws:RequestedRegion': { Ref: 'AWS::Region' } } });
      }
    });

    it("scopes RunInstances/CreateFleet/CreateLaunchTemplate on created resources with nodefleet's cluster tag and Karpenter's cluster, EKS cluster name and NodePool request tags", () => {
      const s = roleStatements(resources, 'ProvisionerRole').find((x) => x.Sid === 'LaunchCreatesClusterTaggedResources')!;
      expect(asArray(s.Action).sort()).toEqual(['ec2:CreateFleet', 'ec2:CreateLaunchTemplate', 'ec2:RunInstances']);
      expect(s.Condition).toEqual(RequestTags);
      const res = JSON.stringify(s.Resource);
      for (const r of ['fleet/*', 'instance/*', 'volume/*', 'network-interface/*', 'launch-template/*', 'spot-instances-request/*'])
        expect(res).toContain(`:${r}`);
    });

    it('lets RunInstances/CreateFleet use only existing subnet/SG/image/snapshot/capacity-reservation/placement-group ARNs (any account: shared VPC), and only cluster- and NodePool-tagged launch templates', () => {
      const statements = roleStatements(resources, 'ProvisionerRole');
      const existing = statements.find((x) => x.Sid === 'LaunchUsesExistingResources')!;
      expect(existing.Condition).toBeUndefined();
      expect(JSON.stringify(existing.Resource)).not.toMatch(/instance\/|fleet\/|launch-template/);
      for (const r of ['subnet', 'security-group', 'capacity-reservation', 'placement-group']) expect(JSON.stringify(existing.Resource)).toContain(`:*:${r}/*`);
      const lt = statements.find((x) => x.Sid === 'LaunchUsesOwnLaunchTemplates')!;
      expect(lt.Condition).toEqual(ResourceTags);
      // No other statement grants a launch action.
      const launchers = statements.filter((x) => actionsOf([x]).some((a) => ['ec2:RunInstances', 'ec2:CreateFleet'].includes(a)));
      expect(launchers.map((x) => x.Sid).sort()).toEqual([
        'LaunchCreatesClusterTaggedResources',
        'LaunchUsesExistingResources',
        'LaunchUsesOwnLaunchTemplates',
      ]);
    });

    it('allows CreateTags only inside a launch that carries the cluster, EKS cluster name and NodePool tags', () => {
      const s = roleStatements(resources, 'ProvisionerRole').find((x) => asArray(x.Action).includes('ec2:CreateTags'))!;
      expect(s.Condition).toEqual({
        StringEquals: { ...RequestTags.StringEquals, 'ec2:CreateAction': ['RunInstances', 'CreateFleet', 'CreateLaunchTemplate'] },
        StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
      });
    });

    it("allows TerminateInstances only on instances with nodefleet's cluster tag and the cluster and NodePool tags, and only to gc and the TerminateInstance task", () => {
      const roles = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::IAM::Role');
      const terminators: string[] = [];
      for (const role of roles) {
        for (const s of roleStatements(resources, role)) {
          if (!asArray(s.Action).includes('ec2:TerminateInstances')) continue;
          terminators.push(role);
          expect(s.Condition).toEqual(ResourceTags);
        }
      }
      expect(terminators.sort()).toEqual([expect.stringMatching(/^GcRole/), expect.stringMatching(/^TerminationTerminateInstanceRole/)]);
    });

    it('allows DeleteLaunchTemplate only on cluster- and NodePool-tagged templates, and only to gc (launch-template GC)', () => {
      const roles = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::IAM::Role');
      const deleters = roles.filter((role) => roleStatements(resources, role).some((s) => asArray(s.Action).includes('ec2:DeleteLaunchTemplate')));
      expect(deleters).toEqual([expect.stringMatching(/^GcRole/)]);
      const s = roleStatements(resources, deleters[0]).find((x) => asArray(x.Action).includes('ec2:DeleteLaunchTemplate'))!;
      expect(s.Condition).toEqual(ResourceTags);
    });

    it("passes only the node role, only to EC2 (both partitions' service principals)", () => {
      const roles = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::IAM::Role');
      const pass = roles.flatMap((r) => roleStatements(resources, r).filter((s) => asArray(s.Action).includes('iam:PassRole')));
      expect(pass.length).toBe(2); // provisioner and disruption (replacements)
      for (const s of pass) {
        expect(s.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^NodeRole/), 'Arn'] });
        expect(s.Condition).toEqual({ StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] } });
      }
    });

    it('gives disruption exactly what it calls: table, EKS, tag-scoped launches, Describe*, PassRole, AMI parameters, StartExecution on the termination machine, catalog refresh', () => {
      const statements = roleStatements(resources, 'DisruptionRole');
      const provisioner = roleStatements(resources, 'ProvisionerRole');
      const bySid = (list: Statement[], sid: string) => list.find((x) => x.Sid === sid)!;
      // Launch statements: the provisioner's request/resource-tag conditions exactly.
      for (const sid of [
        'LaunchUsesExistingResources',
        'LaunchUsesOwnLaunchTemplates',
        'LaunchCreatesClusterTaggedResources',
        'TagOnLaunchOnly',
        'PassNodeRoleToEc2',
        'ReadPublicAmiParameters',
      ]) {
        // CDK may order merged actions differently per role: compare them as sets.
        const norm = (x: Statement) => ({ ...x, Action: asArray(x.Action).sort() });
        expect(norm(bySid(statements, sid)), sid).toEqual(norm(bySid(provisioner, sid)));
      }
      expect(bySid(statements, 'LaunchCreatesClusterTaggedResources').Condition).toEqual(RequestTags);
      expect(bySid(statements, 'StartTermination')).toEqual({
        Sid: 'StartTermination',
        Effect: 'Allow',
        Action: 'states:StartExecution',
        Resource: { Ref: expect.stringMatching(/^Termination[A-F0-9]{8}$/) },
      });
      expect(bySid(statements, 'DescribeThisCluster').Resource).toEqual(bySid(provisioner, 'DescribeThisCluster').Resource);
      for (const [sid, action] of [
        ['NodefleetTableGet', 'dynamodb:GetItem'],
        ['NodefleetTablePut', 'dynamodb:PutItem'],
        ['NodefleetTableUpdate', 'dynamodb:UpdateItem'],
        ['NodefleetTableDelete', 'dynamodb:DeleteItem'],
        ['NodefleetTableQuery', 'dynamodb:Query'],
      ]) {
        expect(asArray(bySid(statements, sid).Action), sid).toEqual([action]);
      }
      const actions = new Set(actionsOf(statements));
      // DescribeInstances: the instances' subnets and security groups (subnet / security-group drift).
      for (const a of [
        'ec2:DescribeLaunchTemplates',
        'ec2:DescribeImages',
        'ec2:DescribeSubnets',
        'ec2:DescribeSecurityGroups',
        'ec2:DescribeInstances',
        'ssm:GetParameter',
        'iam:PassRole',
      ])
        expect(actions, a).toContain(a);
      // Nothing it does not call: no termination of instances, no reading executions, no events.
      for (const a of ['ec2:TerminateInstances', 'states:DescribeExecution', 'events:PutEvents', 'ec2:DeleteLaunchTemplate'])
        expect(actions, a).not.toContain(a);
      // Its own access entry maps it to its own Kubernetes group.
      const entries = Object.values(resources)
        .filter((r) => r.Type === 'AWS::EKS::AccessEntry')
        .map((r) => r.Properties);
      expect(entries.filter((e) => e.PrincipalArn['Fn::GetAtt']?.[0]?.startsWith('DisruptionRole'))).toEqual([
        expect.objectContaining({ ClusterName: TestCluster, Type: 'STANDARD', KubernetesGroups: ['nodefleet-disruption'] }),
      ]);
    });

    it('grants the catalog refresh (zones, offerings, types, spot prices in this region; pricing:GetProducts) to provisioner and disruption only', () => {
      const roles = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::IAM::Role');
      const pricing: string[] = [];
      for (const role of roles) {
        for (const s of roleStatements(resources, role)) {
          if (s.Sid === 'CatalogDescribeInRegion') {
            expect(asArray(s.Action).sort()).toEqual([
              'ec2:DescribeAvailabilityZones',
              'ec2:DescribeInstanceTypeOfferings',
              'ec2:DescribeInstanceTypes',
              'ec2:DescribeSpotPriceHistory',
            ]);
            expect(s.Resource).toBe('*');
            expect(s.Condition).toEqual({ StringEquals: { 'aws:RequestedRegion': { Ref: 'AWS::Region' } } });
          }
          if (!asArray(s.Action).includes('pricing:GetProducts')) continue;
          pricing.push(role);
          // Pricing is served from us-east-1: no region condition, and nothing else in the statement.
          expect(s).toEqual({ Sid: 'ReadOnDemandPrices', Effect: 'Allow', Action: 'pricing:GetProducts', Resource: '*' });
        }
      }
      expect(pricing.sort()).toEqual([expect.stringMatching(/^DisruptionRole/), expect.stringMatching(/^ProvisionerRole/)]);
      const catalog = roles.filter((r) => roleStatements(resources, r).some((s) => s.Sid === 'CatalogDescribeInRegion'));
      expect(catalog.sort()).toEqual(pricing.sort());
    });

    it('allows eks:DescribeCluster on this cluster only', () => {
      const s = roleStatements(resources, 'RegistrationRole').find((x) => asArray(x.Action).includes('eks:DescribeCluster'))!;
      expect(s.Resource).toEqual({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':eks:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:cluster/${TestCluster}`]],
      });
    });

    it("gives registration EC2 DescribeInstances only (the node-name check) and StartExecution only (a deleted Node's termination)", () => {
      const actions = actionsOf(roleStatements(resources, 'RegistrationRole'));
      expect(actions.filter((a) => a.startsWith('ec2:') || a.startsWith('states:') || a.startsWith('iam:')).sort()).toEqual([
        'ec2:DescribeInstances',
        'states:StartExecution',
      ]);
    });
  });

  describe('nodes and cluster access', () => {
    it('creates the node role with the four EKS worker policies (ECR pull only) and an instance profile', () => {
      const role = resources[logicalId(resources, 'AWS::IAM::Role', 'NodeRole')].Properties;
      expect(role.RoleName).toBe(`nodefleet-node-${TestCluster}`);
      const policies = role.ManagedPolicyArns.map((p: any) => p['Fn::Join'][1][2].replace(':iam::aws:policy/', '')).sort();
      expect(policies).toEqual(['AmazonEC2ContainerRegistryPullOnly', 'AmazonEKSWorkerNodePolicy', 'AmazonEKS_CNI_Policy', 'AmazonSSMManagedInstanceCore']);
      template.hasResourceProperties('AWS::IAM::InstanceProfile', { Roles: [{ Ref: Match.stringLikeRegexp('^NodeRole') }] });
    });

    it('maps the node role (EC2_LINUX) and every Kubernetes-using function role (its own group nodefleet-<function>) with access entries', () => {
      const entries = Object.values(resources)
        .filter((r) => r.Type === 'AWS::EKS::AccessEntry')
        .map((r) => r.Properties);
      const node = entries.filter((e) => e.Type === 'EC2_LINUX');
      expect(node).toHaveLength(1);
      expect(node[0].PrincipalArn).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^NodeRole/), 'Arn'] });
      const fnEntries = entries.filter((e) => e.Type === 'STANDARD');
      // Every function using the Kubernetes API: the five, and the termination tasks that check their target's Node.
      expect(fnEntries).toHaveLength(8);
      for (const e of [...node, ...fnEntries]) expect(e.ClusterName).toBe(TestCluster);
      const groups = fnEntries.map((e) => e.KubernetesGroups);
      for (const g of groups) expect(g).toEqual([expect.stringMatching(/^nodefleet-[a-z-]+$/)]);
      expect(new Set(groups.map((g) => g[0])).size).toBe(fnEntries.length);
    });
  });

  describe('the agent', () => {
    it("may only PutEvents on nodefleet's bus and write its cluster view, through an EKS Pod Identity association", () => {
      const statements = roleStatements(resources, 'AgentRole');
      expect(statements).toEqual([
        {
          Sid: 'PutEventsOnNodefleetBus',
          Effect: 'Allow',
          Action: 'events:PutEvents',
          Resource: { 'Fn::GetAtt': [expect.stringMatching(/^Bus/), 'Arn'] },
          Condition: {
            'ForAllValues:StringEquals': { 'events:source': [AgentSource], 'events:detail-type': [...AgentDetailTypes] },
            Null: { 'events:source': 'false', 'events:detail-type': 'false' },
          },
        },
        {
          Sid: 'WriteClusterView',
          Effect: 'Allow',
          Action: 's3:PutObject',
          Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [expect.stringMatching(/^ViewBucket/), 'Arn'] }, `/clusters/${TestCluster}/view.json.gz`]] },
        },
      ]);
      const trust = resources[logicalId(resources, 'AWS::IAM::Role', 'AgentRole')].Properties.AssumeRolePolicyDocument.Statement;
      expect(trust).toEqual([
        expect.objectContaining({
          Action: ['sts:AssumeRole', 'sts:TagSession'],
          Principal: { Service: 'pods.eks.amazonaws.com' },
          Condition: {
            StringEquals: {
              'aws:SourceAccount': { Ref: 'AWS::AccountId' },
              'aws:RequestTag/eks-cluster-name': TestCluster,
              'aws:RequestTag/kubernetes-namespace': 'nodefleet',
              'aws:RequestTag/kubernetes-service-account': 'nodefleet-agent',
            },
          },
        }),
      ]);
      template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', {
        ClusterName: TestCluster,
        Namespace: 'nodefleet',
        ServiceAccount: 'nodefleet-agent',
      });
    });

    it('the view bucket: S3-managed encryption, TLS only, no public access, abandoned views expire; functions that read it get its name', () => {
      const id = logicalId(resources, 'AWS::S3::Bucket', 'ViewBucket');
      const b = resources[id].Properties;
      expect(b.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
      expect(b.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
      expect(b.LifecycleConfiguration.Rules).toEqual([
        expect.objectContaining({ Status: 'Enabled', ExpirationInDays: 1, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
      ]);
      const policy = Object.values(resources).find((r: any) => r.Type === 'AWS::S3::BucketPolicy' && r.Properties.Bucket.Ref === id) as any;
      expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
      for (const fn of ['Provisioner', 'Disruption']) {
        expect(resources[logicalId(resources, 'AWS::Lambda::Function', fn)].Properties.Environment.Variables.NODEFLEET_VIEW_BUCKET).toEqual({ Ref: id });
      }
      expect(resources[logicalId(resources, 'AWS::Lambda::Function', 'Gc')].Properties.Environment.Variables.NODEFLEET_VIEW_BUCKET).toBeUndefined();
    });

    it('supports IRSA instead (web identity for the agent ServiceAccount only)', () => {
      const arn = OidcProviderArn;
      const t = Template.fromJSON({ Resources: variant });
      t.resourceCountIs('AWS::EKS::PodIdentityAssociation', 0);
      t.hasResourceProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: {
          Statement: [
            {
              Action: 'sts:AssumeRoleWithWebIdentity',
              Effect: 'Allow',
              Principal: { Federated: arn },
              Condition: {
                StringEquals: {
                  'oidc.eks.eu-west-1.amazonaws.com/id/ABC123:sub': 'system:serviceaccount:nodefleet:nodefleet-agent',
                  'oidc.eks.eu-west-1.amazonaws.com/id/ABC123:aud': 'sts.amazonaws.com',
                },
              },
            },
          ],
        },
      });
    });
  });

  describe('observability', () => {
    it("alarms on every DLQ, failed/timed-out/throttled executions and each function's throttles", () => {
      const alarms = Object.values(resources)
        .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
        .map((r) => r.Properties);
      const dlqs = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::SQS::Queue' && /Dlq/.test(id));
      expect(dlqs.length).toBe(5); // delivery, provisioner/registration/gc async, interruption queue
      for (const dlq of dlqs) {
        expect(
          alarms.some((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && a.Dimensions[0].Value['Fn::GetAtt'][0] === dlq),
          dlq,
        ).toBe(true);
      }
      const smOf = (a: any) => a.Dimensions[0].Value.Ref as string;
      const terminationId = logicalId(resources, 'AWS::StepFunctions::StateMachine', 'Termination');
      const loopId = logicalId(resources, 'AWS::StepFunctions::StateMachine', 'DisruptionLoop');
      for (const m of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
        expect(
          alarms
            .filter((a) => a.Namespace === 'AWS/States' && a.MetricName === m)
            .map(smOf)
            .sort(),
          m,
        ).toEqual([loopId, terminationId].sort());
      }
      expect(alarms.filter((a) => a.Namespace === 'AWS/States' && a.MetricName === 'ExecutionThrottled').map(smOf)).toEqual([terminationId]);
      const fnOf = (a: any) => a.Dimensions[0].Value.Ref as string;
      // The provisioner is throttled by design (reserved concurrency 1): alarmed on event age instead.
      const throttled = alarms.filter((a) => a.MetricName === 'Throttles').map(fnOf);
      expect(throttled).toHaveLength(7);
      expect(throttled.some((id) => id.startsWith('Provisioner'))).toBe(false);
      expect(alarms.filter((a) => a.MetricName === 'AsyncEventAge').map(fnOf)).toEqual([expect.stringMatching(/^Provisioner/)]);
      expect(
        alarms
          .filter((a) => a.MetricName === 'AsyncEventsDropped')
          .map(fnOf)
          .sort(),
      ).toEqual([expect.stringMatching(/^Gc/), expect.stringMatching(/^Provisioner/), expect.stringMatching(/^Registration/)]);
      for (const a of alarms) expect(a.AlarmActions).toEqual([{ Ref: expect.stringMatching(/^AlarmTopic/) }]);
    });

    it('has a dashboard of Karpenter-named metrics in namespace nodefleet, and a catch-all for the rest', () => {
      const body = JSON.stringify(resources[logicalId(resources, 'AWS::CloudWatch::Dashboard', 'ObservabilityDashboard')].Properties.DashboardBody);
      expect(MetricsNamespace).toBe('nodefleet');
      // Core Karpenter names the functions emit (shared/runtime/observability.ts MetricNames); names
      // added later are covered by the catch-all graph until they get their own.
      const core = [
        'karpenter_nodeclaims_created_total',
        'karpenter_nodeclaims_disrupted_total',
        'karpenter_scheduler_unschedulable_pods_count',
        'karpenter_interruption_received_messages_total',
      ];
      for (const m of core) expect(Object.values(MetricNames)).toContain(m);
      for (const m of core) {
        expect(body, m).toContain(`MetricName=\\\\\\"${m}\\\\\\"`);
      }
      expect(body).toContain(`SEARCH('Namespace=\\\\\\"nodefleet\\\\\\"', 'Sum', 60)`);
    });
  });

  describe('config', () => {
    it('requires clusterName and validates it', () => {
      expect(() => buildTestStack({ clusterName: '' })).toThrow(ConfigError);
      expect(() => buildTestStack({ clusterName: 'bad name!' })).toThrow(/clusterName/);
      expect(() => buildTestStack({ logLevel: 'LOUD' })).toThrow(/logLevel/);
      expect(() => buildTestStack({ packing: 'tight' })).toThrow(/context 'packing' must be one of cost, karpenter, got 'tight'/);
      expect(() => buildTestStack({ agentIdentity: 'irsa' })).toThrow(/oidcProviderArn/);
      expect(() => buildTestStack({ subnetIds: 'subnet-1' })).toThrow(/vpcId/);
    });

    it('places functions in the given VPC subnets when vpcId/subnetIds are set', () => {
      const fns = Object.values(variant).filter((r) => r.Type === 'AWS::Lambda::Function');
      for (const f of fns) expect(f.Properties.VpcConfig.SubnetIds).toEqual(VariantSubnets);
    });
  });
});
