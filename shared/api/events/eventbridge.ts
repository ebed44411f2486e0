/**
 * EventBridge envelope and the AWS events the interruption function handles, exactly as
 * EventBridge delivers them (samples: test/fixtures/events/). The whole event is validated, not
 * only `detail`: `id` keys idempotency and `detail-type` routes (STYLE.md habit 2).
 *
 * Sources: EC2 User Guide (spot-instance-termination-notices, rebalance-recommendations,
 * monitoring-instance-state-changes, monitor-interruptible-cr), AWS Health User Guide
 * (aws-health-events-eventbridge-schema); Karpenter's parsers
 * (aws/karpenter-provider-aws pkg/controllers/interruption/messages/*).
 */
import { z } from 'zod';
import {
  DetailTypeCapacityReservationInterruption,
  DetailTypeHealth,
  DetailTypeRebalance,
  DetailTypeSpotInterruption,
  DetailTypeStateChange,
} from '../contract.ts';

/** Fields every EventBridge event carries. `time` is RFC 3339 (EventBridge writes `…Z`). */
export const EventBridgeEnvelopeSchema = z.object({
  version: z.string(),
  id: z.string().min(1),
  'detail-type': z.string().min(1),
  source: z.string().min(1),
  account: z.string(),
  time: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'must be an RFC 3339 time'),
  region: z.string(),
  resources: z.array(z.string()).default([]),
  detail: z.unknown(),
});
export type EventBridgeEnvelope = z.infer<typeof EventBridgeEnvelopeSchema>;

const InstanceId = z.string().regex(/^i-[0-9a-zA-Z]+$/, 'must be an EC2 instance id');

export const SpotInterruptionWarningSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(DetailTypeSpotInterruption),
  detail: z.object({
    'instance-id': InstanceId,
    /** terminate, stop or hibernate. */
    'instance-action': z.string(),
  }),
});

export const RebalanceRecommendationSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(DetailTypeRebalance),
  detail: z.object({ 'instance-id': InstanceId }),
});

/** EC2 instance states as the state-change notification spells them. */
export const InstanceStateSchema = z.enum(['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated']);

export const InstanceStateChangeSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(DetailTypeStateChange),
  detail: z.object({ 'instance-id': InstanceId, state: InstanceStateSchema }),
});

export const CapacityReservationInterruptionSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal('aws.ec2'),
  'detail-type': z.literal(DetailTypeCapacityReservationInterruption),
  detail: z.object({
    'instance-id': InstanceId,
    'instance-action': z.string(),
    /** RFC 3339; when EC2 will reclaim the instance. */
    'instance-termination-time': z.string().optional(),
    azId: z.string().optional(),
  }),
});

/**
 * AWS Health event. `affectedEntities[].entityValue` holds an instance ARN in the current docs'
 * sample and a bare instance id in older samples (and in Karpenter's parser): both are accepted.
 * `startTime` is an RFC 1123 date ("Thu, 27 Aug 2026 13:19:03 GMT").
 */
export const HealthEventSchema = EventBridgeEnvelopeSchema.extend({
  source: z.literal('aws.health'),
  'detail-type': z.literal(DetailTypeHealth),
  detail: z.looseObject({
    service: z.string(),
    eventTypeCode: z.string(),
    eventTypeCategory: z.string(),
    eventArn: z.string().optional(),
    startTime: z.string().optional(),
    endTime: z.string().optional(),
    affectedEntities: z.array(z.looseObject({ entityValue: z.string() })).default([]),
  }),
});

/** The five kinds, routed by `detail-type`. */
export const InterruptionEventSchema = z.discriminatedUnion('detail-type', [
  SpotInterruptionWarningSchema,
  RebalanceRecommendationSchema,
  InstanceStateChangeSchema,
  CapacityReservationInterruptionSchema,
  HealthEventSchema,
]);
export type InterruptionEvent = z.infer<typeof InterruptionEventSchema>;

/** Every detail-type the interruption function understands. */
export const InterruptionDetailTypes: readonly string[] = [
  DetailTypeSpotInterruption,
  DetailTypeRebalance,
  DetailTypeStateChange,
  DetailTypeCapacityReservationInterruption,
  DetailTypeHealth,
];

/** What to do about one event, in Karpenter's vocabulary (KA pkg/controllers/interruption). */
export type InterruptionKind = 'SpotInterruption' | 'RebalanceRecommendation' | 'ScheduledChange' | 'StateChange' | 'CapacityReservationInterruption';

/**
 * Karpenter's `message_type` label of a message (KA pkg/controllers/interruption/messages/types.go):
 * a state change is `instance_stopped` or `instance_terminated` by the state it reports, else `no_op`.
 */
