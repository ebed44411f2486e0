/**
 * `nodefleet status` — NodeClaims like `kubectl get nodeclaims` (NAME, TYPE, CAPACITY, ZONE, NODE,
 * READY, AGE) — and `nodefleet history NODECLAIM` — every attempt of the claim's termination
 * (a failed attempt is carried on by gc under `<claim>_2`, `_3` …) as timelines (state, time,
 * duration, error).
 *
 * Source: the embedded environment's `.nodefleet/` (dynalite data, execution records) with
 * `--local [DIR]`, or by default when `.nodefleet/` exists and NODEFLEET_TABLE_NAME is not set;
 * otherwise AWS through the runtime's adapters (NODEFLEET_CLUSTER_NAME, NODEFLEET_TABLE_NAME,
 * AWS_REGION, and NODEFLEET_TERMINATION_STATE_MACHINE_ARN for history).
 * Exit codes: 0 ok, 1 not found / no source / AWS error, 2 usage.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { NodeClaimSchema, getCondition, type NodeClaim } from '../../../shared/api/nodeclaim.ts';
import { CliError, encode, kubeList, outputFormat, readText } from '../io.ts';
import { toKubeNodeClaim } from '../../../shared/api/nodeclaim.ts';
import { terminationAttemptOf, terminationExecutionName, type ExecutionHistoryEvent, type ExecutionRecord } from '../../../shared/api/termination.ts';

/** The embedded environment's state folder (infra/local/environment.ts StateDirName). */
const StateDir = '.nodefleet';

// ---------------------------------------------------------------- formatting (pure)

/**
 * kubectl's HumanDuration (k8s.io/apimachinery pkg/util/duration): "45s", "5m30s", "45m", "5h30m",
 * "23h", "3d4h", "45d", "2y30d".
 */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 730) return `${d}d`;
  const y = Math.floor(d / 365);
  return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
}

/** A short duration with sub-second precision, for timelines ("0.12s", "5s", "2m5s"). */
export function shortDuration(ms: number): string {
  if (ms < 10_000) return `${(Math.max(0, ms) / 1000).toFixed(ms < 1000 ? 2 : 1).replace(/\.0+$/, '')}s`;
  return humanDuration(ms);
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

/** READY as kubectl shows it: the Ready condition, else derived from the phase. */
export function readyOf(c: NodeClaim): string {
  const ready = getCondition(c, 'Ready');
  if (ready) return ready.status;
  if (c.phase === 'Initialized') return 'True';
  if (c.phase === 'Terminated' || c.phase === 'Failed') return 'False';
  return 'Unknown';
}

/**
 * `kubectl get nodeclaims` columns, oldest first. `nowMs` is the reference for AGE. `phase` adds
 * PHASE after READY (status --all, where terminated claims are listed too); `wide` adds the
 * columns `kubectl get nodeclaims -o wide` shows (IMAGEID, ID, NODEPOOL, NODECLASS, DRIFTED) and
 * the price of the launched offering.
 */
export function formatStatus(claims: NodeClaim[], nowMs: number, opts: { phase?: boolean; wide?: boolean } = {}): string {
  const rows = [...claims]
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name))
    .map((c) => [
      c.name,
      c.instanceType ?? '',
      c.capacityType ?? '',
      c.zone ?? '',
      c.nodeName ?? '',
      readyOf(c),
      ...(opts.phase ? [c.phase] : []),
      humanDuration(nowMs - Date.parse(c.createdAt)),
      ...(opts.wide
        ? [
            c.imageId ?? '',
            c.providerId ?? '',
            c.nodePool,
            c.nodeClass,
            getCondition(c, 'Drifted')?.status ?? '',
            c.priceUsdPerHour !== undefined ? `$${c.priceUsdPerHour.toFixed(4)}/h` : '',
          ]
        : []),
    ]);
  const header = [
    'NAME',
    'TYPE',
    'CAPACITY',
    'ZONE',
    'NODE',
    'READY',
    ...(opts.phase ? ['PHASE'] : []),
    'AGE',
    ...(opts.wide ? ['IMAGEID', 'ID', 'NODEPOOL', 'NODECLASS', 'DRIFTED', 'PRICE'] : []),
  ];
  return table(header, rows);
}

/** One line of a timeline. */
export interface TimelineRow {
  time: string;
  offsetMs: number;
  state: string;
  type: string;
  durationMs: number;
  /** Loop rounds folded into this row. */
  count: number;
  detail: string;
  error?: string;
}

