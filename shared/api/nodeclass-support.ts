/**
 * What nodefleet honours of an EC2NodeClass, in one place: `nodefleet validate`
 * (shared/api/validate.ts) and the launch path (shared/aws/ec2.ts, shared/aws/user-data.ts) both
 * read these rules, so a class validate accepts is one the launch honours.
 */
import { parseDocument } from 'yaml';
import { looksLikeMime, parseMultipart, type MimePart } from './mime.ts';
import { bottlerocketUserDataProblem } from './bottlerocket-settings.ts';

/** Content-Type of a nodeadm NodeConfig part (KA bootstrap/mime `ContentTypeNodeConfig`). */
export const NodeConfigContentType = 'application/node.eks.aws';
/** Content-Type of a shell script part (KA bootstrap/mime `ContentTypeShellScript`). */
export const ShellScriptContentType = 'text/x-shellscript; charset="us-ascii"';

/**
 * The parts an AL2023 `spec.userData` contributes, before nodefleet's NodeConfig part (as KA
 * bootstrap/nodeadm.go `parseUserData` reads it): a MIME multi-part document keeps its parts as
 * they are; otherwise the text is one part, a shell script when it starts with `#!` or is not a
 * YAML mapping, else a NodeConfig.
 * @returns the parts, or `problem` (one sentence) when a MIME document cannot be read.
 */