export function karpenterMessageType(m: Pick<InterruptionMessage, 'kind' | 'state'>): string {
  switch (m.kind) {
    case 'SpotInterruption':
      return 'spot_interrupted';
    case 'RebalanceRecommendation':
      return 'rebalance_recommendation';
    case 'ScheduledChange':
      return 'scheduled_change';
    case 'CapacityReservationInterruption':
      return 'capacity_reservation_interrupted';
    case 'StateChange':
      if (m.state === 'stopping' || m.state === 'stopped') return 'instance_stopped';
      return m.state === 'shutting-down' || m.state === 'terminated' ? 'instance_terminated' : 'no_op';
  }
}

/** A parsed event reduced to what the handler acts on. */
export interface InterruptionMessage {
  kind: InterruptionKind;
  /** EventBridge event id (idempotency key). */
  eventId: string;
  /** Event time, epoch ms. */
  timeEpochMs: number;
  instanceIds: string[];
  /** Instance state (StateChange only). */
  state?: z.infer<typeof InstanceStateSchema>;
  /**
   * When the instance goes away, epoch ms, if the event says: spot notice time + 2 minutes,
   * the capacity reservation's termination time, the health event's start time.
   */
  noticeDeadlineEpochMs?: number;
  /** Health eventTypeCode / spot instance-action, for logs. */
  detail?: string;
  /** The envelope's account and region: the handler refuses any but the stack's own. */
  account: string;
  region: string;
}

/** The spot interruption notice: EC2 reclaims the instance two minutes after the warning (EC2 User Guide). */
export const SpotNoticeSeconds = 120;

/**
 * The earliest deadline a notice may set, whatever the message's times say: AWS's two-minute
 * notice from now (a message dated in the past, or naming a start already passed, cannot make a
 * cutoff immediate). Epoch ms.
 */
export function earliestNoticeDeadline(nowMs: number): number {
  return nowMs + SpotNoticeSeconds * 1000;
}

/**
 * Instances one AWS Health event may name: a message naming more is refused as a whole (a real
 * EC2 scheduled change names the few instances of one maintenance event; one forged message must
 * not drain a fleet).
 */
export const MaxHealthEventInstances = 50;

/** The account id of an ARN (`arn:<partition>:<service>:<region>:<account>:…`), or undefined. */
export function accountOfArn(arn: string | undefined): string | undefined {
  const account = arn?.split(':')[4];
  return account && /^[0-9]{12}$/.test(account) ? account : undefined;
}

/** `i-…` from an instance ARN (`arn:aws:ec2:<region>:<account>:instance/i-…`) or a bare id; undefined otherwise. */
export function instanceIdFrom(value: string): string | undefined {
  const id = value.includes(':instance/') ? value.slice(value.lastIndexOf('/') + 1) : value;
  return /^i-[0-9a-zA-Z]+$/.test(id) ? id : undefined;
}

/**
 * Normalizes a parsed event. Returns undefined for a Health event that is not an EC2 scheduled
 * change (the rule should not deliver those; they are acknowledged as no-ops).
 */
export function toInterruptionMessage(e: InterruptionEvent): InterruptionMessage | undefined {
  const base = { eventId: e.id, timeEpochMs: Date.parse(e.time), account: e.account, region: e.region };
  switch (e['detail-type']) {
    case DetailTypeSpotInterruption:
      return {
        ...base,
        kind: 'SpotInterruption',
        instanceIds: [e.detail['instance-id']],
        noticeDeadlineEpochMs: base.timeEpochMs + SpotNoticeSeconds * 1000,
        detail: e.detail['instance-action'],
      };
    case DetailTypeRebalance:
      return { ...base, kind: 'RebalanceRecommendation', instanceIds: [e.detail['instance-id']] };
    case DetailTypeStateChange:
      return { ...base, kind: 'StateChange', instanceIds: [e.detail['instance-id']], state: e.detail.state };
    case DetailTypeCapacityReservationInterruption: {
      const at = Date.parse(e.detail['instance-termination-time'] ?? '');
      return {
        ...base,
        kind: 'CapacityReservationInterruption',
        instanceIds: [e.detail['instance-id']],
        noticeDeadlineEpochMs: Number.isNaN(at) ? base.timeEpochMs + SpotNoticeSeconds * 1000 : at,
        detail: e.detail['instance-action'],
      };
    }
    case DetailTypeHealth: {
      if (e.detail.service !== 'EC2' || e.detail.eventTypeCategory !== 'scheduledChange') return undefined;
      const ids = [...e.detail.affectedEntities.map((a) => a.entityValue), ...e.resources].map(instanceIdFrom).filter((x): x is string => !!x);
      const start = Date.parse(e.detail.startTime ?? '');
      return {
        ...base,
        kind: 'ScheduledChange',
        instanceIds: [...new Set(ids)],
        ...(Number.isNaN(start) ? {} : { noticeDeadlineEpochMs: start }),
        detail: e.detail.eventTypeCode,
      };
    }
  }
}
