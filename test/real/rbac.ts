/**
 * RBAC of each nodefleet identity against the real API server (infra/k8s applied as it ships):
 * - what the identity needs, derived from the source (the functions' KubeApi calls, as
 *   test/unit/infra/k8s.test.ts derives them; the agent's Reflectors on pods, nodes and NodeClaims), is
 *   allowed, and everything else of a wide set of resources and verbs is refused, asked with the
 *   identity's own credential (SelfSubjectAccessReview);
 * - real requests: each needed KubeApi method, sent by nodefleet's own adapter
 *   (ClientNodeKubeApi) with the identity's token, succeeds; a sample of refused requests gets 403;
 *   the admission policy refuses a nodefleet identity changing a Node without karpenter.sh/nodepool.
 */
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { Functions, DefaultTerminationTaskPermissions, TerminationTaskPermissions } from '../../infra/aws/functions.ts';
import { readTerminationDefinition, TerminationAslPath } from '../../infra/aws/termination.ts';
import { AgentNamespace, AgentServiceAccount, kubernetesGroupOf } from '../../infra/aws/config.ts';
import { RepoRoot } from '../../infra/aws/app.ts';
import { ClientNodeKubeApi, KubeApiRbac, type RbacPermission } from '../../shared/kube/kube-api.ts';
import { ReflectorKinds, ReflectorRbac } from '../../shared/kube/reflector.ts';
import { AnnotationNodeClaimMirror, FinalizerTermination, LabelNodePool } from '../../shared/api/labels.ts';
import { toKubeNodeClaim } from '../../shared/api/nodeclaim.ts';
import { nodeClaim } from '../fakes/builders.ts';
import { portCalls } from '../unit/infra/source-calls.ts';
import type { ControlPlane } from './control-plane/cluster.ts';

/** One nodefleet identity: its Kubernetes user and groups, and what its code needs. */
export interface Identity {
  name: string;
  user: string;
  groups: string[];
  /** KubeApi methods its code calls (`listObjects:<apiVersion> <Kind>`), empty for the agent. */
  calls: string[];
  needed: RbacPermission[];
}

const key = (p: RbacPermission) => `${p.apiGroup || 'core'}/${p.resource}:${p.verb}`;

/** Every function that calls Kubernetes (the registry's and the termination tasks), from the source. */
export function functionIdentities(): Identity[] {
  const all = [
    ...Functions.map((f) => ({ name: f.name, entry: f.entry })),
    ...readTerminationDefinition(RepoRoot, TerminationAslPath)!.tasks.map((t) => ({
      name: `termination${t.name}`,
      entry: t.entry,
      perms: TerminationTaskPermissions[t.name] ?? DefaultTerminationTaskPermissions,
    })),
  ];
  const out: Identity[] = [];
  for (const f of all) {
    const calls = portCalls(f.entry)
      .filter((c) => c.startsWith('kube.'))
      .map((c) => c.slice('kube.'.length));
    if (calls.length === 0) continue;
    const needed = calls.flatMap((c) => {
      const [method, arg] = c.split(':');
      const table = (KubeApiRbac as Record<string, unknown>)[method];
      const perms = method === 'listObjects' ? (table as Record<string, RbacPermission[]>)[arg] : (table as RbacPermission[]);
      if (!perms) throw new Error(`${f.name}: kube.${c} has no entry in KubeApiRbac`);
      return perms;
    });
    const group = kubernetesGroupOf(f.name);
    out.push({ name: group, user: group, groups: [group], calls, needed: dedupe(needed) });
  }
  return out;
}

function dedupe(perms: RbacPermission[]): RbacPermission[] {
  return [...new Map(perms.map((p) => [key(p), p])).values()];
}

/** The agent: its three Reflectors (functions/agent/agent.ts). Its credential is a ServiceAccount token. */
export const AgentIdentity: Identity = {
  name: 'nodefleet-agent',
  user: `system:serviceaccount:${AgentNamespace}:${AgentServiceAccount}`,
  groups: [],
  calls: [],
  needed: [...ReflectorRbac('pods'), ...ReflectorRbac('nodes'), ...ReflectorRbac('nodeclaims')],
};

