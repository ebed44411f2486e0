/**
 * Reads the definition of a function's loop state machine (functions.ts trigger `loop`, e.g.
 * statemachines/disruption-loop.asl.json) and checks that the stack can provide it: the only
 * substitution is `${<Name>FunctionArn}` of the function itself, and the only Task resource is
 * that function (invoked by ARN), so the state machine's role needs lambda:InvokeFunction on it
 * and nothing else.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the stack needs to know about a loop definition. */
export interface LoopDefinition {
  /** The definition text, `${…}` placeholders left for DefinitionSubstitutions. */
  body: string;
  /** The function ARN substitution key, e.g. `DisruptionFunctionArn`. */
  substitution: string;
  /** The definition's top-level TimeoutSeconds (undefined when absent: no execution timeout). */
  timeoutSeconds?: number;
}

/** Thrown when a loop definition uses something the stack does not provide. */
export class LoopDefinitionError extends Error {
  override name = 'LoopDefinitionError';
}

/** `disruption` → `DisruptionFunctionArn`. */
export function loopSubstitution(functionName: string): string {
  return `${functionName.charAt(0).toUpperCase()}${functionName.slice(1)}FunctionArn`;
}

function taskResources(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const v of node) taskResources(v, out);
  } else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o.Type === 'Task' && typeof o.Resource === 'string') out.push(o.Resource);
    for (const v of Object.values(o)) taskResources(v, out);
  }
  return out;
}

/**
 * Parses the loop definition of function `functionName`.
 * @param path repository-relative path (error messages only).
 * @throws LoopDefinitionError for invalid JSON, a substitution other than the function's ARN, a
 *   Task resource other than the function, or no Task invoking it.
 */
export function parseLoopDefinition(body: string, functionName: string, path: string): LoopDefinition {
  let doc: { TimeoutSeconds?: unknown };
  try {
    doc = JSON.parse(body) as { TimeoutSeconds?: unknown };
  } catch (cause) {
    throw new LoopDefinitionError(`${path} is not valid JSON`, { cause });
  }
  const substitution = loopSubstitution(functionName);
  const names = [...new Set([...body.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]))];
  const unknown = names.filter((n) => n !== substitution);
  if (unknown.length > 0)
    throw new LoopDefinitionError(`${path}: unknown substitution(s) ${unknown.map((n) => `\${${n}}`).join(', ')}: only \${${substitution}} is provided`);
  const resources = taskResources(doc);
  const others = resources.filter((r) => r !== `\${${substitution}}`);
  if (others.length > 0)
    throw new LoopDefinitionError(`${path}: Task resource(s) ${others.join(', ')} not granted: a loop may only invoke \${${substitution}}`);
  if (resources.length === 0) throw new LoopDefinitionError(`${path}: no Task invokes \${${substitution}}`);
  return { body, substitution, timeoutSeconds: typeof doc.TimeoutSeconds === 'number' ? doc.TimeoutSeconds : undefined };
}

/** Reads a loop definition from the repository; undefined when the file does not exist yet. */
export function readLoopDefinition(repoRoot: string, path: string, functionName: string): LoopDefinition | undefined {
  const file = join(repoRoot, path);
  if (!existsSync(file)) return undefined;
  return parseLoopDefinition(readFileSync(file, 'utf8'), functionName, path);
}
