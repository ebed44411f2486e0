/**
 * Schema checks for infra/k8s (kubectl is not installed here, so no --dry-run): every document
 * parses and has its required fields; the kustomization's files exist; the agent Deployment meets
 * Pod Security Standards "restricted"; RBAC is exactly the least set; the CRDs are structural,
 * declare every field of shared/api/nodepool.ts's zod schemas and accept the example NodePool.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { EC2NodeClassRules } from '../../../shared/api/crd-rules.ts';
import { describe, expect, it } from 'vitest';
import { Env } from '../../../shared/api/contract.ts';
import { EC2NodeClassSchema, LabelValuePattern, NodePoolSchema, QualifiedNamePattern } from '../../../shared/api/nodepool.ts';
import { RepoRoot } from '../../../infra/aws/app.ts';
import { AgentNamespace, AgentServiceAccount, kubernetesGroupOf } from '../../../infra/aws/config.ts';
import { Functions, DefaultTerminationTaskPermissions, TerminationTaskPermissions } from '../../../infra/aws/functions.ts';
import { readTerminationDefinition, TerminationAslPath } from '../../../infra/aws/termination.ts';
import { KubeApiRbac, type RbacPermission } from '../../../shared/kube/kube-api.ts';
import { ReflectorRbac } from '../../../shared/kube/reflector.ts';
import { planNodeClaimObjects, setCondition } from '../../../shared/api/nodeclaim.ts';
import { nodeClaim } from '../../fakes/index.ts';
import { portCalls } from './source-calls.ts';

const K8sDir = join(RepoRoot, 'infra/k8s');
type Obj = Record<string, any>;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function load(file: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  for (const d of docs)
    expect(
      d.errors.map((e) => e.message),
      relative(RepoRoot, file),
    ).toEqual([]);
  return docs.map((d) => d.toJS() as Obj).filter((d) => d !== null);
}

const kustomization = load(join(K8sDir, 'kustomization.yaml'))[0];
const manifests = (kustomization.resources as string[]).flatMap((f) => load(join(K8sDir, f)));
const byKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const one = (kind: string, name: string) => {
  const found = manifests.filter((m) => m.kind === kind && m.metadata.name === name);
  expect(found, `${kind}/${name}`).toHaveLength(1);
  return found[0];
};
const ClusterScoped = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

describe('infra/k8s documents', () => {
  it('every YAML file parses and every object has apiVersion, kind and metadata.name', () => {
    const files = yamlFiles(K8sDir);
    expect(files.length).toBeGreaterThanOrEqual(9);
    for (const f of files) {
      for (const d of load(f)) {
        if (d.kind === 'Kustomization') continue;
        expect(typeof d.apiVersion, f).toBe('string');
        expect(typeof d.kind, f).toBe('string');
        expect(d.metadata?.name, f).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      }
    }
  });

  it('kustomization lists existing files, one namespace, and the image and config generator the Deployment uses', () => {
    expect(kustomization.kind).toBe('Kustomization');
    expect(kustomization.namespace).toBe(AgentNamespace);
    for (const f of kustomization.resources) expect(existsSync(join(K8sDir, f)), f).toBe(true);
    for (const m of manifests) if (!ClusterScoped.has(m.kind)) expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBe(AgentNamespace);
    const crdKustomization = load(join(K8sDir, 'crds/kustomization.yaml'))[0];
    for (const f of crdKustomization.resources) expect(existsSync(join(K8sDir, 'crds', f)), f).toBe(true);
    expect(kustomization.images.map((i: Obj) => i.name)).toEqual([one('Deployment', 'nodefleet-agent').spec.template.spec.containers[0].image.split(':')[0]]);
  });

  it('configures the agent with the contract.ts env names it requires, and the view bucket (stack output ViewBucketName)', () => {
    const gen = kustomization.configMapGenerator[0];
    expect(gen.name).toBe('nodefleet-agent');
    const keys = readFileSync(join(K8sDir, gen.envs[0]), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'))
      .map((l) => l.split('=')[0]);
    expect(keys.sort()).toEqual([Env.region, Env.clusterName, Env.eventBusName, Env.viewBucket].sort());
    const container = one('Deployment', 'nodefleet-agent').spec.template.spec.containers[0];
    expect(container.envFrom).toEqual([{ configMapRef: { name: gen.name } }]);
  });
});

describe('agent Deployment', () => {
  const deploy = one('Deployment', 'nodefleet-agent');
  const pod = deploy.spec.template.spec;
  const container = pod.containers[0];

  it('runs one replica of the agent ServiceAccount, rolling with no gap, off nodefleet-managed nodes', () => {
    expect(deploy.spec.replicas).toBe(1);
    expect(readFileSync(join(K8sDir, 'deployment.yaml'), 'utf8')).toMatch(/One replica, no leader election, on purpose/);
    expect(deploy.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(pod.serviceAccountName).toBe(AgentServiceAccount);
    one('ServiceAccount', AgentServiceAccount);
    expect(deploy.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'nodefleet-agent' });
    expect(deploy.spec.template.metadata.labels).toMatchObject(deploy.spec.selector.matchLabels);
    expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions).toEqual([
      { key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' },
    ]);
  });

  it('meets Pod Security Standards "restricted" (and the namespace enforces it)', () => {
    expect(one('Namespace', AgentNamespace).metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(pod.hostNetwork ?? false).toBe(false);
    expect(pod.hostPID ?? false).toBe(false);
    expect(pod.hostIPC ?? false).toBe(false);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    for (const v of pod.volumes ?? []) {
      expect(
        Object.keys(v).filter((k) => k !== 'name'),
        v.name,
      ).toEqual([expect.stringMatching(/^(configMap|emptyDir|projected|secret|downwardAPI|csi|persistentVolumeClaim|ephemeral)$/)]);
    }
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
      const sc = c.securityContext;
      expect(sc.allowPrivilegeEscalation).toBe(false);
      expect(sc.privileged ?? false).toBe(false);
      expect(sc.readOnlyRootFilesystem).toBe(true);
      expect(sc.capabilities).toEqual({ drop: ['ALL'] });
      expect(sc.runAsNonRoot ?? pod.securityContext.runAsNonRoot).toBe(true);
      expect(sc.runAsUser ?? pod.securityContext.runAsUser).toBeGreaterThan(0);
      for (const p of c.ports ?? []) expect(p.hostPort).toBeUndefined();
    }
  });

  it("probes the agent's /healthz and /readyz on its health port", () => {
    const port = container.ports.find((p: Obj) => p.name === 'health');
    expect(container.env).toContainEqual({ name: 'NODEFLEET_AGENT_HEALTH_PORT', value: String(port.containerPort) });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
  });

  it('sets requests and a memory limit', () => {
    expect(container.resources.requests).toEqual({ cpu: '100m', memory: '128Mi' });
    expect(container.resources.limits.memory).toBe('512Mi');
  });

  it('matches the Dockerfile: multi-stage, Node 22, non-root user = runAsUser, the agent bundled from functions/agent', () => {
    const dockerfile = readFileSync(join(K8sDir, 'Dockerfile'), 'utf8');
    const froms = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/ARG NODE_VERSION=22\n/);
    expect(froms.at(-1)).toMatch(/distroless\/nodejs\$\{NODE_VERSION\}-debian12:nonroot/);
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const user = finalStage.match(/^USER (\d+):(\d+)$/m);
    expect(user?.[1]).toBe(String(container.securityContext.runAsUser));
    expect(user?.[2]).toBe(String(container.securityContext.runAsGroup));
    expect(finalStage).not.toMatch(/^USER (root|0)\b/m);
    expect(dockerfile).toMatch(/npx esbuild functions\/agent\/main\.ts/);
  });

  it('pins every base image by digest and runs no dependency install script in the build stage', () => {
    const dockerfile = readFileSync(join(K8sDir, 'Dockerfile'), 'utf8');
    const args = Object.fromEntries([...dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    const froms = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    for (const from of froms) {
      const image = from.split(/\s+/).find((w) => w.includes('/') || w.includes(':'))!;
      const digest = image.split('@')[1]?.replace(/^\$\{(\w+)\}$/, (_, name: string) => args[name] ?? '');
      expect(digest, from).toMatch(/^sha256:[0-9a-f]{64}$/);
    }
    const installs = dockerfile.split('\n').filter((l) => /\bnpm (ci|install)\b/.test(l));
    expect(installs.length).toBeGreaterThan(0);
    for (const l of installs) expect(l).toContain('--ignore-scripts');
  });

  it('deploys a real release tag set by kustomize (package.json version), never latest', () => {
    const version = JSON.parse(readFileSync(join(RepoRoot, 'package.json'), 'utf8')).version as string;
    const image = kustomization.images.find((i: Obj) => i.name === 'nodefleet-agent');
    expect(image.newTag).toBe(version);
    expect(image.newTag).not.toBe('latest');
    expect(container.image).toBe('nodefleet-agent');
  });
});

describe('RBAC', () => {
  const noWildcards = (rules: Obj[]) => {
    for (const r of rules) for (const k of ['apiGroups', 'resources', 'verbs']) expect(r[k], JSON.stringify(r)).not.toContain('*');
  };

  it("gives the agent only its Reflectors' list/watch on pods, nodes and NodeClaims", () => {
    const role = one('ClusterRole', 'nodefleet-agent');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['list', 'watch'] },
      { apiGroups: ['karpenter.sh'], resources: ['nodeclaims'], verbs: ['list', 'watch'] },
    ]);
    const granted = flatten(
      role.rules.flatMap((r: Obj) =>
        r.apiGroups.flatMap((g: string) => r.resources.flatMap((res: string) => r.verbs.map((verb: string) => ({ apiGroup: g, resource: res, verb })))),
      ),
    );
    expect(granted).toEqual(flatten([...ReflectorRbac('pods'), ...ReflectorRbac('nodes'), ...ReflectorRbac('nodeclaims')]));
    const binding = one('ClusterRoleBinding', 'nodefleet-agent');
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'nodefleet-agent' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: AgentServiceAccount, namespace: AgentNamespace }]);
  });

  /** Every function with its entry and permissions: the registry's and the termination tasks (from the ASL). */
  const allFunctions = [
    ...Functions.map((f) => ({ name: f.name, entry: f.entry, permissions: f.permissions })),
    ...readTerminationDefinition(RepoRoot, TerminationAslPath)!.tasks.map((t) => ({
      name: `termination${t.name}`,
      entry: t.entry,
      permissions: TerminationTaskPermissions[t.name] ?? DefaultTerminationTaskPermissions,
    })),
  ];
  const flatten = (perms: RbacPermission[]) => [...new Set(perms.map((p) => `${p.apiGroup || 'core'}/${p.resource}: ${p.verb}`))].sort();

  it('gives each function its own group, bound to exactly the verbs its code uses (derived from the source)', () => {
    const groups: string[] = [];
    for (const f of allFunctions) {
      const calls = portCalls(f.entry).filter((c) => c.startsWith('kube.'));
      const needed = flatten(
        calls.flatMap((c) => {
          const [method, arg] = c.slice('kube.'.length).split(':');
          const table = (KubeApiRbac as Record<string, unknown>)[method];
          expect(table, `${f.name}: ${c} has no RBAC entry in shared/kube/kube-api.ts KubeApiRbac`).toBeDefined();
          const perms = method === 'listObjects' ? (table as Record<string, RbacPermission[]>)[arg] : (table as RbacPermission[]);
          expect(perms, `${f.name}: ${c} has no RBAC entry`).toBeDefined();
          return perms;
        }),
      );
      if (calls.length === 0) {
        expect(f.permissions, `${f.name} calls no Kubernetes API: no EKS access`).not.toContain('kube');
        continue;
      }
      expect(f.permissions, `${f.name} calls Kubernetes`).toContain('kube');
      const group = kubernetesGroupOf(f.name);
      groups.push(group);
      const binding = one('ClusterRoleBinding', group);
      expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }]);
      expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: group });
      const role = one('ClusterRole', group);
      noWildcards(role.rules);
      const granted = flatten(
        role.rules.flatMap((r: Obj) =>
          r.apiGroups.flatMap((g: string) => r.resources.flatMap((res: string) => r.verbs.map((verb: string) => ({ apiGroup: g, resource: res, verb })))),
        ),
      );
      expect(granted, `${group}: granted vs used by ${f.entry}`).toEqual(needed);
    }
    // No group for a function that does not exist, and none shared.
    const bound = byKind('ClusterRoleBinding')
      .map((b) => b.metadata.name)
      .filter((n) => n !== 'nodefleet-agent');
    expect(bound.sort()).toEqual([...groups].sort());
  });

  it('a provisioner can neither delete nor patch nodes, nor evict or delete pods', () => {
    const rules = one('ClusterRole', kubernetesGroupOf('provisioner')).rules as Obj[];
    const verbs = rules.flatMap((r) => r.resources.flatMap((res: string) => r.verbs.map((v: string) => `${res}:${v}`)));
    for (const forbidden of ['nodes:delete', 'nodes:patch', 'pods:delete', 'pods/eviction:create']) expect(verbs).not.toContain(forbidden);
  });

  it('has no Role/ClusterRole with a wildcard and no binding to cluster-admin', () => {
    for (const r of [...byKind('ClusterRole'), ...byKind('Role')]) noWildcards(r.rules);
    for (const b of [...byKind('ClusterRoleBinding'), ...byKind('RoleBinding')]) expect(b.roleRef.name).not.toBe('cluster-admin');
  });
});

