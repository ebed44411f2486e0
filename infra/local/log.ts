/**
 * Log capture for the embedded environment: every function gets a `Log` (the port
 * shared/runtime/observability.ts defines) that stamps virtual time and the Karpenter
 * controller name, keeps the record for expectations, and prints it as Karpenter prints its
 * own lines (`{"level":"INFO","time":…,"logger":"controller","message":"launched nodeclaim",
 * "controller":"nodeclaim.lifecycle",…}`, ANCHORS.md §4.3 and the seed's `kubectl logs` output).
 */
import type { VirtualClock } from './clock.ts';

/** Structured logger: the same shape as shared/runtime's `Log` (kept structural to avoid a runtime import). */
export interface LogPort {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** One captured log line. */
export interface LogRecord {
  level: LogLevel;
  /** Virtual epoch ms. */
  timeMs: number;
  /** Karpenter controller name (or the local component). */
  controller: string;
  message: string;
  fields: Record<string, unknown>;
}

/** Karpenter's controller name for each nodefleet function (as in Karpenter's logs). */
export const ControllerNames: Record<string, string> = {
  agent: 'agent',
  provisioner: 'provisioner',
  registration: 'nodeclaim.lifecycle',
  disruption: 'disruption',
  termination: 'node.termination',
  interruption: 'interruption',
  gc: 'nodeclaim.garbagecollection',
  environment: 'local',
};

const LevelRank: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40 };

/** Collects records from every function and writes them out as they happen. */
export class LogTap {
  readonly records: LogRecord[] = [];
  private readonly listeners = new Set<(r: LogRecord) => void>();

  constructor(private readonly clock: VirtualClock) {}

  /** A Log for function `name` (controller name from {@link ControllerNames}). */
  forFunction(name: string): LogPort {
    const controller = ControllerNames[name] ?? name;
    const at = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) =>
      this.add({ level, timeMs: this.clock.nowMs(), controller, message, fields: fields ?? {} });
    return { debug: at('DEBUG'), info: at('INFO'), warn: at('WARN'), error: at('ERROR') };
  }

  add(r: LogRecord): void {
    this.records.push(r);
    for (const l of this.listeners) l(r);
  }

  /** Calls `fn` for every new record; returns an unsubscribe function. */
  subscribe(fn: (r: LogRecord) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Distinct messages seen at INFO or above. */
  messages(): Set<string> {
    return new Set(this.records.filter((r) => LevelRank[r.level] >= LevelRank.INFO).map((r) => r.message));
  }
}

/** True when `r` should be printed at `min` level. */
export function atLeast(r: LogRecord, min: LogLevel): boolean {
  return LevelRank[r.level] >= LevelRank[min];
}

/** The record as a Karpenter JSON log line. */
export function formatKarpenterJson(r: LogRecord): string {
  return JSON.stringify(
    { level: r.level, time: new Date(r.timeMs).toISOString(), logger: 'controller', message: r.message, controller: r.controller, ...r.fields },
    (_k, v) => (v instanceof Error ? { name: v.name, message: v.message } : v),
  );
}
