/**
 * Test oracle: reads EC2 user data the way an AL2023 node does, independently of
 * shared/aws/user-data.ts. The MIME multi-part document is split per RFC 2046 (a `--boundary`
 * line opens a part, `--boundary--` closes the document, the line break before a delimiter
 * belongs to it); each part's headers end at the first empty line. `application/node.eks.aws`
 * parts are YAML NodeConfig objects (nodeadm, awslabs/amazon-eks-ami nodeadm/api/v1alpha1).
 */
import { parse } from 'yaml';

export interface MimePart {
  /** Header names lower-cased. */
  headers: Record<string, string>;
  body: string;
}

function headerBlock(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  let last: string | undefined;
  for (const line of lines) {
    if (/^[ \t]/.test(line) && last) {
      out[last] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`not a header line: ${JSON.stringify(line)}`);
    last = line.slice(0, colon).trim().toLowerCase();
    out[last] = line.slice(colon + 1).trim();
  }
  return out;
}

/** Splits `text` at its first empty line: headers, then the rest. */
function splitHead(text: string): { headers: Record<string, string>; rest: string } {
  const m = /\r?\n\r?\n/.exec(text);
  if (!m) return { headers: headerBlock(text.split(/\r?\n/).filter(Boolean)), rest: '' };
  return { headers: headerBlock(text.slice(0, m.index).split(/\r?\n/)), rest: text.slice(m.index + m[0].length) };
}

/** The `boundary` parameter of a multipart Content-Type. */
function boundaryOf(contentType: string): string {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!/^multipart\//i.test(contentType) || !m) throw new Error(`not a multipart Content-Type: ${contentType}`);
  return m[1] ?? m[2];
}

/** The parts of a MIME multi-part document (throws when it is not one, or is not closed). */
export function mimeParts(userData: string): { headers: Record<string, string>; parts: MimePart[] } {
  const { headers, rest } = splitHead(userData);
  const boundary = boundaryOf(headers['content-type'] ?? '');
  const lines = rest.split('\n').map((l) => l.replace(/\r$/, ''));
  const parts: MimePart[] = [];
  let current: string[] | undefined;
  let closed = false;
  for (const line of lines) {
    const trimmed = line.replace(/[ \t]+$/, '');
    if (trimmed === `--${boundary}` || trimmed === `--${boundary}--`) {
      if (current) {
        const { headers: h, rest: body } = splitHead(current.join('\n'));
        parts.push({ headers: h, body });
      }
      if (trimmed === `--${boundary}--`) {
        closed = true;
        break;
      }
      current = [];
      continue;
    }
    current?.push(line);
  }
  if (!closed) throw new Error('multipart document has no closing delimiter');
  return { headers, parts };
}

/** Keys nodeadm's NodeConfig v1alpha1 declares, per object path (its decoder drops any other key silently). */
const NodeConfigKeys: Record<string, string[]> = {
  '': ['apiVersion', 'kind', 'metadata', 'spec'],
  spec: ['cluster', 'containerd', 'instance', 'kubelet', 'featureGates'],
  'spec.cluster': ['name', 'apiServerEndpoint', 'certificateAuthority', 'cidr', 'enableOutpost', 'id'],
  'spec.kubelet': ['config', 'flags', 'maxPodsExpression'],
  'spec.instance': ['localStorage', 'environment', 'network'],
  'spec.instance.localStorage': ['strategy', 'mountPath', 'disabledMounts'],
};

/** Paths of keys nodeadm would not read (wrong level or misspelt). */
export function unreadNodeConfigKeys(config: unknown, path = ''): string[] {
  const allowed = NodeConfigKeys[path];
  if (!allowed || typeof config !== 'object' || config === null || Array.isArray(config)) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(config)) {
    const p = path ? `${path}.${k}` : k;
    if (!allowed.includes(k)) out.push(p);
    else out.push(...unreadNodeConfigKeys(v, p));
  }
  return out;
}

export interface NodeConfig {
  apiVersion?: string;
  kind?: string;
  spec?: {
    cluster?: Record<string, unknown>;
    kubelet?: { config?: Record<string, unknown> | null; flags?: string[] };
    instance?: { localStorage?: { strategy?: string } };
  };
}

/** User data as the node reads it: the MIME parts and, parsed, the NodeConfig of each `application/node.eks.aws` part. */
export function readUserData(userData: string): { parts: MimePart[]; nodeConfigs: NodeConfig[] } {
  const { parts } = mimeParts(userData);
  const nodeConfigs = parts
    .filter((p) => (p.headers['content-type'] ?? '').split(';')[0].trim() === 'application/node.eks.aws')
    .map((p) => parse(p.body) as NodeConfig);
  return { parts, nodeConfigs };
}

/** The base64 `UserData` of a launch template, read as the node reads it. */
export function readLaunchTemplateUserData(base64: string): ReturnType<typeof readUserData> {
  return readUserData(Buffer.from(base64, 'base64').toString('utf8'));
}