/** The resources asked about: every one a nodefleet role names, and the sensitive rest. */
const Resources: [string, string][] = [
  ['', 'nodes'],
  ['', 'nodes/status'],
  ['', 'pods'],
  ['', 'pods/eviction'],
  ['', 'pods/status'],
  ['', 'pods/exec'],
  ['', 'pods/log'],
  ['', 'persistentvolumes'],
  ['', 'persistentvolumeclaims'],
  ['', 'secrets'],
  ['', 'configmaps'],
  ['', 'serviceaccounts'],
  ['', 'serviceaccounts/token'],
  ['', 'namespaces'],
  ['', 'events'],
  ['events.k8s.io', 'events'],
  ['apps', 'daemonsets'],
  ['apps', 'deployments'],
  ['apps', 'replicasets'],
  ['apps', 'statefulsets'],
  ['policy', 'poddisruptionbudgets'],
  ['storage.k8s.io', 'storageclasses'],
  ['storage.k8s.io', 'volumeattachments'],
  ['storage.k8s.io', 'csinodes'],
  ['karpenter.sh', 'nodepools'],
  ['karpenter.sh', 'nodepools/status'],
  ['karpenter.sh', 'nodeclaims'],
  ['karpenter.k8s.aws', 'ec2nodeclasses'],
  ['nodefleet.io', 'nodepools'],
  ['nodefleet.io', 'ec2nodeclasses'],
  ['coordination.k8s.io', 'leases'],
  ['rbac.authorization.k8s.io', 'clusterroles'],
  ['rbac.authorization.k8s.io', 'clusterrolebindings'],
  ['rbac.authorization.k8s.io', 'roles'],
  ['rbac.authorization.k8s.io', 'rolebindings'],
  ['apiextensions.k8s.io', 'customresourcedefinitions'],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicies'],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicybindings'],
  ['certificates.k8s.io', 'certificatesigningrequests'],
];
const Verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

export interface CheckResult {
  identity: string;
  check: string;
  expected: 'allowed' | 'refused';
  got: string;
  ok: boolean;
}

/** The RBAC permissions asked about for every identity (the needed ones included). */
export function universe(identities: Identity[]): RbacPermission[] {
  const all = Resources.flatMap(([apiGroup, resource]) => Verbs.map((verb) => ({ apiGroup, resource, verb })));
  return dedupe([...all, ...identities.flatMap((i) => i.needed)]);
}

