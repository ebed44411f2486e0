/**
 * Reading Kubernetes YAML the way kubectl does: several documents per file (`---`), empty
 * documents skipped, `kind: List` objects unwrapped into their items. Syntax errors keep the
 * line and column so a user can find them.
 */
import { parseAllDocuments } from 'yaml';

/** One object read from a file; `document` is 1-based, `item` set when it came from a List. */
export interface YamlObject {
  document: number;
  item?: number;
  object: unknown;
}

/** A YAML syntax error; `line` and `column` are 1-based. */
export interface YamlSyntaxError {
  document: number;
  line?: number;
  column?: number;
  message: string;
}

/**
 * Aliases (`*name`) allowed per document. A few are normal (shared labels); thousands are a
 * "billion laughs" bomb, whose expansion would exhaust memory: such a document is refused.
 */
export const MaxYamlAliases = 100;

/**
 * The yaml parser's messages for hostile input, in words a user can act on: a stack overflow
 * (a document nested thousands of levels deep) and the alias limit above.
 */
function plainMessage(message: string): string {
  if (/Maximum call stack size exceeded/.test(message)) return 'nested too deeply to read (thousands of levels)';
  if (/Excessive alias count/.test(message))
    return `more than ${MaxYamlAliases} aliases (*name) in one document: refused as a possible YAML bomb (billion laughs)`;
  return message;
}

/**
 * Parses every document of `text`. Never throws: syntax errors, too deep nesting and alias
 * bombs come back in `errors` (a document with errors yields no object).
 */
export function parseYamlObjects(text: string): { objects: YamlObject[]; errors: YamlSyntaxError[] } {
  const objects: YamlObject[] = [];
  const errors: YamlSyntaxError[] = [];
  // merge: YAML merge keys (`<<: *anchor`) are merged as kubectl's YAML reader merges them, not kept as a key named "<<".
  const docs = parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true, merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    const document = i + 1;
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        const pos = e.linePos?.[0];
        // prettyErrors appends "at line N, column M:" and a code excerpt: keep the first sentence.
        const message = plainMessage(e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, ''));
        errors.push({ document, line: pos?.line, column: pos?.col, message });
      }
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MaxYamlAliases }) as unknown;
    } catch (e) {
      errors.push({ document, message: plainMessage((e as Error).message) });
      return;
    }
    if (value === null || value === undefined) return;
    if (isList(value)) {
      (value.items as unknown[]).forEach((object, item) => objects.push({ document, item: item + 1, object }));
      return;
    }
    objects.push({ document, object: value });
  });
  return { objects, errors };
}

function isList(v: unknown): v is { kind: string; items: unknown[] } {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.kind === 'string' && o.kind.endsWith('List') && Array.isArray(o.items);
}
