/**
 * Fault hooks of the embedded environment: the places where the stand-ins ask "should this go
 * wrong?" (all off unless a {@link FaultHooks} is given to LocalEnvironment; the chaos harness in
 * test/chaos decides the answers from its seeded schedule).
 *
 * | hook | stand-in | what it can do |
 * | --- | --- | --- |
 * | `ec2(action)` | ec2/server.ts | throw an Ec2ApiError (RequestLimitExceeded, InternalError, UnauthorizedOperation, …) |
 * | `dynamo(op, body)` | the DynamoDB proxy below | answer ProvisionedThroughputExceeded / ThrottlingException / ConditionalCheckFailed |
 * | `kube(method, path)` | kube API server | answer 429 / 500 / 410 Gone |
 * | `bus(rule, event)` | bus.ts | drop, duplicate or delay one delivery (delays reorder) |
 * | `task(machine, state)` | sfn.ts | fail one Task with an error |
 * | `invocation(name)` | {@link InvocationCrashes} | crash a Lambda / Task invocation before or after its n-th effect |
 * | `kubelet(instanceId)` | environment.ts | a launched instance whose node never registers, or never turns Ready |
 *
 * A crash is modelled as AWS has it: the invocation stops at that point (no later request of it
 * reaches a service: the outbound HTTP request is refused client-side), and it ends in an error,
 * whatever the handler would have returned. Effects are outbound HTTP requests (AWS SDK over
 * node:http, the Kubernetes client over undici) and the in-process ports (event publisher,
 * termination starter), counted per invocation with AsyncLocalStorage.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the bus does with one delivery of one event to one rule. */
export type BusAction = { kind: 'drop' } | { kind: 'duplicate' } | { kind: 'delay'; ms: number };

/** An error response a stand-in answers instead of serving the request. */
export interface FaultResponse {
  status: number;
  /** DynamoDB `__type` / Kubernetes `reason`. */
  code: string;
  message: string;
}

/** Where a crash lands in one invocation: before or after its n-th effect (1-based). */
export interface CrashPlan {
  effect: number;
  when: 'before' | 'after';
}

/** The hooks; every one is optional and consulted on every call. */
export interface FaultHooks {
  ec2?(action: string): void;
  dynamo?(op: string, body: string): FaultResponse | undefined;
  kube?(method: string, path: string): FaultResponse | undefined;
  bus?(rule: string, event: { id: string; 'detail-type': string; detail: unknown }): BusAction | undefined;
  task?(machine: string, state: string): void;
  invocation?(name: string): CrashPlan | undefined;
  kubelet?(instanceId: string): 'never-register' | 'never-ready' | undefined;
}

/** The error an injected crash ends an invocation with (Lambda's Runtime.ExitError). */
export class InjectedCrash extends Error {
  override name = 'Runtime.ExitError';
}

interface InvocationState {
  name: string;
  effects: number;
  plan?: CrashPlan;
  crashed: boolean;
}

/**
 * Per-invocation effect counting and crashes. `run(name, fn)` runs `fn` as one invocation;
 * outbound HTTP requests made inside it are counted through diagnostics channels.
 */
export class InvocationCrashes {
  private readonly als = new AsyncLocalStorage<InvocationState>();
  private readonly byRequest = new WeakMap<object, InvocationState>();
  /** Crashes that happened (for the harness's fault count). */
  readonly crashes: { name: string; effect: number; when: 'before' | 'after'; atMs: number }[] = [];

  private readonly subscriptions: [string, (m: unknown) => void][] = [
    ['http.client.request.start', (m) => this.onStart((m as { request: { destroy(e: Error): void } }).request, (r, e) => r.destroy(e))],
    ['http.client.response.finish', (m) => this.onFinish((m as { request: object }).request)],
    ['undici:request:create', (m) => this.onStart((m as { request: { error?: Error } }).request, (r, e) => (r.error = e))],
    ['undici:request:headers', (m) => this.onFinish((m as { request: object }).request)],
  ];

  constructor(
    private readonly hooks: () => FaultHooks | undefined,
    /** Virtual epoch ms, for the crash records. */
    private readonly nowMs: () => number = Date.now,
  ) {
    for (const [name, fn] of this.subscriptions) subscribe(name, fn);
  }

  /** Stops watching outbound requests. */
  close(): void {
    for (const [name, fn] of this.subscriptions) unsubscribe(name, fn);
  }

  /** Runs `fn` as the invocation `name`; throws {@link InjectedCrash} when it crashed. */
  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const st: InvocationState = { name, effects: 0, plan: this.hooks()?.invocation?.(name), crashed: false };
    let out: T;
    try {
      out = await this.als.run(st, fn);
    } catch (err) {
      if (st.crashed) throw new InjectedCrash(`${name} crashed ${st.plan?.when} effect ${st.plan?.effect} (injected)`);
      throw err;
    }
    if (st.crashed) throw new InjectedCrash(`${name} crashed ${st.plan?.when} effect ${st.plan?.effect} (injected)`);
    return out;
  }

  /**
   * An in-process effect (publish, start an execution) of the current invocation.
   * @throws InjectedCrash when the invocation has crashed or crashes before this effect.
   */
  effect(): void {
    const st = this.als.getStore();
    if (!st) return;
    if (this.before(st)) throw new InjectedCrash(`${st.name} crashed (injected)`);
    this.after(st);
  }

  private onStart<R extends object>(req: R, refuse: (r: R, e: Error) => void): void {
    const st = this.als.getStore();
    if (!st) return;
    if (this.before(st)) {
      refuse(req, new InjectedCrash(`${st.name} crashed (injected)`));
      return;
    }
    this.byRequest.set(req, st);
  }

  private onFinish(req: object): void {
    const st = this.byRequest.get(req);
    if (st) this.after(st);
  }

  /** Counts an effect; true when it must not happen (crashed already, or crash planned before it). */
  private before(st: InvocationState): boolean {
    if (st.crashed) return true;
    st.effects += 1;
    if (st.plan?.when === 'before' && st.plan.effect === st.effects) {
      st.crashed = true;
      this.crashes.push({ name: st.name, effect: st.effects, when: 'before', atMs: this.nowMs() });
      return true;
    }
    return false;
  }

  private after(st: InvocationState): void {
    if (!st.crashed && st.plan?.when === 'after' && st.plan.effect === st.effects) {
      st.crashed = true;
      this.crashes.push({ name: st.name, effect: st.effects, when: 'after', atMs: this.nowMs() });
    }
  }
}

/**
 * A loopback proxy in front of dynalite that asks `hooks().dynamo` about every request and
 * answers the error it returns (DynamoDB JSON protocol, HTTP 400) instead of forwarding it.
 */
export class DynamoFaultProxy {
  private server?: Server;

  constructor(
    private readonly target: string,
    private readonly hooks: () => FaultHooks | undefined,
  ) {}

  /** Starts on 127.0.0.1 (any free port); returns the endpoint to give the SDK clients. */
  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => void this.handle(req, res, target));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections?.();
    await new Promise<void>((r) => s.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, target: URL): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const op =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    const fault = this.hooks()?.dynamo?.(op, body.toString('utf8'));
    if (fault) {
      res.writeHead(fault.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `fault-${Date.now()}` });
      res.end(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${fault.code}`, message: fault.message }));
      return;
    }
    const up = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (r) => {
        res.writeHead(r.statusCode ?? 500, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: err.message }));
    });
    up.end(body);
  }
}
