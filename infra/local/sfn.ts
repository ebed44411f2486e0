/**
 * Local Step Functions: runs statemachines/*.asl.json with aws-local-stepfunctions (v3), binding
 * each Task state to a local function by its `${Substitution}` Resource, and keeping every
 * execution's history (GetExecutionHistory-like events) in memory and, optionally, as
 * `<historyDir>/<execution name>.json` (the embedded environment uses `.nodefleet/executions`;
 * `nodefleet history` reads it).
 *
 * Time: Wait states are run by this module (each is swapped for a local Task that computes the
 * same duration from Seconds / SecondsPath / Timestamp / TimestampPath) so they can be compressed:
 * `speed` divides real waiting time, or `wait` replaces it entirely (a FixedClock advanced in
 * tests, the embedded environment's VirtualClock). History timestamps come from `clock`.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { Clock, TerminationInput, TerminationStarter } from '../../shared/api/ports.ts';
import { terminationExecutionName, type ExecutionHistoryEvent, type ExecutionRecord } from '../../shared/api/termination.ts';
import { terminationTasks, type TaskFunction } from '../../functions/termination/tasks.ts';
import type { TerminationDeps } from '../../functions/termination/schemas.ts';

/** Name the termination state machine is registered under (and its definition file's stem). */
export const TerminationStateMachineName = 'termination';
/** Where the embedded environment keeps execution records, relative to its working directory. */
export const DefaultHistoryDir = '.nodefleet/executions';

/** A real Task's local timeout when its state sets none (Step Functions' Lambda default is 60 s too). */
const WaitTaskTimeoutSeconds = 2_000_000; // a replaced Wait must never hit the library's 60 s task timeout

export interface LocalStepFunctionsOptions {
  /** Source of history timestamps (default: wall clock). */
  clock?: Clock;
  /** Virtual seconds per real second for Wait states and Retry pauses (default 1). Ignored for Waits when `wait` is given. */
  speed?: number;
  /** Lets `seconds` of workflow time pass (replaces real sleeping). */
  wait?: (seconds: number, stateName: string) => Promise<void> | void;
  /** Real ms of every Retry pause (default: the retrier's IntervalSeconds / speed, or 0 when `wait` is given). */
  retryPauseMs?: number;
  /** Directory for `<execution>.json` records (created on demand); none = memory only. */
  historyDir?: string;
  region?: string;
  accountId?: string;
  /** Runs one Task invocation (fault injection and the stepped clock's work tracking wrap it here). Default: call it. */
  task?: (machine: string, state: string, call: () => Promise<unknown>) => Promise<unknown>;
}

/** Definitions (as registered, JSON text) this process has validated. */
const validatedDefinitions = new Set<string>();

interface Registered {
  name: string;
  arn: string;
  definition: StateMachineDefinition;
  tasks: Record<string, TaskFunction>;
  /** State name → original Wait definition (replaced by local Tasks). */
  waits: Map<string, WaitDefinition>;
  /** State name → original type, for history event names. */
  types: Map<string, string>;
}

interface WaitDefinition {
  Seconds?: number;
  SecondsPath?: string;
  Timestamp?: string;
  TimestampPath?: string;
  InputPath?: string | null;
}

interface Running {
  record: ExecutionRecord;
  done: Promise<ExecutionRecord>;
  abort: () => void;
}

/**
 * An in-process Step Functions: register state machines, start executions (idempotent on the
 * name), read their history, await them.
 */
export class LocalStepFunctions {
  private readonly machines = new Map<string, Registered>();
  private readonly executions = new Map<string, Running>();
  private readonly clock: Clock;
  private readonly speed: number;

  constructor(private readonly opts: LocalStepFunctionsOptions = {}) {
    this.clock = opts.clock ?? { now: () => new Date() };
    this.speed = opts.speed ?? 1;
    if (!(this.speed > 0)) throw new RangeError(`speed must be > 0, got ${this.speed}`);
  }