async function accessReview(cp: ControlPlane, token: string, p: RbacPermission): Promise<boolean> {
  const [resource, subresource] = p.resource.split('/');
  const r = await cp.request(
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { group: p.apiGroup, resource, subresource, verb: p.verb } },
    },
    { token },
  );
  if (r.status !== 201) throw new Error(`SelfSubjectAccessReview: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.status.allowed === true;
}

/** The agent's ServiceAccount token from the TokenRequest API (as the kubelet mounts one). */
export async function agentToken(cp: ControlPlane): Promise<string> {
  const r = await cp.request('POST', `/api/v1/namespaces/${AgentNamespace}/serviceaccounts/${AgentServiceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  if (r.status !== 201) throw new Error(`TokenRequest: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.status.token;
}

/** The user the server sees for a token (SelfSubjectReview). */
async function whoAmI(cp: ControlPlane, token: string): Promise<{ username: string; groups: string[] }> {
  const r = await cp.request(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    { token },
  );
  if (r.status !== 201) throw new Error(`SelfSubjectReview: HTTP ${r.status}`);
  return r.body.status.userInfo;
}

/** SelfSubjectAccessReview of every permission of the universe for every identity. */
export async function accessMatrix(cp: ControlPlane, identities: Identity[], tokens: Record<string, string>): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const perms = universe(identities);
  for (const id of identities) {
    const token = tokens[id.name];
    const me = await whoAmI(cp, token);
    const sameUser = me.username === id.user && id.groups.every((g) => me.groups.includes(g));
    out.push({
      identity: id.name,
      check: 'authenticated as its user and groups',
      expected: 'allowed',
      got: `${me.username} [${me.groups.join(',')}]`,
      ok: sameUser,
    });
    const needed = new Set(id.needed.map(key));
    const answers: boolean[] = [];
    for (let i = 0; i < perms.length; i += 16) answers.push(...(await Promise.all(perms.slice(i, i + 16).map((p) => accessReview(cp, token, p)))));
    perms.forEach((p, i) => {
      const expected = needed.has(key(p)) ? 'allowed' : 'refused';
      const got = answers[i] ? 'allowed' : 'refused';
      out.push({ identity: id.name, check: `access ${key(p)}`, expected, got, ok: expected === got });
    });
  }
  return out;
}

const node = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
const pod = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
});

async function must(cp: ControlPlane, method: string, path: string, body?: unknown): Promise<void> {
  const r = await cp.request(method, path, body);
  if (r.status >= 300 && r.status !== 404 && r.status !== 409) throw new Error(`${method} ${path}: HTTP ${r.status}: ${r.body?.message ?? ''}`);
}

/**
 * Real requests: every KubeApi call an identity's code makes, through ClientNodeKubeApi with its
 * token, on objects made for it (a Node of a NodePool, a pod in default); refused requests of its
 * role's neighbours; and the admission policy on a Node without karpenter.sh/nodepool.
 */
export async function realRequests(cp: ControlPlane, identities: Identity[], tokens: Record<string, string>): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const record = (identity: string, check: string, expected: 'allowed' | 'refused', got: string) =>
    out.push({ identity, check, expected, got, ok: got === expected });
  // The namespace's default ServiceAccount (kube-controller-manager makes it when it runs).
  await must(cp, 'POST', '/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  const status = (err: unknown) => (err as { code?: number })?.code ?? (err as { cause?: { code?: number } })?.cause?.code;
  for (const id of identities) {
    if (id.calls.length === 0) continue;
    const kube = new ClientNodeKubeApi(async () => ({
      kind: 'token',
      server: cp.server,
      caData: Buffer.from(cp.caData).toString('base64'),
      token: tokens[id.name],
      clusterName: 'real',
    }));
    const n = `rbac-${id.name}`.slice(0, 60);
    await must(cp, 'POST', '/api/v1/nodes', node(n, { [LabelNodePool]: 'default' }));
    await must(cp, 'POST', '/api/v1/namespaces/default/pods', pod(`${n}-a`));
    await must(cp, 'POST', '/api/v1/namespaces/default/pods', pod(`${n}-b`));
    // Mutations last, so the reads see the objects.
    const order = (c: string) => (c.startsWith('delete') ? 3 : c.startsWith('evict') ? 2 : c.startsWith('patch') || c.startsWith('put') ? 1 : 0);
    // A NodeClaim object as gc mirrors a record (validated by the real CRD), for the NodeClaim calls.
    const claimObject = toKubeNodeClaim(
      nodeClaim({ name: n, providerId: 'aws:///us-east-1a/i-0123456789abcdef0', nodeName: n }),
      { [AnnotationNodeClaimMirror]: 'real' },
      { ownerReference: false },
    );
    for (const call of [...id.calls].sort((a, b) => order(a) - order(b))) {
      const [method, arg] = call.split(':');
      const run = async (): Promise<unknown> => {
        switch (method) {
          case 'listNodePools':
            return kube.listNodePools();
          case 'listNodePoolNames':
            return kube.listNodePoolNames();
          case 'listNodeClasses':
            return kube.listNodeClasses();
          case 'listNodes':
            return kube.listNodes();
          case 'getNode': {
            const got = await kube.getNode(n);
            if (!got) throw new Error('node not found');
            return got;
          }
          case 'listPods':
            return kube.listPods();
          case 'listPodDisruptionBudgets':
            return kube.listPodDisruptionBudgets();
          case 'listObjects': {
            const [apiVersion, kind] = arg.split(' ');
            return kube.listObjects(apiVersion, kind);
          }
          case 'patchNode':
            return kube.patchNode(n, { labels: { 'example.com/rbac': 'checked' } });
          case 'deleteNode':
            return kube.deleteNode(n);
          case 'evictPod': {
            const r = await kube.evictPod('default', `${n}-a`);
            if (r !== 'evicted') throw new Error(r);
            return r;
          }
          case 'deletePod':
            return kube.deletePod('default', `${n}-b`, 0);
          case 'setNodeFinalizer': {
            // put on, then taken off (the node is deleted after the calls)
            const on = await kube.setNodeFinalizer(n, FinalizerTermination, true);
            if (!on?.metadata.finalizers?.includes(FinalizerTermination)) throw new Error('finalizer not set');
            return kube.setNodeFinalizer(n, FinalizerTermination, false);
          }
          case 'listNodeClaimObjects':
            return kube.listNodeClaimObjects();
          case 'getNodeClaimObject':
            // allowed = answered (404 is undefined: registration's identity has no create to make one)
            return kube.getNodeClaimObject(n);
          // twice: the create, then the patch of an existing object (and its status both times)
          case 'putNodeClaimObject':
            await kube.putNodeClaimObject(claimObject);
            return kube.putNodeClaimObject(claimObject);
          case 'deleteNodeClaimObject': {
            const live = (await kube.listNodeClaimObjects()).find((o) => o.metadata.name === n);
            if (!live) throw new Error('nodeclaim object not found');
            return kube.deleteNodeClaimObject(live);
          }
          default:
            throw new Error(`no real request for kube.${call}`);
        }
      };
      const got = await run().then(
        () => 'allowed',
        (err: unknown) => `refused (${status(err) ?? (err as Error).message})`,
      );
      record(id.name, `request kube.${call}`, 'allowed', got);
    }
    await must(cp, 'DELETE', `/api/v1/nodes/${n}`);
    // Refused: one real request per verb its role does not hold on nodes and pods.
    const needed = new Set(id.needed.map(key));
    const refusedProbes: [string, string, string, unknown?][] = [
      ['core/nodes:delete', 'DELETE', '/api/v1/nodes/rbac-absent'],
      ['core/nodes:list', 'GET', '/api/v1/nodes'],
      ['core/pods:list', 'GET', '/api/v1/pods'],
      ['core/secrets:list', 'GET', '/api/v1/secrets'],
      ['core/pods:create', 'POST', '/api/v1/namespaces/default/pods', pod('rbac-refused')],
    ];
    for (const [perm, verb, path, body] of refusedProbes) {
      if (needed.has(perm)) continue;
      const r = await cp.request(verb, path, body, { token: tokens[id.name] });
      record(id.name, `request ${verb} ${path}`, 'refused', r.status === 403 ? 'refused' : `HTTP ${r.status}`);
    }
  }
  // The agent's Reflectors: list and a watch on pods, nodes and NodeClaims with its ServiceAccount token.
  const agent = identities.find((i) => i.name === AgentIdentity.name);
  if (agent) {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'real', server: cp.server, caData: Buffer.from(cp.caData).toString('base64') }],
      users: [{ name: 'agent', token: tokens[agent.name] }],
      contexts: [{ name: 'agent', cluster: 'real', user: 'agent' }],
      currentContext: 'agent',
    });
    for (const kind of ['pods', 'nodes', 'nodeclaims'] as const) {
      const path = ReflectorKinds[kind].path;
      const list = await cp.request('GET', `${path}?limit=1`, undefined, { token: tokens[agent.name] });
      record(agent.name, `request list ${kind}`, 'allowed', list.status === 200 ? 'allowed' : `HTTP ${list.status}`);
      const got = await new Promise<string>((resolve) => {
        let settled = false;
        void new Watch(kc)
          .watch(
            path,
            { resourceVersion: list.body?.metadata?.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 2 },
            () => {},
            (err) => {
              if (!settled) resolve(err ? `refused (${(err as Error).message})` : 'allowed');
              settled = true;
            },
          )
          .catch((err: unknown) => {
            if (!settled) resolve(`refused (${(err as Error).message})`);
            settled = true;
          });
      });
      record(agent.name, `request watch ${kind}`, 'allowed', got);
    }
    const g = await cp.request('GET', '/api/v1/nodes/any', undefined, { token: tokens[agent.name] });
    record(agent.name, 'request GET /api/v1/nodes/any', 'refused', g.status === 403 ? 'refused' : `HTTP ${g.status}`);
  }
  // The ValidatingAdmissionPolicy: a nodefleet identity that may delete and patch nodes is refused
  // on a Node outside any NodePool.
  const gc = identities.find((i) => i.needed.some((p) => key(p) === 'core/nodes:delete') && i.needed.some((p) => key(p) === 'core/nodes:patch'));
  if (gc) {
    await must(cp, 'POST', '/api/v1/nodes', node('rbac-unmanaged', { 'eks.amazonaws.com/nodegroup': 'system' }));
    // A new policy takes effect once the server's policy informer has it: retry for up to 30 s.
    let p = { status: 0 } as { status: number };
    for (let i = 0; i < 60; i++) {
      p = await cp.request(
        'PATCH',
        '/api/v1/nodes/rbac-unmanaged',
        { metadata: { labels: { 'example.com/x': `y${i}` } } },
        { token: tokens[gc.name], contentType: 'application/merge-patch+json' },
      );
      if (p.status === 403) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    record(gc.name, 'admission: patch a Node without karpenter.sh/nodepool', 'refused', p.status === 403 ? 'refused' : `HTTP ${p.status}`);
    const d = await cp.request('DELETE', '/api/v1/nodes/rbac-unmanaged', undefined, { token: tokens[gc.name] });
    record(gc.name, 'admission: delete a Node without karpenter.sh/nodepool', 'refused', d.status === 403 ? 'refused' : `HTTP ${d.status}`);
    await must(cp, 'DELETE', '/api/v1/nodes/rbac-unmanaged');
  }
  return out;
}
