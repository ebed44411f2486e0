/**
 * Runs a scenario in the embedded environment: starts it, plays the timeline (scale changes,
 * applies, faults, waits), prints one human line per log record (or Karpenter's JSON lines with
 * `logFormat: 'json'`) and a one-line live status as things happen, serves the live view when
 * asked, then checks the scenario's expectations, prints the summary (timeline, cost per hour,
 * termination execution histories) and writes `.nodefleet/report.html`. Every log record also
 * goes to `.nodefleet/logs.jsonl` as Karpenter's JSON line. `ok` is true only when every
 * expectation holds.
 */
import { appendFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { LocalEnvironment, type LocalEnvironmentOptions } from './environment.ts';
import { atLeast, formatKarpenterJson, type LogLevel } from './log.ts';
import { checkExpectations, executions, type CheckResult, type RunFacts } from './expectations.ts';
import type { Scenario, ScenarioStep, WaitForCondition } from './scenario.ts';
import { renderSummary, statusLine, type TimelineEntry } from './summary.ts';
import { clockText, demoConsole, humanLogLine, type DemoConsole } from './console.ts';
import { LiveView } from './ui/index.ts';
import { podsMatch, selectNodes } from './conditions.ts';
import { watchBudgets, type BudgetWatch } from './budget-watch.ts';
import type { NodeClaim } from '../../shared/api/nodeclaim.ts';
import type { KubeObject } from '../../shared/api/kube.ts';
import { AnnotationNodeClaimMirror } from '../../shared/api/labels.ts';
import { Table } from '../../shared/api/contract.ts';
import { instanceIdOfProviderId } from '../../shared/api/provider-id.ts';
import { replayOnWallTime } from './wall-time.ts';
import { parseLabelSelector } from './kube/selectors.ts';

/** Real milliseconds between live-view / condition polls. */
const PollRealMs = 100;
/** Default virtual time a `waitFor` may take. */
const DefaultWaitSeconds = 600;

export interface RunOptions extends Omit<LocalEnvironmentOptions, 'scenario'> {
  /** Where lines go (default stdout, with the live status redrawn in place on a terminal). */
  out?: (line: string) => void;
  /** Log records on the console as human lines (default) or Karpenter's JSON lines. */
  logFormat?: 'text' | 'json';
  /** Serve the live view on 127.0.0.1 (`port` 0 = any free port; default: none). */
  ui?: { port?: number };
  /** Called with the live view's URL once it serves. */
  onViewUrl?: (url: string) => void;
  /** Lowest log level printed (default INFO). */
  logLevel?: LogLevel;
  /** Print nothing while running (the result still has the summary). */
  quiet?: boolean;
  /** Skip the timeline when a function or stand-in is missing (the run cannot pass anyway). */
  failFast?: boolean;
  /** Called once the environment has started (tests attach probes here). */
  onStarted?: (env: LocalEnvironment) => void;
  /** After the summary, keep the environment running until this resolves (e.g. Ctrl-C), for kubectl. */
  keepUntil?: (env: LocalEnvironment) => Promise<void>;
}

export interface RunResult {
  ok: boolean;
  checks: CheckResult[];
  summary: string;
  facts: RunFacts;
  /** Real seconds the run took. */
  realSeconds: number;
  /** The report written after the run (undefined when it could not be written). */
  reportPath?: string;
  /** Virtual seconds the run covered. */
  virtualSeconds: number;
  /** The names of the metrics the functions emitted during the run. */
  metricNames: string[];
}

/** Runs `scenario` end to end. Never throws for a scenario failure: `ok` says it. */
export async function runScenario(scenario: Scenario, opts: RunOptions = {}): Promise<RunResult> {
  // A real cluster runs on wall time: the scenario's absolute instants move to the wall clock's start.
  if (opts.cluster) scenario = replayOnWallTime(scenario, Date.now());
  const con: DemoConsole = opts.quiet
    ? { line: () => undefined, status: () => undefined, end: () => undefined }
    : opts.out
      ? demoConsole((s) => opts.out!(s.replace(/\n$/, '')))
      : demoConsole((s) => process.stdout.write(s), { tty: process.stdout.isTTY, width: process.stdout.columns });
  const out = (l: string) => con.line(l);
  const realStart = Date.now();
  const env = new LocalEnvironment({ scenario, ...opts });
  const timeline: TimelineEntry[] = [];
  const failures: string[] = [];
  const facts: RunFacts = { maxConcurrentNodeClaims: 0, interruptions: [], marks: {}, strays: [] };
  const minLevel = opts.logLevel ?? 'INFO';
  // Every line goes to .nodefleet/logs.jsonl; the console skips a line that repeats the previous
  // one from the same controller with the same fields (e.g. "disruption blocked" every minute).
  const lastByKey = new Map<string, string>();
  const logFile = join(env.stateDir, 'logs.jsonl');
  let logFileOk = true;
  const unsubscribe = env.logs.subscribe((r) => {
    if (!atLeast(r, minLevel)) return;
    const line = formatKarpenterJson(r);
    if (logFileOk) {
      try {
        appendFileSync(logFile, `${line}\n`);
      } catch {
        logFileOk = false;
      }
    }
    const key = `${r.controller}|${r.message}|${JSON.stringify(r.fields.node ?? r.fields.Node ?? r.fields.NodeClaim ?? '')}`;
    const sig = JSON.stringify(r.fields);
    if (lastByKey.get(key) === sig) return;
    lastByKey.set(key, sig);
    out(opts.logFormat === 'json' ? line : humanLogLine(r, env.clock.startEpochMs()));
  });
  const note = (text: string) => {
    timeline.push({ atMs: env.clock.nowMs(), text });
    out(`── ${offset(env, env.clock.nowMs())} ${text}`);
  };

  let view: LiveView | undefined;
  let budgetWatch: BudgetWatch | undefined;
  let stopRemovals: (() => void) | undefined;
  let stopPodGap: (() => void) | undefined;
  let viewTimer: NodeJS.Timeout | undefined;
  let polling = false;
  const poll = async () => {
    if (polling) return;
    polling = true;
    try {
      const claims = await env.nodeClaims();
      facts.maxConcurrentNodeClaims = Math.max(facts.maxConcurrentNodeClaims, claims.filter((c) => c.phase !== 'Terminated').length);
      view?.recorder.sample();
      con.status(statusLine(env, claims), `   ${offset(env, env.clock.nowMs())} │ `);
    } finally {
      polling = false;
    }
  };

  try {
    out(
      `nodefleet demo: ${scenario.name} in ${scenario.region}, ${opts.cluster ? 'on the real control plane, wall time' : `speed ×${env.clock.speed}, virtual start ${scenario.start}`}`,
    );
    await env.start();
    view = await LiveView.start(env, timeline, opts.ui ? { serve: true, port: opts.ui.port } : {}).catch(async (err: unknown) => {
      out(`live view not served: ${err instanceof Error ? err.message : String(err)}`);
      return LiveView.start(env, timeline);
    });
    if (view.url) {
      out(`live view: ${view.url}`);
      opts.onViewUrl?.(view.url);
    }
    trackEvents(env, note);
    if (scenario.expect.budgetsHonoured?.length) budgetWatch = watchBudgets(env.cluster, scenario.expect.budgetsHonoured);
    if (scenario.expect.runningAgainAfterDeletion) stopPodGap = watchPodGap(env, scenario.expect.runningAgainAfterDeletion, facts);
    if (scenario.expect.nodeClaimObjectsOutliveInstances)
      stopRemovals = watchNodeClaimObjectRemovals(env, (r) => (facts.nodeClaimObjectRemovals ??= []).push(r));
    opts.onStarted?.(env);
    if (env.missing.length) {
      for (const m of env.missing) out(`!! missing: ${m.name} (${m.file}): ${m.reason}`);
    }
    if (env.missing.length && opts.failFast) throw new MissingPartsError();
    viewTimer = setInterval(() => void poll(), PollRealMs);
    const deadlineMs = env.clock.startEpochMs() + scenario.timeout * 1000;
    let prevEndMs = env.clock.nowMs();
    for (const [i, step] of scenario.timeline.entries()) {
      if (step.at !== undefined) await env.clock.sleepUntil(env.clock.startEpochMs() + step.at * 1000);
      if (step.after !== undefined) await env.clock.sleepUntil(prevEndMs + step.after * 1000);
      const err = await runStep(env, step, facts, note, deadlineMs);
      prevEndMs = env.clock.nowMs();
      if (err) {
        failures.push(`timeline step ${i + 1}: ${err}`);
        note(`step ${i + 1} failed: ${err}`);
        break;
      }
    }
    await poll();
  } catch (err) {
    if (!(err instanceof MissingPartsError)) failures.push(`environment: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    if (viewTimer) clearInterval(viewTimer);
    budgetWatch?.stop();
    stopRemovals?.();
    stopPodGap?.();
    if (budgetWatch) facts.budgets = budgetWatch.results;
  }

  // Snapshot before stopping (the stand-ins go away with stop()).
  const claims: NodeClaim[] = await env.nodeClaims().catch(() => []);
  facts.finalNodeClaims = claims;
  const checks = failures.map((f) => ({ name: f.slice(0, f.indexOf(':')), ok: false, detail: f.slice(f.indexOf(':') + 2) }));
  if (env.missing.length)
    checks.push({ name: 'environment', ok: false, detail: `missing parts: ${env.missing.map((m) => `${m.name} (${m.file}: ${m.reason})`).join('; ')}` });
  checks.push(...checkExpectations(env, scenario.expect, facts));
  const summary = renderSummary(env, { timeline, checks, facts, realSeconds: (Date.now() - realStart) / 1000 });
  const virtualSeconds = env.clock.elapsedSeconds();
  const ok = checks.every((c) => c.ok);
  unsubscribe();
  con.end();
  out(summary);
  let reportPath: string | undefined;
  if (view) {
    try {
      reportPath = await view.writeReport({ ok, summary });
      out(`report: ${relativeToCwd(reportPath)}`);
    } catch (err) {
      out(`report not written: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (opts.keepUntil) await opts.keepUntil(env);
  await view?.close();
  await env.stop();
  const realSeconds = (Date.now() - realStart) / 1000;
  const metricNames = [...new Set((env.metrics?.emitted ?? []).map((m) => m.name))].sort();
  return { ok, checks, summary, facts, realSeconds, virtualSeconds, reportPath, metricNames };
}

/** Thrown to skip the timeline when parts are missing (reported as the `environment` check). */
class MissingPartsError extends Error {
  override name = 'MissingPartsError';
}

/** `path` relative to the working directory when it is inside it (shorter to print). */
function relativeToCwd(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function offset(env: LocalEnvironment, ms: number): string {
  return clockText(env.clock.startEpochMs(), ms);
}

/** Adds timeline entries for cloud and state-machine events as they happen. */
function trackEvents(env: LocalEnvironment, note: (t: string) => void): void {
  const prev = { ...env.ec2.listeners };
  env.ec2.listeners.onRunning = (i) => {
    prev.onRunning?.(i);
    if (!i.preexisting) note(`EC2 ${i.instanceId} running (${i.instanceType} ${i.capacityType} ${i.zone})`);
  };
  env.ec2.listeners.onStopping = (i) => {
    prev.onStopping?.(i);
    note(`EC2 ${i.instanceId} shutting-down (${i.terminatedBy === 'spot-reclaim' ? 'reclaimed by EC2' : 'TerminateInstances'})`);
  };
  env.ec2.listeners.onTerminated = (i) => {
    prev.onTerminated?.(i);
  };
  env.ec2.listeners.onCreateFleet = (req, o) => {
    prev.onCreateFleet?.(req, o);
    const launched = o.instances.map((i) => `${i.instanceType} ${i.capacityType} ${i.zone} ${i.instanceId}`).join(', ');
    const errs = [...new Set(o.errors.map((e) => e.errorCode))].join(', ');
    note(`EC2 CreateFleet (${req.overrides.length} overrides, ${req.capacityType}) → ${launched || 'nothing launched'}${errs ? ` [errors: ${errs}]` : ''}`);
  };
  const seen = new Set<string>();
  env.cluster.onNodeChange((type, node) => {
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    const key = `${node.metadata.name}|${type === 'DELETED' ? 'deleted' : ready ? 'ready' : 'registered'}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (type === 'DELETED') note(`node ${node.metadata.name} deleted`);
    else if (ready) note(`node ${node.metadata.name} Ready`);
    else note(`node ${node.metadata.name} registered (NotReady)`);
  });
  if (env.sfn) {
    const orig = env.sfn.startExecution.bind(env.sfn);
    env.sfn.startExecution = (machine: string, input: any, name: string) => {
      const r = orig(machine, input, name);
      if (!r.alreadyExists) {
        note(`Step Functions ${machine} execution ${name} started (reason ${input?.reason ?? '?'})`);
        env.sfn
          .waitForExecution(name)
          .then((rec: any) => note(`Step Functions execution ${name} ${rec.status}`))
          .catch(() => undefined);
      }
      return r;
    };
  }
}

/** Reports each mirrored NodeClaim object's removal with its instance's state at that moment. */
function watchNodeClaimObjectRemovals(env: LocalEnvironment, report: (r: NonNullable<RunFacts['nodeClaimObjectRemovals']>[number]) => void): () => void {
  return env.cluster.onChange((e) => {
    if (e.type !== 'DELETED' || e.object.kind !== 'NodeClaim' || e.object.metadata.annotations?.[AnnotationNodeClaimMirror] === undefined) return;
    const instanceId = instanceIdOfProviderId((e.object as KubeObject & { status?: { providerID?: string } }).status?.providerID);
    report({ name: e.object.metadata.name, ...(instanceId ? { instanceId, instanceState: env.ec2.instances.get(instanceId)?.state ?? 'unknown' } : {}) });
  });
}

/**
 * Records, for `runningAgainAfterDeletion`, the instant the first pod matching the selector is
 * deleted (a deletionTimestamp appears) and the first instant after it that a matching pod not
 * terminating is Running.
 */
function watchPodGap(env: LocalEnvironment, want: { selector: string; namespace: string }, facts: RunFacts): () => void {
  const matches = parseLabelSelector(want.selector);
  return env.cluster.onChange((e) => {
    if (e.object.kind !== 'Pod' || (e.object.metadata.namespace ?? 'default') !== want.namespace || !matches(e.object.metadata.labels ?? {})) return;
    const pod = e.object as KubeObject & { status?: { phase?: string } };
    const key = `${want.namespace}/${pod.metadata.name}`;
    if (!facts.podGap) {
      if (pod.metadata.deletionTimestamp || e.type === 'DELETED') facts.podGap = { pod: key, deletedAtMs: env.clock.nowMs() };
      return;
    }
    if (facts.podGap.runningAtMs === undefined && e.type !== 'DELETED' && !pod.metadata.deletionTimestamp && pod.status?.phase === 'Running') {
      facts.podGap = { ...facts.podGap, runningAtMs: env.clock.nowMs(), runningPod: key };
    }
  });
}

/** Runs one timeline step; returns an error text when it failed. */
async function runStep(env: LocalEnvironment, step: ScenarioStep, facts: RunFacts, note: (t: string) => void, deadlineMs: number): Promise<string | undefined> {
  if (step.note && !step.waitFor) note(step.note);
  if (step.scale) {
    await env.cluster.scale(step.scale.namespace, step.scale.deployment, step.scale.replicas);
    if (!step.note) note(`scaled deployment ${step.scale.namespace}/${step.scale.deployment} to ${step.scale.replicas}`);
    return undefined;
  }
  if (step.apply) {
    await env.cluster.apply(step.apply as any);
    note(`applied ${step.apply.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
    return undefined;
  }
  if (step.delete) {
    const names: string[] = [];
    for (const d of step.delete) {
      const matches = d.selector === undefined ? undefined : parseLabelSelector(d.selector);
      const targets = matches
        ? env.cluster
            .objects(d.apiVersion, d.kind, d.namespace)
            .filter((o) => matches(o.metadata.labels ?? {}))
            .map((o) => o.metadata.name)
        : [d.name!];
      if (targets.length === 0) return `delete: no ${d.kind} matches ${d.selector}`;
      for (const name of targets) {
        await env.cluster.delete(d.apiVersion, d.kind, name, d.namespace);
        names.push(`${d.kind}/${name}`);
      }
    }
    note(`deleted ${names.join(', ')}`);
    return undefined;
  }
  if (step.capacityReservation) {
    const r = step.capacityReservation;
    env.ec2.addCapacityReservation({
      id: r.id,
      instanceType: r.instanceType,
      zone: r.zone,
      total: r.count,
      instanceMatchCriteria: r.instanceMatchCriteria,
      tags: r.tags,
    });
    note(`capacity reservation ${r.id}: ${r.count} × ${r.instanceType} in ${r.zone} (${r.instanceMatchCriteria})`);
    return undefined;
  }
  if (step.mark) {
    facts.marks[step.mark] = env.clock.nowMs();
    return undefined;
  }
  if (step.fault?.insufficientCapacity) {
    const f = step.fault.insufficientCapacity;
    env.ec2.addFault({
      instanceTypes: f.instanceTypes,
      zones: f.zones,
      capacityType: f.capacityType,
      errorCode: f.errorCode,
      untilMs: f.for !== undefined ? env.clock.nowMs() + f.for * 1000 : undefined,
    });
    note(
      `fault: insufficient capacity for ${f.instanceTypes?.join(', ') ?? 'all types'} ${f.capacityType ?? ''} ${f.zones?.join(', ') ?? 'all zones'}${f.for !== undefined ? ` for ${f.for}s` : ''}`,
    );
    return undefined;
  }
  if (step.fault?.spotInterruption) {
    const f = step.fault.spotInterruption;
    const candidates = [...env.ec2.instances.values()]
      .filter((i) => i.capacityType === 'spot' && i.state === 'running' && !i.preexisting)
      .filter((i) => (f.instanceId ? i.instanceId === f.instanceId : f.nodePool ? i.tags['karpenter.sh/nodepool'] === f.nodePool : true))
      .sort((a, b) => a.launchTimeMs - b.launchTimeMs);
    const target = candidates[0];
    if (!target) return `spot interruption: no running spot instance${f.nodePool ? ` in NodePool ${f.nodePool}` : ''}`;
    const nodeName = env.cluster.nodes().find((n) => n.spec?.providerID?.endsWith(`/${target.instanceId}`))?.metadata.name;
    env.ec2.interruptSpot(target.instanceId, f.notice);
    facts.interruptions.push({
      instanceId: target.instanceId,
      nodeName,
      noticeAtMs: target.interruptionNoticeAtMs!,
      deadlineMs: target.interruptionDeadlineMs!,
    });
    note(`fault: EC2 Spot Instance Interruption Warning for ${target.instanceId} (${target.instanceType}, node ${nodeName ?? '?'}); reclaim at +${f.notice}s`);
    return undefined;
  }
  if (step.fault?.kubeletStopped) {
    const f = step.fault.kubeletStopped;
    const target = [...env.ec2.instances.values()]
      .filter((i) => i.state === 'running' && !i.preexisting && (f.nodePool ? i.tags['karpenter.sh/nodepool'] === f.nodePool : true))
      .sort((a, b) => a.launchTimeMs - b.launchTimeMs)
      .find((i) => env.cluster.stopKubelet(i.instanceId));
    if (!target) return `kubelet stopped: no running node${f.nodePool ? ` in NodePool ${f.nodePool}` : ''} with a live kubelet`;
    const nodeName = env.cluster.nodes().find((n) => n.spec?.providerID?.endsWith(`/${target.instanceId}`))?.metadata.name;
    note(`fault: the kubelet of node ${nodeName ?? '?'} (${target.instanceId}) stopped posting status; the instance keeps running`);
    return undefined;
  }
  if (step.fault?.strayInstance) {
    const f = step.fault.strayInstance;
    // The tags of a nodefleet launch of the pool, for another claim; started without a kubelet (as
    // the managed nodes are added, so the cluster ignores it).
    const launch = [...env.ec2.instances.values()].find((x) => !x.preexisting && x.tags['karpenter.sh/nodepool'] === f.nodePool);
    if (!launch) return `stray instance: no nodefleet instance of NodePool ${f.nodePool} to take its launch tags from`;
    const i = env.ec2.addExisting({ instanceType: f.instanceType, zone: f.zone, tags: { ...launch.tags, 'karpenter.sh/nodeclaim': f.nodeClaim } });
    (facts.strays ??= []).push(i.instanceId);
    note(`fault: instance ${i.instanceId} (${f.instanceType}, tagged for NodeClaim ${f.nodeClaim}) runs with no NodeClaim record and never joins`);
    return undefined;
  }
  if (step.fault?.tableReplaced) {
    const deleted = await emptyTable(env);
    note(`fault: the table was replaced by an empty one (${deleted} item(s) gone: claims, epoch, budgets, ICE entries)`);
    return undefined;
  }
  if (step.waitFor) {
    const timeoutMs = (step.timeout ?? DefaultWaitSeconds) * 1000;
    const until = Math.min(env.clock.nowMs() + timeoutMs, deadlineMs);
    const what = describeWait(step.waitFor);
    if (step.note) note(step.note);
    for (;;) {
      const r = await conditionHolds(env, step.waitFor, facts);
      if (r.ok) {
        note(`reached: ${what}`);
        return undefined;
      }
      if (env.clock.nowMs() >= until) return `timed out after ${Math.round(timeoutMs / 1000)}s (virtual) waiting for ${what}: ${r.detail}`;
      await new Promise((res) => setTimeout(res, PollRealMs));
    }
  }
  return undefined;
}

function describeWait(w: WaitForCondition): string {
  const parts: string[] = [];
  if (w.pods)
    parts.push(
      `pods ${w.pods.selector}${w.pods.running !== undefined ? ` running=${w.pods.running}` : ''}${w.pods.pending !== undefined ? ` pending=${w.pods.pending}` : ''}${w.pods.notOnInterruptedNode ? ' (off the interrupted node)' : ''}`,
    );
  if (w.nodeClaims)
    parts.push(`nodeclaims${w.nodeClaims.nodePool ? `(${w.nodeClaims.nodePool})` : ''}${w.nodeClaims.initialized ? ' initialized' : ''}=${w.nodeClaims.count}`);
  if (w.instances) parts.push(`instances=${w.instances.count}`);
  if (w.nodes) parts.push(`nodes=${w.nodes.count}`);
  if (w.nodeClaimObjects) parts.push(`nodeclaim objects${w.nodeClaimObjects.ready ? ' ready' : ''}=${w.nodeClaimObjects.count}`);
  if (w.interruptedInstanceGone) parts.push('interrupted instance gone');
  if (w.terminations)
    parts.push(`${w.terminations.count} ${w.terminations.status} termination(s)${w.terminations.reason ? ` (${w.terminations.reason})` : ''}`);
  return parts.join(', ');
}

async function conditionHolds(env: LocalEnvironment, w: WaitForCondition, facts: RunFacts): Promise<{ ok: boolean; detail: string }> {
  const details: string[] = [];
  let ok = true;
  if (w.pods) {
    const r = podsMatch(env, w.pods, facts);
    ok &&= r.ok;
    details.push(r.detail);
  }
  if (w.nodeClaims) {
    const claims = (await env.nodeClaims()).filter((c) => (!w.nodeClaims!.nodePool || c.nodePool === w.nodeClaims!.nodePool) && c.phase !== 'Terminated');
    const counted = w.nodeClaims.initialized ? claims.filter((c) => c.conditions.some((x) => x.type === 'Initialized' && x.status === 'True')) : claims;
    ok &&= counted.length === w.nodeClaims.count;
    details.push(`nodeclaims ${counted.length}`);
  }
  if (w.instances) {
    const n = env.liveInstances().filter((i) => !w.instances!.nodePool || i.tags['karpenter.sh/nodepool'] === w.instances!.nodePool).length;
    ok &&= n === w.instances.count;
    details.push(`instances ${n}`);
  }
  if (w.nodes) {
    const n = selectNodes(env, w.nodes.selector).length;
    ok &&= n === w.nodes.count;
    details.push(`nodes ${n}`);
  }
  if (w.nodeClaimObjects) {
    const mirrors = env.cluster.objects('karpenter.sh/v1', 'NodeClaim').filter((o) => o.metadata.annotations?.[AnnotationNodeClaimMirror] !== undefined);
    const counted = w.nodeClaimObjects.ready
      ? mirrors.filter((o) =>
          (o as KubeObject & { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions?.some(
            (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
          ),
        )
      : mirrors;
    ok &&= counted.length === w.nodeClaimObjects.count;
    details.push(`nodeclaim objects ${counted.length}`);
  }
  if (w.interruptedInstanceGone) {
    const gone = facts.interruptions.every((i) => {
      const s = env.ec2.instances.get(i.instanceId)?.state;
      return s === 'shutting-down' || s === 'terminated';
    });
    ok &&= gone && facts.interruptions.length > 0;
    details.push(`interrupted instance gone: ${gone}`);
  }
  if (w.terminations) {
    const t = w.terminations;
    const n = executions(env).filter((e) => e.status === t.status && (!t.reason || safeReason(e.input) === t.reason)).length;
    ok &&= n >= t.count;
    details.push(`terminations ${n}`);
  }
  return { ok, detail: details.join(', ') };
}

function safeReason(input: string): string | undefined {
  try {
    return JSON.parse(input)?.reason;
  } catch {
    return undefined;
  }
}

/** Deletes every item of the local table (the `tableReplaced` fault); returns how many. */
async function emptyTable(env: LocalEnvironment): Promise<number> {
  const { tableName } = env.dynamo;
  let deleted = 0;
  let ExclusiveStartKey: unknown;
  do {
    const page = await env.dynamo.call('Scan', { TableName: tableName, ...(ExclusiveStartKey ? { ExclusiveStartKey } : {}) });
    for (const item of page.Items ?? []) {
      await env.dynamo.call('DeleteItem', {
        TableName: tableName,
        Key: { [Table.partitionKey]: item[Table.partitionKey], [Table.sortKey]: item[Table.sortKey] },
      });
      deleted += 1;
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return deleted;
}