  /**
   * Registers a definition. `tasks` binds Task states by the substitution variable in their
   * Resource (`${CordonFunctionArn}` → tasks.CordonFunctionArn).
   * @throws Error naming the Task states whose substitution has no function, or when the definition is invalid.
   * @returns the state machine ARN.
   */
  register(name: string, definition: StateMachineDefinition | object | string, tasks: Record<string, TaskFunction>): string {
    const parsed: StateMachineDefinition = typeof definition === 'string' ? JSON.parse(definition) : (structuredClone(definition) as StateMachineDefinition);
    const arn = `arn:aws:states:${this.region}:${this.account}:stateMachine:${name}`;
    const waits = new Map<string, WaitDefinition>();
    const types = new Map<string, string>();
    const boundTasks: Record<string, TaskFunction> = {};
    const unbound: string[] = [];
    for (const [stateName, state] of Object.entries(parsed.States) as [string, any][]) {
      types.set(stateName, state.Type);
      if (state.Type === 'Task') {
        const m = /^\$\{(\w+)\}$/.exec(String(state.Resource));
        const fn = m ? tasks[m[1]] : undefined;
        if (!m || !fn) {
          unbound.push(`${stateName} (${state.Resource})`);
          continue;
        }
        boundTasks[stateName] = fn;
        state.Resource = `arn:aws:lambda:${this.region}:${this.account}:function:nodefleet-${m[1].replace(/FunctionArn$/, '')}`;
      } else if (state.Type === 'Wait') {
        waits.set(stateName, {
          Seconds: state.Seconds,
          SecondsPath: state.SecondsPath,
          Timestamp: state.Timestamp,
          TimestampPath: state.TimestampPath,
          InputPath: state.InputPath,
        });
        const replacement: Record<string, unknown> = {
          Type: 'Task',
          Comment: state.Comment,
          Resource: `arn:aws:lambda:${this.region}:${this.account}:function:nodefleet-local-wait`,
          TimeoutSeconds: WaitTaskTimeoutSeconds,
          OutputPath: state.OutputPath,
          ...(state.End ? { End: true } : { Next: state.Next }),
        };
        for (const k of Object.keys(replacement)) if (replacement[k] === undefined) delete replacement[k];
        parsed.States[stateName] = replacement as any;
      }
    }
    if (unbound.length) throw new Error(`state machine ${name}: no local function for Task state(s) ${unbound.join(', ')}`);
    // Constructing validates the definition (throws on an invalid one); about 0.5 s, so a
    // definition already validated in this process (the same text) is not validated again.
    const text = JSON.stringify(parsed);
    if (!validatedDefinitions.has(text)) {
      new StateMachine(parsed, { validationOptions: { checkPaths: true, checkArn: true } });
      validatedDefinitions.add(text);
    }
    this.machines.set(name, { name, arn, definition: parsed, tasks: boundTasks, waits, types });
    return arn;
  }

  /**
   * Starts an execution. Idempotent on `executionName`: if one with that name exists (running or
   * finished) its ARN is returned and nothing new starts (`alreadyExists: true`).
   * @throws Error when the state machine is not registered.
   */
  startExecution(stateMachine: string, input: unknown, executionName: string): { executionArn: string; alreadyExists: boolean } {
    const m = this.machines.get(stateMachine);
    if (!m) throw new Error(`state machine ${stateMachine} is not registered`);
    const executionArn = `arn:aws:states:${this.region}:${this.account}:execution:${stateMachine}:${executionName}`;
    if (this.executions.has(executionName)) return { executionArn, alreadyExists: true };

    const record: ExecutionRecord = {
      name: executionName,
      executionArn,
      status: 'RUNNING',
      startDate: this.clock.now().toISOString(),
      input: JSON.stringify(input),
      events: [],
    };
    const handlers: Record<string, (input: any) => Promise<any>> = {};
    for (const [stateName, fn] of Object.entries(m.tasks)) {
      handlers[stateName] = async (stateInput) => {
        await yieldToHistory();
        const call = async () => fn(stateInput);
        return (await (this.opts.task ? this.opts.task(stateMachine, stateName, call) : call())) ?? {};
      };
    }
    // Aborting must also end a Wait in progress: the library keeps its task timer until the
    // handler settles, which would hold the process open.
    const aborted = new AbortController();
    const abortable = <T>(p: Promise<T>): Promise<T | undefined> =>
      Promise.race([p, new Promise<undefined>((r) => aborted.signal.addEventListener('abort', () => r(undefined), { once: true }))]);
    for (const [stateName, w] of m.waits) {
      handlers[stateName] = async (stateInput) => {
        await yieldToHistory();
        await abortable(this.pass(waitSeconds(w, stateInput, this.clock), stateName, aborted.signal));
        return stateInput;
      };
    }
    const execution = new StateMachine(m.definition, { validationOptions: { noValidate: true } }).run(input as any, {
      overrides: { taskResourceLocalHandlers: handlers, retryIntervalOverrides: this.retryOverrides(m) },
    });
    const consume = (async () => {
      for await (const ev of execution.eventLogs) this.append(record, m, ev as any);
    })();
    const done = (async () => {
      try {
        const output = await execution.result;
        await consume;
        record.status = 'SUCCEEDED';
        record.output = JSON.stringify(output);
      } catch (err: any) {
        await consume.catch(() => undefined);
        record.status = err?.name === 'ExecutionAbortedError' ? 'ABORTED' : 'FAILED';
        const failed = [...record.events].reverse().find((e) => e.type === 'ExecutionFailed');
        record.error = failed?.error ?? err?.name;
        record.cause = failed?.cause ?? err?.message;
      }
      record.stopDate = this.clock.now().toISOString();
      this.persist(record);
      return record;
    })();
    this.executions.set(executionName, {
      record,
      done,
      abort: () => {
        execution.abort();
        aborted.abort();
      },
    });
    this.persist(record);
    return { executionArn, alreadyExists: false };
  }

