/**
 * Reads statemachines/termination.asl.json and derives what the stack must provide for it: one
 * Lambda per `${XxxFunctionArn}` substitution (entry functions/termination/xxx.ts) and the value
 * of every other `${…}` substitution. Nothing here is hard-coded to the current task list, so a
 * task added to the ASL needs no change to the stack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Repository-relative path of the termination state machine definition. */
export const TerminationAslPath = 'statemachines/termination.asl.json';

/** Substitutions the stack provides besides the task function ARNs. */
export const ResourceSubstitutions = ['TableName', 'TableArn', 'EventBusName', 'EventBusArn', 'ClusterName'] as const;
export type ResourceSubstitution = (typeof ResourceSubstitutions)[number];

/** Service integrations (Task `Resource` prefixes) the stack knows how to grant. */
export const SupportedIntegrations = ['arn:aws:states:::lambda:invoke', 'arn:aws:states:::dynamodb:', 'arn:aws:states:::events:putEvents'] as const;

/** One task function the state machine invokes. */
export interface TerminationTask {
  /** The substitution key, e.g. `CordonFunctionArn`. */
  substitution: string;
  /** Task name, e.g. `Cordon` (construct id `Termination<Name>`, function name suffix `termination-<kebab>`). */
  name: string;
  /** Entry file relative to the repository root, e.g. `functions/termination/cordon.ts`. */
  entry: string;
}

/** What the stack needs to know about the definition. */
export interface TerminationDefinition {
  /** The definition text, with `${…}` placeholders left for DefinitionSubstitutions. */
  body: string;
  tasks: TerminationTask[];
  resources: ResourceSubstitution[];
  /** DynamoDB actions used through direct service integrations (e.g. `dynamodb:UpdateItem`). */
  dynamodbActions: string[];
  /** Whether a Task state calls events:putEvents directly. */
  putsEvents: boolean;
}

/** Thrown when the definition uses something the stack cannot provide. */
export class TerminationDefinitionError extends Error {
  override name = 'TerminationDefinitionError';
}

const FunctionArnSuffix = 'FunctionArn';

/** `EvictPods` → `evict-pods`. */
export function kebab(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

/** Every Task state's `Resource`, including states nested in Map and Parallel. */
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
 * Parses a definition's text.
 * @throws TerminationDefinitionError for invalid JSON, an unknown `${…}` substitution or an
 *   unsupported service integration.
 */
export function parseTerminationDefinition(body: string): TerminationDefinition {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (cause) {
    throw new TerminationDefinitionError(`${TerminationAslPath} is not valid JSON`, { cause });
  }
  const names = [...new Set([...body.matchAll(/\$\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]))];
  const tasks: TerminationTask[] = [];
  const resources: ResourceSubstitution[] = [];
  for (const n of names) {
    if (n.endsWith(FunctionArnSuffix) && n.length > FunctionArnSuffix.length) {
      const name = n.slice(0, -FunctionArnSuffix.length);
      tasks.push({ substitution: n, name, entry: `functions/termination/${kebab(name)}.ts` });
    } else if ((ResourceSubstitutions as readonly string[]).includes(n)) {
      resources.push(n as ResourceSubstitution);
    } else {
      throw new TerminationDefinitionError(
        `${TerminationAslPath}: unknown substitution \${${n}}: use \${<Task>FunctionArn} or one of ${ResourceSubstitutions.join(', ')}`,
      );
    }
  }
  const dynamodbActions = new Set<string>();
  let putsEvents = false;
  for (const r of taskResources(doc)) {
    if (r.startsWith('${') || r.startsWith('arn:aws:states:::lambda:invoke')) continue;
    if (r.startsWith('arn:aws:states:::dynamodb:')) {
      const op = r.slice('arn:aws:states:::dynamodb:'.length).split('.')[0];
      dynamodbActions.add(`dynamodb:${op.charAt(0).toUpperCase()}${op.slice(1)}`);
    } else if (r.startsWith('arn:aws:states:::events:putEvents')) {
      putsEvents = true;
    } else {
      throw new TerminationDefinitionError(
        `${TerminationAslPath}: Task resource '${r}' is not an integration the stack grants (${SupportedIntegrations.join(', ')})`,
      );
    }
  }
  return { body, tasks, resources, dynamodbActions: [...dynamodbActions].sort(), putsEvents };
}

/** Reads the definition from the repository; undefined when the file does not exist yet. */
export function readTerminationDefinition(repoRoot: string, path = TerminationAslPath): TerminationDefinition | undefined {
  const file = join(repoRoot, path);
  if (!existsSync(file)) return undefined;
  return parseTerminationDefinition(readFileSync(file, 'utf8'));
}
