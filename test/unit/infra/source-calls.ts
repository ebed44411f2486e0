/**
 * Which port methods each function's code calls, read from the source: every file the function's
 * entry reaches through relative imports inside functions/, shared/runtime/ and shared/launch/ (where
 * calls shared by several functions live, e.g. the cluster picture's live fallback, the launch of a
 * NodeClaim) is scanned for `<port>.<method>(`
 * (`deps.kube.patchNode(`, `kube.listPods(` after destructuring, …) and
 * `listObjects('<apiVersion>', '<Kind>')`. Tests compare the result with what the function is
 * granted (RBAC in infra/k8s, IAM in the synthesized stack), so a call added without its
 * permission, or a permission no call needs, fails a test.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { RepoRoot } from '../../../infra/aws/app.ts';

/** Ports whose calls are collected. */
export const ScannedPorts = ['kube', 'cloud', 'store', 'unavailable', 'budgets', 'publisher', 'termination', 'starter', 'catalogRefresher', 'views'] as const;

/** Repository-relative files reachable from `entry` through relative imports under functions/, shared/runtime/ and shared/launch/. */
export function sourceClosure(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (rel: string) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    const text = readFileSync(join(RepoRoot, rel), 'utf8');
    for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const target = relative(RepoRoot, resolve(dirname(join(RepoRoot, rel)), m[1]));
      if (
        (target.startsWith('functions/') || target.startsWith('shared/runtime/') || target.startsWith('shared/launch/')) &&
        target.endsWith('.ts') &&
        existsSync(join(RepoRoot, target))
      )
        visit(target);
    }
  };
  visit(entry);
  return [...seen].sort();
}

/** `port.method` calls (and `kube.listObjects:<apiVersion> <Kind>`) in the closure of `entry`, sorted. */
export function portCalls(entry: string): string[] {
  const calls = new Set<string>();
  const ports = ScannedPorts.join('|');
  for (const file of sourceClosure(entry)) {
    // Comments mention calls too; only code counts.
    const code = readFileSync(join(RepoRoot, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    for (const m of code.matchAll(new RegExp(`\\b(${ports})[!?]?\\.(\\w+)\\(`, 'g'))) {
      if (m[2] === 'listObjects') continue;
      calls.add(`${m[1] === 'starter' ? 'termination' : m[1]}.${m[2]}`);
    }
    for (const m of code.matchAll(/\bkube[!?]?\.listObjects\(\s*'([^']+)',\s*'([^']+)'\s*\)/g)) calls.add(`kube.listObjects:${m[1]} ${m[2]}`);
  }
  return [...calls].sort();
}