// ---- CRDs -------------------------------------------------------------------------------------

const crd = (file: string) => load(join(K8sDir, 'crds', file))[0];
const crds = { NodePool: crd('karpenter.sh_nodepools.yaml'), EC2NodeClass: crd('karpenter.k8s.aws_ec2nodeclasses.yaml') };
const schemaOf = (c: Obj) => c.spec.versions[0].schema.openAPIV3Schema;

/** Every node is structural: a type, or int-or-string / preserve-unknown-fields. */
function structuralProblems(node: Obj, path: string, out: string[] = []): string[] {
  if (!node.type && !node['x-kubernetes-int-or-string'] && !node['x-kubernetes-preserve-unknown-fields']) out.push(`${path}: no type`);
  for (const [k, v] of Object.entries<Obj>(node.properties ?? {})) structuralProblems(v, `${path}.${k}`, out);
  if (node.items) structuralProblems(node.items, `${path}[]`, out);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') structuralProblems(node.additionalProperties, `${path}{}`, out);
  return out;
}

/** Field names that the zod JSON schema declares but the CRD does not (or the reverse), and enum mismatches. */
function fieldDifferences(zod: Obj, crdNode: Obj, path: string, out: string[] = []): string[] {
  if (zod.anyOf && !zod.properties) zod = zod.anyOf.find((x: Obj) => x.properties || x.items) ?? zod;
  if (zod.properties) {
    const a = Object.keys(zod.properties).sort();
    const b = Object.keys(crdNode.properties ?? {}).sort();
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path}: zod [${a}] vs CRD [${b}]`);
    for (const k of a) if (crdNode.properties?.[k]) fieldDifferences(zod.properties[k], crdNode.properties[k], `${path}.${k}`, out);
  }
  if (zod.items && crdNode.items) fieldDifferences(zod.items, crdNode.items, `${path}[]`, out);
  if (zod.enum && crdNode.enum && JSON.stringify([...zod.enum].sort()) !== JSON.stringify([...crdNode.enum].sort())) out.push(`${path}: enum`);
  return out;
}

/** A small OpenAPI v3 structural validator: type, enum, required, pattern, min/max, items, additionalProperties. */
function validate(node: Obj, value: unknown, path: string, out: string[] = []): string[] {
  if (value === undefined) return out;
  // ObjectMeta is validated by the API server itself, not by the CRD schema.
  if (path === '.metadata') return out;
  if (node['x-kubernetes-preserve-unknown-fields'] && !node.properties) return out;
  const t = node['x-kubernetes-int-or-string'] ? (typeof value === 'number' ? 'integer' : 'string') : node.type;
  const actual = Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
  if (t && !(actual === t || (t === 'number' && actual === 'integer'))) return [...out, `${path}: ${actual}, want ${t}`];
  if (node.enum && !node.enum.includes(value)) out.push(`${path}: ${String(value)} not in enum`);
  if (node.pattern && typeof value === 'string' && !new RegExp(node.pattern).test(value)) out.push(`${path}: '${value}' !~ ${node.pattern}`);
  if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum) out.push(`${path}: < minimum`);
    if (node.maximum !== undefined && value > node.maximum) out.push(`${path}: > maximum`);
  }
  if (Array.isArray(value)) {
    if (node.maxItems !== undefined && value.length > node.maxItems) out.push(`${path}: too many items`);
    if (node.minItems !== undefined && value.length < node.minItems) out.push(`${path}: too few items`);
    value.forEach((v, i) => validate(node.items, v, `${path}[${i}]`, out));
  } else if (value && typeof value === 'object' && t === 'object') {
    const o = value as Obj;
    for (const r of node.required ?? []) if (!(r in o)) out.push(`${path}.${r}: required`);
    for (const [k, v] of Object.entries(o)) {
      const sub = node.properties?.[k] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
      if (!sub) {
        if (!node['x-kubernetes-preserve-unknown-fields']) out.push(`${path}.${k}: unknown field`);
        continue;
      }
      validate(sub, v, `${path}.${k}`, out);
    }
  }
  return out;
}

describe('CRDs', () => {
  it("NodeClaim: Karpenter's printer columns and status subresource; every mirror the writer puts is valid against it", () => {
    const c = crd('karpenter.sh_nodeclaims.yaml');
    expect(c.metadata.name).toBe('nodeclaims.karpenter.sh');
    expect(c.spec).toMatchObject({ group: 'karpenter.sh', scope: 'Cluster', names: { kind: 'NodeClaim', plural: 'nodeclaims' } });
    expect(c.spec.versions[0].subresources).toEqual({ status: {} });
    expect(c.spec.versions[0].additionalPrinterColumns.map((p: Obj) => `${p.name}${p.priority ? '*' : ''}`)).toEqual([
      'Type',
      'Capacity',
      'Zone',
      'Node',
      'Ready',
      'Age',
      'ImageID*',
      'ID*',
      'NodePool*',
      'NodeClass*',
      'Drifted*',
    ]);
    expect(structuralProblems(schemaOf(c), 'NodeClaim')).toEqual([]);
    const launched = setCondition(
      setCondition(
        nodeClaim({
          name: 'default-x',
          instanceId: 'i-1',
          providerId: 'aws:///z/i-1',
          instanceType: 'm5.large',
          zone: 'z',
          capacityType: 'spot',
          nodeName: 'n',
          imageId: 'ami-1',
          capacity: { cpu: '2', memory: '8Gi' },
          expireAt: '2026-01-31T00:00:00.000Z',
          taints: [{ key: 'a', effect: 'NoSchedule' }],
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot'] }],
          resources: { requests: { cpu: '1500m' } },
        }),
        'Launched',
        'True',
        '2026-01-01T00:00:10.000Z',
      ),
      'Drifted',
      'True',
      '2026-01-02T00:00:00.000Z',
      'NodePoolDrifted',
    );
    const { put } = planNodeClaimObjects([launched], [], { cluster: 'test', nodeClassGroup: 'nodefleet.io' });
    expect(put).toHaveLength(1);
    expect(validate(schemaOf(c), put[0], '')).toEqual([]);
  });

  it("nodefleet.io EC2NodeClass (beside Karpenter): Karpenter's schema exactly, only the group and names differ", () => {
    const own = load(join(K8sDir, 'nodefleet.io_ec2nodeclasses.yaml'))[0];
    expect(own.metadata.name).toBe('ec2nodeclasses.nodefleet.io');
    expect(own.spec.group).toBe('nodefleet.io');
    expect(own.spec.names).toMatchObject({ kind: 'EC2NodeClass', plural: 'ec2nodeclasses' });
    expect(own.spec.versions).toEqual(crds.EC2NodeClass.spec.versions);
    expect(load(join(K8sDir, 'kustomization.yaml'))[0].resources).toContain('nodefleet.io_ec2nodeclasses.yaml');
  });

  it.each([
    ['NodePool', 'karpenter.sh', 'nodepools'],
    ['EC2NodeClass', 'karpenter.k8s.aws', 'ec2nodeclasses'],
  ] as const)('%s: v1, cluster-scoped, named <plural>.<group>, with a structural schema', (kind, group, plural) => {
    const c = crds[kind];
    expect(c.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(c.metadata.name).toBe(`${plural}.${group}`);
    expect(c.spec).toMatchObject({ group, scope: 'Cluster', names: { kind, plural } });
    expect(c.spec.versions.map((v: Obj) => [v.name, v.served, v.storage])).toEqual([['v1', true, true]]);
    expect(structuralProblems(schemaOf(c), kind)).toEqual([]);
  });

  it.each([
    ['NodePool', NodePoolSchema],
    ['EC2NodeClass', EC2NodeClassSchema],
  ] as const)('%s: declares exactly the fields of shared/api/nodepool.ts', (kind, schema) => {
    const zodJson = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Obj;
    expect(fieldDifferences(zodJson.properties.spec, schemaOf(crds[kind]).properties.spec, `${kind}.spec`)).toEqual([]);
  });

  it("NodePool: label values, requirement keys and values, taint keys and values carry the patterns of the runtime rule (shared/api/nodepool.ts; Karpenter's CRD patterns)", () => {
    const t = schemaOf(crds.NodePool).properties.spec.properties.template.properties;
    const req = t.spec.properties.requirements.items.properties;
    const found = {
      labelValue: t.metadata.properties.labels.additionalProperties,
      requirementKey: req.key,
      requirementValue: req.values.items,
      ...Object.fromEntries(['taints', 'startupTaints'].flatMap((f) => ['key', 'value'].map((k) => [`${f}.${k}`, t.spec.properties[f].items.properties[k]]))),
    } as Record<string, Obj>;
    expect(Object.fromEntries(Object.entries(found).map(([k, v]) => [k, v.pattern]))).toEqual({
      labelValue: LabelValuePattern.source,
      requirementKey: QualifiedNamePattern.source,
      requirementValue: LabelValuePattern.source,
      'taints.key': QualifiedNamePattern.source,
      'taints.value': QualifiedNamePattern.source,
      'startupTaints.key': QualifiedNamePattern.source,
      'startupTaints.value': QualifiedNamePattern.source,
    });
    expect([found.labelValue.maxLength, found.requirementValue.maxLength]).toEqual([63, 63]);
  });

  it('EC2NodeClass: carries exactly the CEL rules nodefleet validate evaluates (shared/api/crd-rules.ts)', () => {
    const found: string[] = [];
    const walk = (node: Obj, path: string[]) => {
      for (const v of node['x-kubernetes-validations'] ?? []) found.push(`${path.join('.')} ${v.fieldPath ?? ''} ${v.rule} -- ${v.message}`);
      for (const [k, x] of Object.entries<Obj>(node.properties ?? {})) walk(x, [...path, k]);
      if (node.items) walk(node.items, [...path, '*']);
      if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, [...path, '*']);
    };
    walk(schemaOf(crds.EC2NodeClass).properties.spec, ['spec']);
    const expected = EC2NodeClassRules.map((r) => `${r.path.join('.')} ${r.field ? `.${r.field}` : ''} ${r.rule} -- ${r.message}`);
    expect(found.sort()).toEqual(expected.sort());
  });

  it('accepts the example NodePool and EC2NodeClass, which shared/api/nodepool.ts also accepts', () => {
    const [pool, nodeClass] = load(join(K8sDir, 'examples/default-nodepool.yaml'));
    expect(NodePoolSchema.safeParse(pool).success).toBe(true);
    expect(EC2NodeClassSchema.safeParse(nodeClass).success).toBe(true);
    expect(validate(schemaOf(crds.NodePool), pool, '')).toEqual([]);
    expect(validate(schemaOf(crds.EC2NodeClass), nodeClass, '')).toEqual([]);
  });

  it('rejects what the API server would: a bad operator, a missing nodeClassRef, an out-of-range weight', () => {
    const [pool] = load(join(K8sDir, 'examples/default-nodepool.yaml'));
    const bad = structuredClone(pool);
    bad.spec.template.spec.requirements[0].operator = 'Equals';
    delete bad.spec.template.spec.nodeClassRef;
    bad.spec.weight = 101;
    expect(validate(schemaOf(crds.NodePool), bad, '').sort()).toEqual([
      '.spec.template.spec.nodeClassRef: required',
      '.spec.template.spec.requirements[0].operator: Equals not in enum',
      '.spec.weight: > maximum',
    ]);
  });
});
