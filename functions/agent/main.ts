/**
 * Process entry of the agent Deployment. Env: NODEFLEET_CLUSTER_NAME, NODEFLEET_EVENT_BUS_NAME,
 * AWS_REGION (required); NODEFLEET_KUBECONFIG (else the in-cluster service account),
 * NODEFLEET_AGENT_HEALTH_PORT (default 8080), Karpenter's BATCH_IDLE_DURATION / BATCH_MAX_DURATION
 * (shared/api/settings.ts),
 * NODEFLEET_VIEW_BUCKET (publish the cluster view there; docs/cluster-state.md), NODEFLEET_S3_ENDPOINT.
 * Logs are JSON lines on stdout.
 */
import { z } from 'zod';
import { Env } from '../../shared/api/contract.ts';
import { createEventBridgePublisher } from '../../shared/aws/eventbridge-publisher.ts';
import { createS3ClusterViewStore } from '../../shared/aws/s3-cluster-view-store.ts';
import { Agent } from './agent.ts';
import { AgentSettingNames, parseSettings, type Settings } from '../../shared/api/settings.ts';
import { type AgentLog } from './agent-core.ts';

const EnvSchema = z.object({
  [Env.clusterName]: z.string().min(1),
  [Env.eventBusName]: z.string().min(1),
  [Env.region]: z.string().min(1),
  [Env.kubeconfig]: z.string().optional(),
  [Env.viewBucket]: z.string().min(1).optional(),
  [Env.s3Endpoint]: z.string().url().optional(),
  NODEFLEET_AGENT_HEALTH_PORT: z.coerce.number().int().default(8080),
});

const log: AgentLog = (level, message, fields = {}) => {
  process.stdout.write(`${JSON.stringify({ level: level.toUpperCase(), time: new Date().toISOString(), logger: 'agent', message, ...fields })}\n`);
};

async function main(): Promise<void> {
  const parsed = EnvSchema.safeParse(process.env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    log('error', `environment variable ${String(issue.path[0])}: ${issue.message}`);
    process.exit(2);
  }
  const env = parsed.data;
  let settings: Settings;
  try {
    settings = parseSettings(process.env, AgentSettingNames);
  } catch (e) {
    log('error', (e as Error).message);
    process.exit(2);
  }
  const agent = new Agent({
    connection: env[Env.kubeconfig] ? { kind: 'kubeconfig', path: env[Env.kubeconfig]! } : { kind: 'in-cluster' },
    publisher: createEventBridgePublisher({
      region: env[Env.region],
      eventBusName: env[Env.eventBusName],
      onDropped: (e, reason) => log('error', 'dropped event', { detailType: e.DetailType, reason }),
    }),
    clusterName: env[Env.clusterName],
    ...(env[Env.viewBucket]
      ? {
          views: createS3ClusterViewStore({
            region: env[Env.region],
            bucket: env[Env.viewBucket]!,
            cluster: env[Env.clusterName],
            endpoint: env[Env.s3Endpoint],
          }),
        }
      : {}),
    healthPort: env.NODEFLEET_AGENT_HEALTH_PORT,
    batchIdleMs: settings.batchIdleDuration,
    batchMaxMs: settings.batchMaxDuration,
    log,
  });
  await agent.start();
  log('info', 'agent started', { cluster: env[Env.clusterName] });
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      log('info', 'stopping', { signal: sig });
      void agent.stop().then(() => process.exit(0));
    });
  }
}

void main();