export function al2023UserDataParts(userData: string | undefined): { parts: MimePart[] } | { problem: string } {
  const text = userData?.trim();
  if (!text) return { parts: [] };
  if (looksLikeMime(text)) return parseMultipart(text);
  const doc = text.startsWith('#!') ? undefined : parseDocument(text);
  const mapping = doc !== undefined && doc.errors.length === 0 && doc.contents !== null && typeof doc.toJS() === 'object' && !Array.isArray(doc.toJS());
  return { parts: [{ headers: [['Content-Type', mapping ? NodeConfigContentType : ShellScriptContentType]], body: text }] };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why an AL2023 `spec.userData` cannot be read, or undefined. */
function al2023UserDataProblem(userData: string): string | undefined {
  const parts = al2023UserDataParts(userData);
  return 'problem' in parts ? parts.problem : undefined;
}

/**
 * The AMI families nodefleet launches, with their user data: AL2023 (nodeadm NodeConfig,
 * shared/aws/user-data.ts), Bottlerocket (settings TOML, shared/aws/bottlerocket.ts) and Windows
 * (the EKS bootstrap PowerShell script, shared/aws/windows.ts).
 */
export const SupportedAmiFamilies = ['AL2023', 'Bottlerocket', 'Windows2019', 'Windows2022', 'Windows2025'] as const;
export type SupportedAmiFamily = (typeof SupportedAmiFamilies)[number];
const Unsupported =
  'nodefleet launches AL2023, Bottlerocket and Windows nodes only (nodeadm, Bottlerocket TOML or EKS bootstrap PowerShell user data), so such a node could not join';

/** AMI families as EC2NodeClass names them (`spec.amiFamily`, or inferred from an `alias` term). */
export const AmiFamilies = ['AL2', 'AL2023', 'Bottlerocket', 'Windows2019', 'Windows2022', 'Windows2025', 'Custom'] as const;
export type AmiFamily = (typeof AmiFamilies)[number];

/**
 * The AMI family of a spec (raw or parsed) as Karpenter picks it: `amiFamily`, else the alias
 * term's family (`bottlerocket@latest` → Bottlerocket), else AL2023.
 */
export function amiFamilyOfSpec(spec: unknown): AmiFamily {
  if (!isRecord(spec)) return 'AL2023';
  const set = AmiFamilies.find((f) => f === spec.amiFamily);
  if (set) return set;
  const alias = Array.isArray(spec.amiSelectorTerms) ? spec.amiSelectorTerms.find((t) => isRecord(t) && typeof t.alias === 'string')?.alias : undefined;
  const family = typeof alias === 'string' ? (alias.split('@')[0] ?? '').toLowerCase() : '';
  return AmiFamilies.find((f) => f !== 'Custom' && f.toLowerCase() === family) ?? 'AL2023';
}

/** The family an alias names when nodefleet launches it (`bottlerocket@latest` → Bottlerocket), else undefined. */
export function aliasFamily(alias: string): SupportedAmiFamily | undefined {
  const family = (alias.split('@')[0] ?? '').toLowerCase();
  return SupportedAmiFamilies.find((f) => f.toLowerCase() === family);
}

/**
 * EC2NodeClass fields nodefleet accepts in the schema (a Karpenter user's YAML reads) but does not
 * honour, with why: a class that sets one is refused, never launched without it. Fields honoured
 * are listed in docs/nodeclass-fields.md.
 */
export const UnsupportedNodeClassFields: Readonly<Record<string, string>> = {
  ipPrefixCount: 'no IPv4 prefixes are assigned to the node interface',
  networkInterfaces: 'only the default primary interface is launched (no EFA or multi-card interfaces)',
  placementGroupSelector: 'instances are not launched into placement groups',
  context: 'CreateFleet is sent without a context',
  connectionTracking: 'no connection tracking timeouts are set on the interfaces',
  cpuOptions: 'no CPU options are set (nested virtualization)',
};

/** Why an `amiSelectorTerms` alias is refused (its family is neither al2023 nor bottlerocket), or undefined. */
export function aliasRefusal(alias: string): string | undefined {
  return aliasFamily(alias)
    ? undefined
    : `${JSON.stringify(alias)} is not supported by nodefleet: ${Unsupported}; use al2023@latest, bottlerocket@latest (or a pinned version of either) or windows2022@latest`;
}

/**
 * What nodefleet refuses in an EC2NodeClass spec (raw YAML or parsed): one line per field,
 * `<field path>: <value or field> is not supported by nodefleet: <why>; <what to do>`, or `spec.userData: <why
 * it cannot be read>`. Empty when every field set is honoured. `nodefleet validate` prints these;
 * the provisioner reports the first as the class's not-ready reason and the launch refuses it.
 */
export function nodeClassRefusals(spec: unknown): string[] {
  if (!isRecord(spec)) return [];
  const out: string[] = [];
  if (spec.amiFamily !== undefined && !SupportedAmiFamilies.some((f) => f === spec.amiFamily)) {
    out.push(
      `spec.amiFamily: ${JSON.stringify(spec.amiFamily)} is not supported by nodefleet: ${Unsupported}; set amiFamily: AL2023, Bottlerocket or Windows2019/2022/2025, or use an al2023@, bottlerocket@ or windows20xx@ alias`,
    );
  }
  if (Array.isArray(spec.amiSelectorTerms)) {
    spec.amiSelectorTerms.forEach((t, i) => {
      const why = isRecord(t) && typeof t.alias === 'string' ? aliasRefusal(t.alias) : undefined;
      if (why) out.push(`spec.amiSelectorTerms[${i}].alias: ${why}`);
    });
  }
  for (const [field, why] of Object.entries(UnsupportedNodeClassFields)) {
    if (spec[field] !== undefined) out.push(`spec.${field}: not supported by nodefleet: ${why}; remove spec.${field}`);
  }
  if (spec.instanceStorePolicy === 'RAID0' && amiFamilyOfSpec(spec).startsWith('Windows')) {
    out.push(
      'spec.instanceStorePolicy: RAID0 is not supported by nodefleet for Windows: the Windows bootstrap does not assemble the instance store, so the node would not have the storage the catalog counts; remove spec.instanceStorePolicy',
    );
  }
  if (typeof spec.userData === 'string') {
    const family = amiFamilyOfSpec(spec);
    const problem =
      family === 'Bottlerocket' ? bottlerocketUserDataProblem(spec.userData) : family === 'AL2023' ? al2023UserDataProblem(spec.userData) : undefined;
    if (problem) out.push(`spec.userData: ${problem}`);
  }
  return out;
}

/** The one-line reason an EC2NodeClass is not ready (launches nothing), or undefined when it is. */
export function nodeClassNotReady(nodeClass: { metadata: { name: string }; spec: unknown }): string | undefined {
  const refusals = nodeClassRefusals(nodeClass.spec);
  if (refusals.length === 0) return undefined;
  return `ec2nodeclass ${nodeClass.metadata.name} is not ready: ${refusals[0]}${refusals.length > 1 ? ` (and ${refusals.length - 1} more; nodefleet validate lists them)` : ''}`;
}

/**
 * The not-ready EC2NodeClasses among `nodeClasses` (name → reason) and, for `solve`'s
 * `nodePoolNotReady`, the reason of a NodePool whose class is one of them. `unresolved`: class name
 * → why its selector terms resolve to nothing launchable (no subnet, security group or image:
 * Karpenter's SubnetsReady / SecurityGroupsReady / AMIsReady False); a refused field is named first.
 */
export function nodeClassReadiness(
  nodeClasses: Iterable<{ metadata: { name: string }; spec: unknown }>,
  unresolved?: ReadonlyMap<string, string>,
): {
  notReady: Map<string, string>;
  nodePoolNotReady: (nodePool: { spec: { template: { spec: { nodeClassRef: { name: string } } } } }) => string | undefined;
} {
  const notReady = new Map<string, string>();
  for (const c of nodeClasses) {
    const reason = nodeClassNotReady(c);
    if (reason) notReady.set(c.metadata.name, reason);
  }
  for (const [name, problem] of unresolved ?? []) if (!notReady.has(name)) notReady.set(name, `ec2nodeclass ${name} is not ready: ${problem}`);
  return { notReady, nodePoolNotReady: (np) => notReady.get(np.spec.template.spec.nodeClassRef.name) };
}
