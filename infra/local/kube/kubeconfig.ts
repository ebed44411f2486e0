/**
 * A kubeconfig for the local API server, so @kubernetes/client-node (`KubeConfig.loadFromFile`,
 * or `KUBECONFIG=...`) and kubectl connect to it as to a real cluster.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

/** Name of the cluster, context and user in the generated kubeconfig. */
export const LOCAL_CONTEXT = 'nodefleet-local';

/** The kubeconfig YAML for a server at `url` (plain http on loopback, a dummy bearer token). */
export function kubeconfigYaml(url: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // client-node v2 refuses plain http unless skip-TLS-verify is set (config.ts createDispatcherOptions)
    clusters: [{ name: LOCAL_CONTEXT, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: LOCAL_CONTEXT, user: { token: 'nodefleet-local' } }],
    contexts: [{ name: LOCAL_CONTEXT, context: { cluster: LOCAL_CONTEXT, user: LOCAL_CONTEXT, namespace } }],
    'current-context': LOCAL_CONTEXT,
    preferences: {},
  });
}

/** Writes the kubeconfig for `url` to `path` (creating the folder); returns `path`. */
export function writeKubeconfig(path: string, url: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, kubeconfigYaml(url), { mode: 0o600 });
  return path;
}