const ChoiceStates = /^Choice/;

/**
 * Builds the timeline: one row per state visit, with the state's duration, a summary of its result
 * and any error (a Task failure that was retried or caught stays on its row). Without `verbose`,
 * Choice states are hidden and identical Drain/WaitForDrain rounds fold into one row (×N).
 */
export function buildTimeline(rec: ExecutionRecord, opts: { verbose?: boolean } = {}): TimelineRow[] {
  const startMs = Date.parse(rec.startDate);
  const visits: TimelineRow[] = [];
  let open: TimelineRow | undefined;
  for (const e of rec.events) {
    const ms = Date.parse(e.timestamp);
    if (e.type.endsWith('StateEntered')) {
      open = {
        time: e.timestamp,
        offsetMs: ms - startMs,
        state: e.stateName ?? '?',
        type: e.type.replace(/StateEntered$/, ''),
        durationMs: 0,
        count: 1,
        detail: '',
      };
      visits.push(open);
    } else if (e.type.endsWith('StateExited') && open) {
      open.durationMs = ms - Date.parse(open.time);
      open.detail = summarize(open.state, e.output);
    } else if (isFailure(e) && open) {
      const msg = `${e.error ?? 'Error'}${e.cause ? `: ${oneLine(e.cause)}` : ''}`;
      open.error = open.error ? `${open.error}; ${msg}` : msg;
      open.durationMs = ms - Date.parse(open.time);
    } else if (e.type === 'TaskStateRetried' && open) {
      open.error = `${open.error ?? ''} (retried)`.trim();
    } else if (e.type === 'TaskStateCaught' && open) {
      open.error = `${open.error ?? ''} (caught ${e.cause ?? ''})`.trim();
    }
  }
  if (opts.verbose) return visits;
  const out: TimelineRow[] = [];
  let foldWait = false;
  for (const v of visits) {
    if (ChoiceStates.test(v.type)) continue;
    const [prevTask, prevWait] = [out.at(-2), out.at(-1)];
    if (foldWait && v.type === 'Wait' && prevWait?.state === v.state) {
      prevWait.count += 1;
      prevWait.durationMs += v.durationMs;
      foldWait = false;
      continue;
    }
    foldWait = false;
    if (prevTask && prevWait?.type === 'Wait' && prevTask.state === v.state && prevTask.detail === v.detail && !v.error && !prevTask.error) {
      prevTask.count += 1;
      prevTask.durationMs += v.durationMs;
      foldWait = true;
      continue;
    }
    out.push({ ...v });
  }
  return out;
}

function isFailure(e: ExecutionHistoryEvent): boolean {
  return /Failed$|TimedOut$/.test(e.type) && !e.type.startsWith('Execution');
}

function oneLine(s: string): string {
  let text = s;
  try {
    const j = JSON.parse(s);
    if (j && typeof j === 'object' && 'errorMessage' in j) text = String(j.errorMessage);
  } catch {
    // not JSON: keep as is
  }
  return text.replace(/\s+/g, ' ').slice(0, 160);
}

/** A one-line summary of a termination state's result (the state machine's own result paths). */
export function summarize(state: string, output: string | undefined): string {
  if (!output) return '';
  let o: any;
  try {
    o = JSON.parse(output);
  } catch {
    return '';
  }
  const names = (xs: string[] | undefined) => (xs && xs.length ? ` (${xs.join(', ')})` : '');
  switch (state) {
    case 'Cordon':
      return o.target ? (o.target.nodeFound ? `tainted + cordoned ${o.target.nodeName}` : `node ${o.target.nodeName ?? '-'} not found`) : '';
    case 'Drain': {
      const d = o.drain;
      if (!d) return '';
      const parts = [] as string[];
      if (d.evicted?.length) parts.push(`evicted ${d.evicted.length}${names(d.evicted)}`);
      if (d.blocked?.length) parts.push(`blocked by PDB ${d.blocked.length}${names(d.blocked)}`);
      if (d.deletedEarly?.length) parts.push(`deleted early ${d.deletedEarly.length}${names(d.deletedEarly)}`);
      parts.push(d.done ? 'drained' : `${d.remainingCount} pod(s) left${names(d.remaining)}`);
      if (d.deadlineReached) parts.push('deadline reached');
      return parts.join(', ');
    }
    case 'Cutoff':
      return o.cutoff ? `force-deleted ${o.cutoff.deletedCount} pod(s)${names(o.cutoff.deleted)}` : '';
    case 'TerminateInstance':
      return o.instance ? `instance ${o.instance.state}` : '';
    case 'DeleteNode':
      return o.nodeDeletion?.nodeName ? `deleted node ${o.nodeDeletion.nodeName}` : 'no node';
    case 'Finalize':
      return o.finalize ? `NodeClaim Terminated${o.finalize.releasedBudgetOf ? `, budget slot of ${o.finalize.releasedBudgetOf} released` : ''}` : '';
    case 'RecordDrainFailure':
    case 'RecordTerminationFailure':
      return o.failure ? `lastError: ${oneLine(o.failure.lastError)}` : '';
    default:
      return '';
  }
}

