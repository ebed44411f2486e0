/**
 * Alarms (DLQ depth, failed/timed-out termination and loop executions, Lambda throttles and errors) and a
 * CloudWatch dashboard of the Karpenter-named metrics the functions emit through Powertools
 * Metrics in namespace {@link MetricsNamespace}.
 */
import { Duration } from 'aws-cdk-lib';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MetricNames as M, MetricsNamespace } from '../../shared/api/metrics.ts';

/**
 * Karpenter's metric names (ANCHORS §4.1, aws/karpenter-provider-aws website reference/metrics.md),
 * as the functions emit them (shared/api/metrics.ts), grouped as the dashboard shows them, with
 * the statistic to plot. Every one is emitted (test/e2e/dashboard-metrics.test.ts).
 */
export const DashboardMetrics: readonly { title: string; metrics: readonly string[]; stat: 'Sum' | 'Average' | 'Maximum' | 'p99' }[] = [
  {
    title: 'NodeClaims created / launched / registered / initialized',
    metrics: [M.nodeClaimsCreated, M.nodeClaimsLaunched, M.nodeClaimsRegistered, M.nodeClaimsInitialized],
    stat: 'Sum',
  },
  { title: 'NodeClaims terminated / disrupted', metrics: [M.nodeClaimsTerminated, M.nodeClaimsDisrupted, M.nodeClaimsUnhealthyDisrupted], stat: 'Sum' },
  { title: 'Nodes created / terminated / drained', metrics: [M.nodesCreated, M.nodesTerminated, M.nodesDrained], stat: 'Sum' },
  { title: 'Unschedulable pods', metrics: [M.unschedulablePods], stat: 'Maximum' },
  { title: 'Scheduling duration (s, p99)', metrics: [M.schedulingDuration, M.podsSchedulingDecisionDuration], stat: 'p99' },
  { title: 'Pod startup duration (s, p99)', metrics: [M.podsStartupDuration], stat: 'p99' },
  { title: 'Launch failures / cloud provider errors', metrics: [M.launchFailures, M.cloudProviderErrors], stat: 'Sum' },
  { title: 'Cloud provider call duration (s, p99)', metrics: [M.cloudProviderDuration], stat: 'p99' },
  { title: 'Voluntary disruption decisions', metrics: [M.disruptionDecisions, M.disruptionEligibleNodes], stat: 'Sum' },
  { title: 'NodePool usage / limit', metrics: [M.nodePoolsUsage, M.nodePoolsLimit], stat: 'Maximum' },
  { title: 'Allowed disruptions / nodes consuming budgets', metrics: [M.nodePoolsAllowedDisruptions, M.nodePoolsNodesConsumingBudgets], stat: 'Maximum' },
  { title: 'Interruption messages', metrics: [M.interruptionReceived, M.interruptionDeleted], stat: 'Sum' },
  { title: 'Pods drained / eviction requests', metrics: [M.podsDrained, M.evictionRequests], stat: 'Sum' },
  { title: 'NodeClaim termination duration (s, p99)', metrics: [M.nodeClaimsTerminationDuration], stat: 'p99' },
  { title: 'nodefleet: launch → initialized (s, p99)', metrics: [M.nodeClaimLaunchToInitialized], stat: 'p99' },
  { title: 'nodefleet: orphan instances terminated', metrics: [M.orphanInstancesTerminated], stat: 'Sum' },
  { title: 'nodefleet: unowned instances launched before the claims table (kept)', metrics: [M.unownedInstancesBeforeEpoch], stat: 'Maximum' },
];

/** Dead-letter queues to alarm on, with a label for the alarm description. */
export interface WatchedQueue {
  name: string;
  queue: sqs.IQueue;
}

export interface ObservabilityProps {
  clusterName: string;
  topic: sns.ITopic;
  /**
   * The functions; `serialised` ones (reserved concurrency) are throttled by design, so they are
   * alarmed on how long events wait instead; `async` ones also on events Lambda dropped.
   */
  functions: { name: string; fn: lambda.IFunction; serialised: boolean; async: boolean }[];
  deadLetterQueues: WatchedQueue[];
  /** Source queues whose oldest message age matters (interruption: a spot notice is 2 minutes). */
  sourceQueues: WatchedQueue[];
  stateMachine?: sfn.IStateMachine;
  /** Loop state machines (the disruption loop): a failed or timed-out execution is alarmed. */
  loops?: { name: string; stateMachine: sfn.IStateMachine }[];
}

/** Builds the alarms and the dashboard. */
export class Observability extends Construct {
  readonly dashboard: cw.Dashboard;
  readonly alarms: cw.Alarm[] = [];

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const action = new cwActions.SnsAction(props.topic);
    const alarm = (alarmId: string, a: cw.CreateAlarmOptions & { metric: cw.IMetric }) => {
      const created = new cw.Alarm(this, alarmId, { ...a, treatMissingData: cw.TreatMissingData.NOT_BREACHING });
      created.addAlarmAction(action);
      this.alarms.push(created);
      return created;
    };

