/**
 * Binds nodefleet's functions into the embedded environment: each Lambda's `run(input, deps)`
 * (functions/<name>/handler.ts) with deps from shared/runtime `buildDeps` pointed at the local
 * endpoints, and the in-cluster agent (functions/agent) against the local API server.
 *
 * Modules are imported at run time so a function that has not landed yet (or does not load)
 * is reported by name — `missing` — instead of being faked: a scenario that needs it fails and
 * says what is missing.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { existsSync } from 'node:fs';

/** Repository root (infra/local/ → ../..). */
export const RepoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A function that could not be bound, and why. */
export interface MissingPart {
  name: string;
  file: string;
  reason: string;
}

/** Imports `relPath` (from the repository root) or reports why it cannot. */
export async function importPart(name: string, relPath: string, missing: MissingPart[]): Promise<any | undefined> {
  const file = join(RepoRoot, relPath);
  if (!existsSync(file)) {
    missing.push({ name, file: relPath, reason: 'file not found' });
    return undefined;
  }
  try {
    return await import(pathToFileURL(file).href);
  } catch (err) {
    missing.push({ name, file: relPath, reason: `does not load: ${(err as Error).message.split('\n')[0]}` });
    return undefined;
  }
}

/** An invocable function: EventBridge event / SQS batch / schedule event in, result out. */
export type Invoke = (payload: unknown) => Promise<unknown>;

/**
 * Wraps a handler module's `run` as a Lambda invoke: the payload is parsed with the module's
 * exported input schema when it has one (`InputSchema`, `EventSchema` or `parseInput`), as the
 * middy parser middleware would, then `run(input, deps)` is called.
 * @returns undefined (and a `missing` entry) when the module has no `run`.
 */
export function invokerOf(name: string, file: string, mod: any, deps: unknown, missing: MissingPart[]): Invoke | undefined {
  if (!mod || typeof mod.run !== 'function') {
    if (mod) missing.push({ name, file, reason: 'exports no run(input, deps)' });
    return undefined;
  }
  const parse: ((x: unknown) => unknown) | undefined =
    typeof mod.parseInput === 'function'
      ? mod.parseInput
      : mod.InputSchema?.parse
        ? (x: unknown) => mod.InputSchema.parse(x)
        : mod.EventSchema?.parse
          ? (x: unknown) => mod.EventSchema.parse(x)
          : undefined;
  return async (payload) => mod.run(parse ? parse(payload) : payload, deps);
}
