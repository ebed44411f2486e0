/**
 * A state machine as a graph the live view draws (the Step Functions console's "graph view"),
 * and where an execution is on it.
 *
 * - {@link stateGraph}: states and transitions of an Amazon States Language definition
 *   (`Next`, `Choices[].Next`, `Default`, `Catch[].Next`), laid out top to bottom: a state's
 *   layer is its longest distance from `StartAt` (loops' back edges left out); the path to the
 *   Succeed state the search reaches last is the main column; a state that loops back (a Wait before a retry) goes
 *   left of it, every other state right of it, in the next free column of its layer.
 * - {@link executionProgress}: from a GetExecutionHistory-like event list, the states entered
 *   (in order), the transitions taken (with counts) and the state the execution is in now.
 *
 * Only the top level is read (the termination machine has no Parallel / Map states).
 */
import type { ExecutionHistoryEvent } from '../../../shared/api/termination.ts';

export type EdgeKind = 'next' | 'choice' | 'default' | 'catch';

export interface GraphState {
  name: string;
  /** ASL type: Task, Choice, Wait, Succeed, Fail, Pass, … */
  type: string;
  /** Row in the drawing: 0 = StartAt. */
  layer: number;
  /** Column, 0 = leftmost: loop states, then {@link StateGraph.mainColumn}, then the others in discovery order. */
  column: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  kind: EdgeKind;
  /** Closes a loop (goes back to a state on the way to `from`). */
  back: boolean;
}

export interface StateGraph {
  startAt: string;
  states: GraphState[];
  edges: GraphEdge[];
  /** The column of the path to success. */
  mainColumn: number;
  /** Number of columns. */
  width: number;
  /** Number of layers. */
  height: number;
}

interface AslState {
  Type: string;
  Next?: string;
  Default?: string;
  Choices?: { Next?: string }[];
  Catch?: { Next?: string }[];
}

/**
 * The graph of an ASL definition. States no transition reaches are put in a last layer.
 * @throws Error when StartAt does not name a state, or a transition names a state that does not exist.
 */
export function stateGraph(definition: { StartAt?: string; States?: Record<string, AslState> }): StateGraph {
  const states = definition.States;
  const startAt = definition.StartAt;
  if (!states || !startAt || !states[startAt]) throw new Error('state machine definition: StartAt must name a state in States');
  const edges: GraphEdge[] = [];
  for (const [name, s] of Object.entries(states)) {
    const add = (to: string | undefined, kind: EdgeKind) => {
      if (to === undefined) return;
      if (!states[to]) throw new Error(`state machine definition: state ${name} goes to unknown state ${to}`);
      edges.push({ from: name, to, kind, back: false });
    };
    add(s.Next, 'next');
    for (const c of s.Choices ?? []) add(c.Next, 'choice');
    add(s.Default, 'default');
    for (const c of s.Catch ?? []) add(c.Next, 'catch');
  }
  const outOf = (name: string) => {
    const out = edges.filter((e) => e.from === name);
    return [...out.filter((e) => e.kind !== 'catch'), ...out.filter((e) => e.kind === 'catch')];
  };

  // Depth-first from StartAt: an edge to a state still on the stack closes a loop.
  const onStack = new Set<string>();
  const done = new Set<string>();
  const postOrder: string[] = [];
  const visit = (name: string) => {
    onStack.add(name);
    for (const e of outOf(name)) {
      if (onStack.has(e.to)) e.back = true;
      else if (!done.has(e.to)) visit(e.to);
    }
    onStack.delete(name);
    done.add(name);
    postOrder.push(name);
  };
  visit(startAt);

  // Longest path over the edges that are not back edges (reverse post-order is topological).
  const layer = new Map<string, number>([[startAt, 0]]);
  for (const name of [...postOrder].reverse()) {
    const l = layer.get(name) ?? 0;
    for (const e of outOf(name)) if (!e.back) layer.set(e.to, Math.max(layer.get(e.to) ?? 0, l + 1));
  }
  const unreachable = Object.keys(states).filter((n) => !done.has(n));
  const last = Math.max(...layer.values()) + 1;
  for (const n of unreachable) layer.set(n, last);

  // Column 0: the shortest path (no Catch, no back edges) to the Succeed state reached last by that
  // search — the machine's full success path, not an early exit (the termination machine's
  // Continued, a hand-over to the next execution, is nearer to the start than Terminated).
  const parent = new Map<string, string>();
  const bfs = [startAt];
  const seen = new Set([startAt]);
  let goal: string | undefined;
  for (let i = 0; i < bfs.length; i++) {
    for (const e of outOf(bfs[i])) {
      if (e.kind === 'catch' || e.back || seen.has(e.to)) continue;
      seen.add(e.to);
      parent.set(e.to, bfs[i]);
      bfs.push(e.to);
      if (states[e.to].Type === 'Succeed') goal = e.to;
    }
  }
  const primary = new Set<string>([startAt]);
  for (let n = goal; n !== undefined; n = parent.get(n)) primary.add(n);

  // Discovery order (normal transitions before Catch) places the other states left to right.
  const order: string[] = [startAt];
  const found = new Set(order);
  for (let i = 0; i < order.length; i++) {
    for (const e of outOf(order[i])) {
      if (found.has(e.to)) continue;
      found.add(e.to);
      order.push(e.to);
    }
  }
  order.push(...unreachable);
  const loops = new Set(edges.filter((e) => e.back).map((e) => e.from));
  const right = new Map<number, number>();
  const left = new Map<number, number>();
  const placed = order.map((name) => {
    const l = layer.get(name)!;
    let column = 0;
    if (primary.has(name)) column = 0;
    else if (loops.has(name)) {
      column = (left.get(l) ?? 0) - 1;
      left.set(l, column);
    } else {
      column = (right.get(l) ?? 0) + 1;
      right.set(l, column);
    }
    return { name, type: states[name].Type, layer: l, column };
  });
  const shift = -Math.min(0, ...placed.map((x) => x.column));
  const out: GraphState[] = placed.map((x) => ({ ...x, column: x.column + shift }));
  return {
    startAt,
    states: out,
    edges,
    mainColumn: shift,
    width: Math.max(...out.map((x) => x.column)) + 1,
    height: Math.max(...out.map((x) => x.layer)) + 1,
  };
}

export interface ExecutionProgress {
  /** States entered, in order (a loop repeats names). */
  entered: string[];
  /** `from→to` → times taken. */
  transitions: Record<string, number>;
  /** The state the execution is in (last entered, not yet exited), or the state it ended in. */
  current?: string;
  /** True once the execution has ended (Succeeded / Failed / Aborted / TimedOut event seen). */
  ended: boolean;
}

/** Where an execution is, from its history events (types as Step Functions names them: `TaskStateEntered`, …). */
export function executionProgress(events: Pick<ExecutionHistoryEvent, 'type' | 'stateName'>[]): ExecutionProgress {
  const entered: string[] = [];
  const transitions: Record<string, number> = {};
  let current: string | undefined;
  let ended = false;
  for (const e of events) {
    if (e.type.endsWith('StateEntered') && e.stateName) {
      const prev = entered[entered.length - 1];
      if (prev !== undefined) transitions[`${prev}→${e.stateName}`] = (transitions[`${prev}→${e.stateName}`] ?? 0) + 1;
      entered.push(e.stateName);
      current = e.stateName;
    } else if (/^Execution(Succeeded|Failed|Aborted|TimedOut)$/.test(e.type)) {
      ended = true;
    }
  }
  return { entered, transitions, current, ended };
}