    for (const q of props.deadLetterQueues) {
      alarm(`Dlq-${q.name}`, {
        metric: q.queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: messages in the ${q.name} dead-letter queue (failed async deliveries; inspect and redrive)`,
      });
    }
    for (const q of props.sourceQueues) {
      alarm(`QueueAge-${q.name}`, {
        // A spot interruption notice gives 2 minutes; a message waiting 60 s means the handler is behind.
        metric: q.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 60,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: the ${q.name} queue's oldest message is older than 60 s`,
      });
    }
    for (const f of props.functions) {
      if (f.serialised) {
        alarm(`EventAge-${f.name}`, {
          // Events queue while the single instance works; a minute's wait means it cannot keep up.
          metric: f.fn.metric('AsyncEventAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
          threshold: 60_000,
          evaluationPeriods: 2,
          comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          alarmDescription: `nodefleet ${props.clusterName}: events for ${f.name} (reserved concurrency) wait more than 60 s`,
        });
      } else {
        alarm(`Throttles-${f.name}`, {
          metric: f.fn.metricThrottles({ period: Duration.minutes(1), statistic: 'Sum' }),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          alarmDescription: `nodefleet ${props.clusterName}: the ${f.name} function is throttled`,
        });
      }
      if (f.async) {
        alarm(`Dropped-${f.name}`, {
          metric: f.fn.metric('AsyncEventsDropped', { period: Duration.minutes(1), statistic: 'Sum' }),
          threshold: 1,
          evaluationPeriods: 1,
          comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          alarmDescription: `nodefleet ${props.clusterName}: Lambda dropped async events for ${f.name} (expired or retries exhausted without a DLQ delivery)`,
        });
      }
      alarm(`Errors-${f.name}`, {
        metric: f.fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 3,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: the ${f.name} function failed 3+ times in 5 minutes`,
      });
    }
    if (props.stateMachine) {
      const sm = props.stateMachine;
      alarm('TerminationFailed', {
        metric: sm.metricFailed({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: a termination execution failed (a node may be left cordoned or running; see its execution history)`,
      });
      alarm('TerminationTimedOut', {
        metric: sm.metricTimedOut({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: a termination execution timed out`,
      });
      alarm('TerminationThrottled', {
        metric: sm.metric('ExecutionThrottled', { period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: termination executions are throttled`,
      });
    }

    for (const l of props.loops ?? []) {
      alarm(`LoopFailed-${l.name}`, {
        metric: l.stateMachine.metricFailed({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: a ${l.name} loop execution failed (the function failed after retries; see the execution's error)`,
      });
      alarm(`LoopTimedOut-${l.name}`, {
        metric: l.stateMachine.metricTimedOut({ period: Duration.minutes(1), statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        alarmDescription: `nodefleet ${props.clusterName}: a ${l.name} loop execution timed out (replacements never initialized?)`,
      });
    }

    this.dashboard = new cw.Dashboard(this, 'Dashboard', { dashboardName: `nodefleet-${props.clusterName}`.slice(0, 255) });
    const search = (metric: string, stat: string) =>
      new cw.MathExpression({
        expression: `SEARCH('Namespace="${MetricsNamespace}" MetricName="${metric}"', '${stat}', 60)`,
        usingMetrics: {},
        label: metric,
        period: Duration.minutes(1),
      });
    this.dashboard.addWidgets(
      new cw.TextWidget({
        markdown: `# nodefleet — ${props.clusterName}\nKarpenter's metric names (namespace \`${MetricsNamespace}\`), then the functions, queues and termination state machine.`,
        width: 24,
        height: 2,
      }),
    );
    const graphs = DashboardMetrics.map((g) => new cw.GraphWidget({ title: g.title, left: g.metrics.map((m) => search(m, g.stat)), width: 8, height: 6 }));
    // Everything in the namespace, so a metric added later shows up before it gets its own graph.
    graphs.push(
      new cw.GraphWidget({
        title: 'All nodefleet metrics (Sum)',
        left: [
          new cw.MathExpression({
            expression: `SEARCH('Namespace="${MetricsNamespace}"', 'Sum', 60)`,
            usingMetrics: {},
            label: '',
            period: Duration.minutes(1),
          }),
        ],
        width: 8,
        height: 6,
      }),
    );
    for (let i = 0; i < graphs.length; i += 3) this.dashboard.addWidgets(...graphs.slice(i, i + 3));

    const fnMetric = (title: string, pick: (fn: lambda.IFunction) => cw.IMetric) =>
      new cw.GraphWidget({ title, left: props.functions.map((f) => pick(f.fn)), width: 8, height: 6 });
    this.dashboard.addWidgets(
      fnMetric('Function errors', (fn) => fn.metricErrors({ period: Duration.minutes(1) })),
      fnMetric('Function throttles', (fn) => fn.metricThrottles({ period: Duration.minutes(1) })),
      fnMetric('Function duration p99 (ms)', (fn) => fn.metricDuration({ period: Duration.minutes(1), statistic: 'p99' })),
    );
    const queueWidgets: cw.IWidget[] = [
      new cw.GraphWidget({
        title: 'Dead-letter queues (messages)',
        left: props.deadLetterQueues.map((q) => q.queue.metricApproximateNumberOfMessagesVisible({ label: q.name, period: Duration.minutes(1) })),
        width: 8,
        height: 6,
      }),
      new cw.GraphWidget({
        title: 'Source queues: oldest message (s)',
        left: props.sourceQueues.map((q) => q.queue.metricApproximateAgeOfOldestMessage({ label: q.name, period: Duration.minutes(1) })),
        width: 8,
        height: 6,
      }),
    ];
    const machines = [
      ...(props.stateMachine ? [{ title: 'Termination executions', sm: props.stateMachine }] : []),
      ...(props.loops ?? []).map((l) => ({ title: `${l.name} loop executions`, sm: l.stateMachine })),
    ];
    for (const { title, sm } of machines) {
      const period = Duration.minutes(1);
      queueWidgets.push(
        new cw.GraphWidget({
          title,
          left: [sm.metricStarted({ period }), sm.metricSucceeded({ period }), sm.metricFailed({ period }), sm.metricTimedOut({ period })],
          width: 8,
          height: 6,
        }),
      );
    }
    for (let i = 0; i < queueWidgets.length; i += 3) this.dashboard.addWidgets(...queueWidgets.slice(i, i + 3));
  }
}
