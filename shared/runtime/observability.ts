/**
 * Logging and metrics behind two small interfaces, so handlers and tests do not depend on
 * Powertools: {@link Log} (structured JSON lines, Karpenter's messages and field names) and
 * {@link MetricsSink} (CloudWatch EMF, namespace "nodefleet", metrics named exactly as Karpenter
 * names them (shared/api/metrics.ts), with Karpenter's label names as dimensions).
 * The Powertools-backed implementations live here (the only folder importing Powertools);
 * {@link RecordingLog} / {@link RecordingMetrics} are for tests and the embedded environment.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { MetricsNamespace } from '../api/metrics.ts';

/** Structured logger: a message plus fields, JSON in Lambda. */
export interface Log {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Metric sink: counters and durations with per-emission dimensions. */
export interface MetricsSink {
  /** Adds `value` (default 1) to counter `name` (Karpenter name, e.g. karpenter_nodeclaims_created_total). */
  count(name: string, dimensions?: Record<string, string>, value?: number): void;
  /** Records a duration in seconds (histograms / summaries in Karpenter). */
  seconds(name: string, value: number, dimensions?: Record<string, string>): void;
}

/** Powertools Logger, Metrics and Tracer for one function (service name = function name). */
export interface Powertools {
  logger: Logger;
  metrics: Metrics;
  tracer: Tracer;
}

/** Creates the Powertools trio once per function. */
export function createPowertools(serviceName: string, logLevel = 'INFO'): Powertools {
  return {
    logger: new Logger({ serviceName, logLevel: logLevel as never }),
    metrics: new Metrics({ namespace: MetricsNamespace, serviceName }),
    tracer: new Tracer({ serviceName }),
  };
}

/** {@link Log} over a Powertools Logger. */
export function powertoolsLog(logger: Logger): Log {
  return {
    debug: (m, f) => logger.debug(m, f ?? {}),
    info: (m, f) => logger.info(m, f ?? {}),
    warn: (m, f) => logger.warn(m, f ?? {}),
    error: (m, f) => logger.error(m, f ?? {}),
  };
}

/** {@link MetricsSink} over Powertools Metrics: one EMF document per emission (its own dimensions). */
export function powertoolsMetrics(metrics: Metrics): MetricsSink {
  return {
    count(name, dimensions = {}, value = 1) {
      const m = metrics.singleMetric();
      if (Object.keys(dimensions).length) m.addDimensions(dimensions);
      m.addMetric(name, MetricUnit.Count, value);
    },
    seconds(name, value, dimensions = {}) {
      const m = metrics.singleMetric();
      if (Object.keys(dimensions).length) m.addDimensions(dimensions);
      m.addMetric(name, MetricUnit.Seconds, value);
    },
  };
}

/** One recorded log line. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/** Log that keeps lines in memory (tests assert Karpenter's messages); `echo` also prints JSON. */
export class RecordingLog implements Log {
  readonly lines: LogLine[] = [];
  constructor(private readonly echo?: (line: string) => void) {}
  private push(level: LogLine['level'], message: string, fields: Record<string, unknown> = {}): void {
    this.lines.push({ level, message, fields });
    this.echo?.(JSON.stringify({ level: level.toUpperCase(), message, ...fields }));
  }
  debug(m: string, f?: Record<string, unknown>): void {
    this.push('debug', m, f);
  }
  info(m: string, f?: Record<string, unknown>): void {
    this.push('info', m, f);
  }
  warn(m: string, f?: Record<string, unknown>): void {
    this.push('warn', m, f);
  }
  error(m: string, f?: Record<string, unknown>): void {
    this.push('error', m, f);
  }
  /** Lines with this message. */
  withMessage(message: string): LogLine[] {
    return this.lines.filter((l) => l.message === message);
  }
}

/** Metrics kept in memory: `total(name, dims?)` sums matching emissions. */
export class RecordingMetrics implements MetricsSink {
  readonly emitted: { name: string; value: number; dimensions: Record<string, string> }[] = [];
  count(name: string, dimensions: Record<string, string> = {}, value = 1): void {
    this.emitted.push({ name, value, dimensions });
  }
  seconds(name: string, value: number, dimensions: Record<string, string> = {}): void {
    this.emitted.push({ name, value, dimensions });
  }
  /** Sum of values of `name` whose dimensions include `match`. */
  total(name: string, match: Record<string, string> = {}): number {
    return this.emitted.filter((e) => e.name === name && Object.entries(match).every(([k, v]) => e.dimensions[k] === v)).reduce((s, e) => s + e.value, 0);
  }
}
