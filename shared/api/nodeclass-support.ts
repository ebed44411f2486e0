/**
 * What nodefleet honours of an EC2NodeClass, in one place: `nodefleet validate`
 * (shared/api/validate.ts) and the launch path (shared/aws/ec2.ts, shared/aws/user-data.ts) both
 * read these rules, so a class validate accepts is one the launch honours.
 */
import { parseDocument } from 'yaml';
import { looksLikeMime, parseMultipart, type MimePart } from './mime.ts';

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