/** The timeline as text: a header line, then TIME, +OFFSET, STATE, DURATION, RESULT / ERROR. */
export function formatTimeline(rec: ExecutionRecord, opts: { verbose?: boolean } = {}): string {
  const stop = rec.stopDate ? Date.parse(rec.stopDate) : undefined;
  const head =
    `execution ${rec.name}  ${rec.status}  started ${rec.startDate}` +
    (stop !== undefined ? `  took ${shortDuration(stop - Date.parse(rec.startDate))}` : '') +
    (rec.error ? `  error ${rec.error}${rec.cause ? `: ${oneLine(rec.cause)}` : ''}` : '') +
    '\n';
  const rows = buildTimeline(rec, opts).map((r) => [
    r.time,
    `+${shortDuration(r.offsetMs)}`,
    r.count > 1 ? `${r.state} ×${r.count}` : r.state,
    shortDuration(r.durationMs),
    [r.detail, r.error ? `ERROR ${r.error}` : ''].filter(Boolean).join('  '),
  ]);
  return head + table(['TIME', 'OFFSET', 'STATE', 'DURATION', 'RESULT / ERROR'], rows);
}

// ---------------------------------------------------------------- sources

/** Converts DynamoDB JSON (AttributeValue) to plain JSON. */
export function unmarshal(av: any): any {
  if (av === null || typeof av !== 'object') return av;
  if ('S' in av) return av.S;
  if ('N' in av) return Number(av.N);
  if ('BOOL' in av) return av.BOOL;
  if ('NULL' in av) return null;
  if ('M' in av) return Object.fromEntries(Object.entries(av.M).map(([k, v]) => [k, unmarshal(v)]));
  if ('L' in av) return av.L.map(unmarshal);
  if ('SS' in av) return [...av.SS];
  if ('NS' in av) return av.NS.map(Number);
  return undefined;
}

/** Which source the commands read. */
export type Source = { kind: 'local'; dir: string } | { kind: 'aws' };

/** `--local [DIR]` wins; then AWS when NODEFLEET_TABLE_NAME is set; then `./.nodefleet` if present. */
export function chooseSource(local: string | boolean | undefined, env: Record<string, string | undefined>, cwd: string): Source | undefined {
  if (local) {
    const root = resolve(cwd, typeof local === 'string' ? local : '.');
    const dir = resolve(root, StateDir);
    if (!existsSync(dir)) {
      throw new CliError(
        `--local ${typeof local === 'string' ? local : '.'}: ${existsSync(root) ? `no ${StateDir}/ in ${root}` : 'no such folder'} (run \`nodefleet demo\` there first)`,
      );
    }
    return { kind: 'local', dir };
  }
  if (env.NODEFLEET_TABLE_NAME) return { kind: 'aws' };
  const dir = resolve(cwd, StateDir);
  return existsSync(dir) ? { kind: 'local', dir } : undefined;
}

/**
 * Reads the NodeClaims the embedded environment left in `<dir>/dynamodb` (dynalite must not be running on it).
 * @throws CliError `<dir>/dynamodb: cannot open …` when the folder is in use or damaged: dynalite
 * reports a LevelDB it cannot open by throwing from a callback, caught here for the read's duration.
 */