  /** The execution's record (live: events keep arriving while it runs). */
  describeExecution(executionName: string): ExecutionRecord | undefined {
    return this.executions.get(executionName)?.record;
  }

  /** Resolves with the record once the execution has finished. @throws Error if unknown. */
  async waitForExecution(executionName: string): Promise<ExecutionRecord> {
    const e = this.executions.get(executionName);
    if (!e) throw new Error(`execution ${executionName} not found`);
    return e.done;
  }

  listExecutions(): ExecutionRecord[] {
    return [...this.executions.values()].map((e) => e.record);
  }

  /** Aborts every running execution (history status ABORTED). */
  async stop(): Promise<void> {
    const running = [...this.executions.values()].filter((e) => e.record.status === 'RUNNING');
    for (const e of running) e.abort();
    await Promise.allSettled(running.map((e) => e.done));
  }

  private get region(): string {
    return this.opts.region ?? 'us-east-1';
  }

  private get account(): string {
    return this.opts.accountId ?? '123456789012';
  }

  private async pass(seconds: number, stateName: string, signal: AbortSignal): Promise<void> {
    if (this.opts.wait) return void (await this.opts.wait(seconds, stateName));
    if (seconds <= 0 || signal.aborted) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, (seconds * 1000) / this.speed);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }

  private retryOverrides(m: Registered): Record<string, number[]> {
    const out: Record<string, number[]> = {};
    for (const [stateName, state] of Object.entries(m.definition.States) as [string, any][]) {
      if (!Array.isArray(state.Retry)) continue;
      out[stateName] = state.Retry.map(
        (r: { IntervalSeconds?: number }) => this.opts.retryPauseMs ?? (this.opts.wait ? 0 : ((r.IntervalSeconds ?? 1) * 1000) / this.speed),
      );
    }
    return out;
  }

  private append(record: ExecutionRecord, m: Registered, ev: LibraryEvent): void {
    const base = { id: record.events.length + 1, timestamp: this.clock.now().toISOString() };
    const type = ev.state ? (m.types.get(ev.state.name) ?? ev.state.type) : undefined;
    const json = (v: unknown) => (v === undefined ? undefined : JSON.stringify(v));
    let e: ExecutionHistoryEvent | undefined;
    switch (ev.type) {
      case 'ExecutionStarted':
        e = { ...base, type: 'ExecutionStarted', input: json(ev.input) };
        break;
      case 'ExecutionSucceeded':
        e = { ...base, type: 'ExecutionSucceeded', output: json(ev.output) };
        break;
      case 'ExecutionFailed':
        e = { ...base, type: 'ExecutionFailed', error: ev.Error, cause: causeText(ev.Cause) };
        break;
      case 'ExecutionAborted':
      case 'ExecutionTimeout':
        e = { ...base, type: ev.type === 'ExecutionAborted' ? 'ExecutionAborted' : 'ExecutionTimedOut' };
        break;
      case 'StateEntered':
        e = { ...base, type: `${type}StateEntered`, stateName: ev.state!.name, input: json(ev.state!.input) };
        break;
      case 'StateExited':
        e = { ...base, type: `${type}StateExited`, stateName: ev.state!.name, output: json(ev.state!.output) };
        break;
      case 'StateFailed':
        e = {
          ...base,
          type: type === 'Task' ? 'LambdaFunctionFailed' : `${type}StateFailed`,
          stateName: ev.state!.name,
          error: ev.Error,
          cause: causeText(ev.Cause),
        };
        break;
      case 'StateRetried':
        e = { ...base, type: 'TaskStateRetried', stateName: ev.state!.name, cause: `attempt ${ev.retry?.attempt}` };
        break;
      case 'StateCaught':
        e = { ...base, type: 'TaskStateCaught', stateName: ev.state!.name, cause: `-> ${ev.catch?.catcher.Next}` };
        break;
      default:
        return;
    }
    record.events.push(e);
    if (ev.type.startsWith('Execution') || ev.type === 'StateExited') this.persist(record);
  }

  private persist(record: ExecutionRecord): void {
    const dir = this.opts.historyDir;
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${record.name}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2));
    renameSync(`${file}.tmp`, file);
  }
}

