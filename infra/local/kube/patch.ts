/**
 * The three patch formats the API server accepts on PATCH:
 * - `application/merge-patch+json` (RFC 7386),
 * - `application/strategic-merge-patch+json` (a subset: lists of known fields merge by their
 *   Kubernetes patchMergeKey, finalizers merge as a set, `$patch: delete|replace` directives;
 *   every other list is replaced, as for fields without a patch strategy such as Node taints),
 * - `application/json-patch+json` (RFC 6902: add, remove, replace, move, copy, test).
 * Rule source: k8s.io/apimachinery pkg/util/strategicpatch and the `patchStrategy`/`patchMergeKey`
 * tags of k8s.io/api core/v1 types.
 */
import { ApiError } from './store.ts';

type Json = unknown;
type JsonObject = Record<string, Json>;

/** Content types of PATCH requests. */
export const PatchContentType = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

function isObject(v: Json): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch: objects merge recursively, null deletes, everything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** patchMergeKey of list fields (by field name) that strategic merge patch merges instead of replacing. */
const MERGE_KEYS: Record<string, string> = {
  conditions: 'type',
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  env: 'name',
  ports: 'containerPort',
  ownerReferences: 'uid',
  addresses: 'type',
  imagePullSecrets: 'name',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
};
/** Lists of primitives merged as sets (`patchStrategy:"merge"`). */
const SET_FIELDS = new Set(['finalizers']);

/** Strategic merge patch (subset, see module doc). */
export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return structuredClone(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/') || k === '$retainKeys') continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const drop = new Set(Array.isArray(v) ? v : []);
      if (Array.isArray(out[field])) out[field] = (out[field] as Json[]).filter((x) => !drop.has(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    if (Array.isArray(v) && MERGE_KEYS[k] && Array.isArray(out[k])) {
      out[k] = mergeList(out[k] as Json[], v, MERGE_KEYS[k]);
      continue;
    }
    if (Array.isArray(v) && SET_FIELDS.has(k) && Array.isArray(out[k])) {
      out[k] = [...new Set([...(out[k] as Json[]), ...v])];
      continue;
    }
    out[k] = isObject(v) ? strategicMergePatch(out[k], v) : structuredClone(v);
    if (out[k] === undefined) delete out[k];
  }
  return out;
}

function mergeList(current: Json[], patch: Json[], mergeKey: string): Json[] {
  const out = [...current];
  for (const item of patch) {
    if (!isObject(item)) continue;
    const idx = out.findIndex((c) => isObject(c) && c[mergeKey] === item[mergeKey]);
    if (item.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) out[idx] = strategicMergePatch(out[idx], item);
    else out.push(strategicMergePatch({}, item));
  }
  return out;
}

/** One RFC 6902 operation. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: Json;
  from?: string;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw ApiError.badRequest(`the server rejected our request due to an error in our request: invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: Json, parts: string[]): Json {
  let cur = doc;
  for (const p of parts) {
    if (Array.isArray(cur)) cur = cur[Number(p)];
    else if (isObject(cur)) cur = cur[p];
    else return undefined;
  }
  return cur;
}

function parentOf(doc: Json, parts: string[], path: string): { parent: JsonObject | Json[]; last: string } {
  const parent = getAt(doc, parts.slice(0, -1));
  if (!isObject(parent) && !Array.isArray(parent)) throw unprocessable(`doc is missing path: "${path}"`);
  return { parent, last: parts[parts.length - 1] };
}

function unprocessable(msg: string): ApiError {
  return new ApiError(422, 'Invalid', `the server rejected our request due to an error in our request: ${msg}`);
}

function addAt(doc: Json, path: string, value: Json): Json {
  const parts = pointer(path);
  if (parts.length === 0) return structuredClone(value);
  const { parent, last } = parentOf(doc, parts, path);
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(i) || i < 0 || i > parent.length) throw unprocessable(`add operation does not apply: index out of range: "${path}"`);
    parent.splice(i, 0, structuredClone(value));
  } else parent[last] = structuredClone(value);
  return doc;
}

function removeAt(doc: Json, path: string): Json {
  const parts = pointer(path);
  const { parent, last } = parentOf(doc, parts, path);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!(i >= 0 && i < parent.length)) throw unprocessable(`remove operation does not apply: doc is missing path: "${path}"`);
    parent.splice(i, 1);
  } else {
    if (!(last in parent)) throw unprocessable(`remove operation does not apply: doc is missing path: "${path}"`);
    delete parent[last];
  }
  return doc;
}

/**
 * Applies an RFC 6902 patch to a copy of `target`.
 * @throws ApiError 422 when an operation does not apply (missing path, failed test), 400 for bad pointers.
 */
export function jsonPatch(target: Json, ops: unknown): Json {
  if (!Array.isArray(ops)) throw ApiError.badRequest('the server rejected our request due to an error in our request: json patch must be an array');
  let doc = structuredClone(target);
  for (const op of ops as JsonPatchOp[]) {
    switch (op.op) {
      case 'add':
        doc = addAt(doc, op.path, op.value);
        break;
      case 'remove':
        doc = removeAt(doc, op.path);
        break;
      case 'replace':
        if (getAt(doc, pointer(op.path)) === undefined) throw unprocessable(`replace operation does not apply: doc is missing key: ${op.path}`);
        doc = addAt(removeAt(doc, op.path), op.path, op.value);
        break;
      case 'move': {
        const v = getAt(doc, pointer(op.from ?? ''));
        if (v === undefined) throw unprocessable(`move operation does not apply: doc is missing from path: ${op.from}`);
        doc = addAt(removeAt(doc, op.from ?? ''), op.path, v);
        break;
      }
      case 'copy': {
        const v = getAt(doc, pointer(op.from ?? ''));
        if (v === undefined) throw unprocessable(`copy operation does not apply: doc is missing from path: ${op.from}`);
        doc = addAt(doc, op.path, v);
        break;
      }
      case 'test':
        if (JSON.stringify(getAt(doc, pointer(op.path))) !== JSON.stringify(op.value)) throw unprocessable(`testing value ${op.path} failed`);
        break;
      default:
        throw ApiError.badRequest(`the server rejected our request due to an error in our request: unexpected operation "${(op as { op: string }).op}"`);
    }
  }
  return doc;
}

/**
 * Applies a PATCH body by its content type.
 * @throws ApiError 415 UnsupportedMediaType for other content types.
 */
export function applyPatch(contentType: string, target: Json, body: Json): Json {
  const ct = contentType.split(';')[0].trim();
  if (ct === PatchContentType.json) return jsonPatch(target, body);
  if (ct === PatchContentType.merge) return mergePatch(target, body);
  if (ct === PatchContentType.strategic || ct === PatchContentType.apply) return strategicMergePatch(target, body);
  throw new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
  );
}