async function localClaims(dir: string): Promise<NodeClaim[]> {
  const data = join(dir, 'dynamodb');
  if (!existsSync(data)) return [];
  let onCrash: (err: Error) => void = () => undefined;
  const crashed = new Promise<never>((_, reject) => {
    onCrash = (err) => reject(new CliError(`${data}: cannot open (damaged; delete ${dir} and run \`nodefleet demo\` again): ${err.message}`));
  });
  process.on('uncaughtException', onCrash);
  try {
    return await Promise.race([scanLocalClaims(data), crashed]);
  } finally {
    process.off('uncaughtException', onCrash);
  }
}

async function scanLocalClaims(data: string): Promise<NodeClaim[]> {
  const { startLocalDynamo } = await import('../../../infra/local/dynamo.ts');
  let db;
  try {
    db = await startLocalDynamo({ path: data });
  } catch (err) {
    throw new CliError(`${data}: cannot open (is \`nodefleet demo\` still running?): ${(err as Error).message}`);
  }
  try {
    const claims: NodeClaim[] = [];
    let ExclusiveStartKey: unknown;
    do {
      const page = await db.call('Scan', { TableName: db.tableName, ...(ExclusiveStartKey ? { ExclusiveStartKey } : {}) });
      for (const item of page.Items ?? []) {
        if (!String(item.sk?.S ?? '').startsWith('NODECLAIM#') || !item.claim) continue;
        const c = NodeClaimSchema.safeParse(unmarshal(item.claim));
        if (c.success) claims.push({ ...c.data, version: Number(unmarshal(item.version) ?? c.data.version) });
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return claims;
  } finally {
    await db.stop();
  }
}

/**
 * One execution record file the embedded environment wrote (JSON with `name` and `events`).
 * @throws CliError `FILE: cannot read: <reason>` or `FILE: not an execution record: <reason>` (a file edited or cut short).
 */
function readExecutionRecord(file: string): ExecutionRecord {
  let record: unknown;
  try {
    record = JSON.parse(readText(file).text);
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError(`${file}: not an execution record: ${(e as Error).message}`);
  }
  const r = record as Partial<ExecutionRecord> | null;
  if (typeof r !== 'object' || r === null || typeof r.name !== 'string' || !Array.isArray(r.events)) {
    throw new CliError(`${file}: not an execution record: expected a JSON object with name and events`);
  }
  return record as ExecutionRecord;
}

/** The execution records in `<dir>/executions`. */
function localExecutions(dir: string): ExecutionRecord[] {
  const d = join(dir, 'executions');
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .filter((f) => f.endsWith('.json'))
    .map((f) => readExecutionRecord(join(d, f)));
}

/** The termination execution of `nodeClaim` in `<dir>/executions`, if any. */
export function localExecution(dir: string, nodeClaim: string): ExecutionRecord | undefined {
  const f = join(dir, 'executions', `${terminationExecutionName(nodeClaim)}.json`);
  return existsSync(f) ? readExecutionRecord(f) : undefined;
}

/** Every attempt of `nodeClaim`'s termination in `<dir>/executions` (`<claim>.json`, `<claim>_2.json`, …), oldest first. */
export function localTerminationAttempts(dir: string, nodeClaim: string): ExecutionRecord[] {
  const d = join(dir, 'executions');
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .filter((name) => name === terminationExecutionName(nodeClaim, terminationAttemptOf(name)))
    .sort((a, b) => terminationAttemptOf(a) - terminationAttemptOf(b))
    .map((name) => readExecutionRecord(join(d, `${name}.json`)));
}

/** The attempts' timelines one after the other, each headed by its attempt number when there are several. */
export function formatAttempts(recs: readonly ExecutionRecord[], opts: { verbose?: boolean } = {}): string {
  if (recs.length === 1) return formatTimeline(recs[0], opts);
  return recs.map((r, i) => `attempt ${terminationAttemptOf(r.name)} (${i + 1} of ${recs.length})\n${formatTimeline(r, opts)}`).join('\n');
}

/** The last moment the local environment recorded (its virtual clock has stopped): AGE is relative to it. */
function localNowMs(claims: NodeClaim[], executions: ExecutionRecord[]): number {
  const times = [
    ...claims.flatMap((c) => [c.createdAt, ...c.conditions.map((x) => x.lastTransitionTime)]),
    ...executions.flatMap((e) => [e.startDate, e.stopDate ?? '', ...e.events.slice(-1).map((x) => x.timestamp)]),
  ]
    .map((t) => Date.parse(t))
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : Date.now();
}

async function awsDeps() {
  const [{ parseRuntimeEnv }, { buildDeps }] = await Promise.all([import('../../../shared/runtime/env.ts'), import('../../../shared/runtime/deps.ts')]);
  return buildDeps(parseRuntimeEnv(process.env));
}

/** Ends the command with `nodefleet <command>: <message>` and the exit code (program.ts prints it; no process.exit, so runCli returns). */
function fail(message: string, code = 1): never {
  throw new CliError(message, code);
}

function noSource(): never {
  return fail(
    `no source: run \`nodefleet demo\` first (creates ${StateDir}/), pass --local DIR, or set NODEFLEET_CLUSTER_NAME, NODEFLEET_TABLE_NAME and AWS_REGION`,
  );
}

// ---------------------------------------------------------------- commands

export function register(program: Command): void {
  program
    .command('status')
    .description('list NodeClaims like `kubectl get nodeclaims` (NAME, TYPE, CAPACITY, ZONE, NODE, READY, AGE)')
    .option('--local [dir]', `read the embedded environment's ${StateDir}/ in DIR (default: current directory)`)
    .option('--all', 'include terminated NodeClaims (adds a PHASE column)')
    .option('-o, --output <format>', 'json|yaml (a List of karpenter.sh/v1 NodeClaims), wide, or a table by default', 'table')
    .action(async (opts: { local?: string | boolean; all?: boolean; output: string }) => {
      const format = outputFormat(opts.output, ['table', 'wide', 'json', 'yaml']);
      const source = chooseSource(opts.local, process.env, process.cwd()) ?? noSource();
      let claims: NodeClaim[];
      let nowMs = Date.now();
      try {
        if (source.kind === 'local') {
          claims = await localClaims(source.dir);
          nowMs = localNowMs(claims, localExecutions(source.dir));
        } else {
          claims = await (await awsDeps()).store.list();
        }
      } catch (err) {
        return fail((err as Error).message);
      }
      const terminated = claims.filter((c) => c.phase === 'Terminated').length;
      if (!opts.all) claims = claims.filter((c) => c.phase !== 'Terminated');
      if (format === 'json' || format === 'yaml') {
        const sorted = [...claims].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name));
        process.stdout.write(encode(kubeList(sorted.map((c) => toKubeNodeClaim(c))), format));
      } else if (claims.length === 0)
        process.stdout.write(
          `No NodeClaims found.${terminated ? ` (${terminated} terminated: status --all lists them, history NODECLAIM shows how each ended)` : ''}\n`,
        );
      else process.stdout.write(formatStatus(claims, nowMs, { phase: opts.all, wide: format === 'wide' }));
    });

  program
    .command('history')
    .description("print every attempt of a NodeClaim's termination (one execution each: <claim>, <claim>_2, …) as timelines (state, time, duration, error)")
    .argument('<nodeclaim>', 'NodeClaim name')
    .option('--local [dir]', `read the embedded environment's ${StateDir}/ in DIR (default: current directory)`)
    .option('-v, --verbose', 'every state visit (Choice states, each drain round)')
    .option('-o, --output <format>', 'json|yaml (the execution records, one per attempt), or timelines by default')
    .action(async (nodeClaim: string, opts: { local?: string | boolean; verbose?: boolean; output?: string }) => {
      const format = outputFormat(opts.output ?? 'table', ['table', 'json', 'yaml'], 'timelines');
      const source = chooseSource(opts.local, process.env, process.cwd()) ?? noSource();
      let recs: ExecutionRecord[] = [];
      try {
        if (source.kind === 'local') {
          recs = localTerminationAttempts(source.dir, nodeClaim);
        } else {
          const deps = await awsDeps();
          const arn = deps.env.stateMachineArn ?? fail('NODEFLEET_TERMINATION_STATE_MACHINE_ARN is not set');
          const { readTerminationAttempts } = await import('../../../shared/aws/sfn-history.ts');
          const claim = await deps.store.get(nodeClaim).catch(() => undefined);
          recs = await readTerminationAttempts(deps.clients!.sfn, arn, nodeClaim, claim?.termination?.attempt);
        }
      } catch (err) {
        return fail((err as Error).message);
      }
      if (!recs.length) return fail(`no termination execution for NodeClaim ${nodeClaim}`);
      process.stdout.write(format === 'json' || format === 'yaml' ? encode(recs, format) : formatAttempts(recs, { verbose: opts.verbose }));
    });
}