interface LibraryEvent {
  type: string;
  input?: unknown;
  output?: unknown;
  Error?: string;
  Cause?: unknown;
  state?: { name: string; type: string; input: unknown; output?: unknown };
  retry?: { attempt: number };
  catch?: { catcher: { Next: string } };
}

function causeText(c: unknown): string | undefined {
  if (c === undefined || c === null) return undefined;
  return typeof c === 'string' ? c : c instanceof Error ? c.message : JSON.stringify(c);
}

/** Lets the history consumer stamp the state's entry before the state does anything. */
function yieldToHistory(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** Seconds a Wait state lasts for `input` (after its InputPath), as Step Functions computes them. */
export function waitSeconds(w: WaitDefinition, rawInput: unknown, clock: Clock): number {
  const input = w.InputPath === null ? {} : w.InputPath ? readPath(rawInput, w.InputPath) : rawInput;
  if (w.Seconds !== undefined) return w.Seconds;
  if (w.SecondsPath) {
    const v = readPath(input, w.SecondsPath);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
      throw new StatesRuntimeError(`SecondsPath ${w.SecondsPath} is not a non-negative integer: ${JSON.stringify(v)}`);
    return v;
  }
  const ts = w.Timestamp ?? (w.TimestampPath ? readPath(input, w.TimestampPath) : undefined);
  const at = typeof ts === 'string' ? Date.parse(ts) : NaN;
  if (Number.isNaN(at)) throw new StatesRuntimeError(`Wait timestamp is not RFC 3339: ${JSON.stringify(ts)}`);
  return Math.max(0, (at - clock.now().getTime()) / 1000);
}

/** Step Functions' name for a path that cannot be resolved at run time. */
class StatesRuntimeError extends Error {
  override name = 'States.Runtime';
}

/** Resolves a simple JSONPath (`$`, `$.a.b`, `$.a[0]`). @throws StatesRuntimeError when absent. */
function readPath(obj: unknown, path: string): unknown {
  if (path === '$') return obj;
  if (!path.startsWith('$')) throw new StatesRuntimeError(`unsupported path ${path}`);
  let cur: any = obj;
  for (const part of path.slice(1).match(/\.[^.[\]]+|\[\d+\]/g) ?? []) {
    const k = part.startsWith('[') ? Number(part.slice(1, -1)) : part.slice(1);
    if (cur === null || typeof cur !== 'object' || !(k in cur)) throw new StatesRuntimeError(`path ${path} not found in input`);
    cur = cur[k];
  }
  return cur;
}

/** Reads statemachines/<name>.asl.json relative to `root` (default: the working directory). */
export function loadDefinition(name: string, root = process.cwd()): StateMachineDefinition {
  return JSON.parse(readFileSync(join(root, 'statemachines', `${name}.asl.json`), 'utf8'));
}

/**
 * TerminationStarter against a LocalStepFunctions: the execution name is derived from the claim
 * and attempt (terminationExecutionName), so starting twice is harmless.
 */
export class LocalTerminationStarter implements TerminationStarter {
  constructor(
    private readonly sfn: LocalStepFunctions,
    private readonly stateMachine = TerminationStateMachineName,
  ) {}

  async start(input: TerminationInput): Promise<string> {
    return this.sfn.startExecution(this.stateMachine, input, terminationExecutionName(input.nodeClaim, input.attempt ?? 1)).executionArn;
  }
}

/**
 * Registers statemachines/termination.asl.json with its Tasks bound to the real task functions
 * (functions/termination/*) over `deps`, and returns the runner and a starter for it.
 */
export function createLocalTermination(
  deps: TerminationDeps,
  opts: LocalStepFunctionsOptions & {
    sfn?: LocalStepFunctions;
    definition?: StateMachineDefinition | object;
    root?: string;
    overrides?: Partial<Record<string, TaskFunction>>;
  } = {},
): { sfn: LocalStepFunctions; starter: LocalTerminationStarter; stateMachineArn: string } {
  const sfn = opts.sfn ?? new LocalStepFunctions({ clock: deps.clock, ...opts });
  const tasks = { ...terminationTasks(deps), ...opts.overrides } as Record<string, TaskFunction>;
  const stateMachineArn = sfn.register(TerminationStateMachineName, opts.definition ?? loadDefinition(TerminationStateMachineName, opts.root), tasks);
  return { sfn, starter: new LocalTerminationStarter(sfn), stateMachineArn };
}
