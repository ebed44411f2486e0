/**
 * The EC2 query protocol, both directions, as much as the local EC2 server needs:
 * requests are `application/x-www-form-urlencoded` bodies (`Action=…&Version=2016-11-15&…`)
 * whose keys flatten nested structures with dots and 1-based list indexes
 * (`LaunchTemplateConfigs.1.Overrides.2.InstanceType`), responses are XML in the EC2 namespace
 * where lists are `<name><item>…</item></name>` and errors are
 * `<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>`.
 * Source: AWS "Query API requests" and "Error codes for the Amazon EC2 API" (EC2 API reference).
 */

/** XML namespace of EC2 API version 2016-11-15 responses. */
export const Ec2XmlNamespace = 'http://ec2.amazonaws.com/doc/2016-11-15/';

/** A parsed query value: a string, a list (from 1-based indexes) or a structure. */
export type QueryValue = string | QueryValue[] | { [k: string]: QueryValue };

/**
 * Parses a form-encoded EC2 query body into a nested structure: numeric segments become array
 * positions (1-based on the wire), other segments object keys.
 */
export function parseQueryBody(body: string): Record<string, QueryValue> {
  const root: Record<string, QueryValue> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.split('.');
    let node: any = root;
    for (let i = 0; i < parts.length; i++) {
      const seg = parts[i];
      const last = i === parts.length - 1;
      const idx = /^[0-9]+$/.test(seg) ? Number(seg) - 1 : undefined;
      const nextIsIndex = !last && /^[0-9]+$/.test(parts[i + 1]);
      const k: string | number = idx ?? seg;
      if (last) {
        node[k] = value;
      } else {
        if (node[k] === undefined || typeof node[k] === 'string') node[k] = nextIsIndex ? [] : {};
        node = node[k];
      }
    }
  }
  return root;
}

/** A list at `v` (missing → empty; holes from sparse indexes dropped). */
export function list(v: QueryValue | undefined): QueryValue[] {
  return Array.isArray(v) ? v.filter((x) => x !== undefined) : v === undefined ? [] : [v];
}

/** A string at `v` (undefined when absent or not a string). */
export function str(v: QueryValue | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** A structure at `v` (empty when absent). */
export function obj(v: QueryValue | undefined): Record<string, QueryValue> {
  return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
}

/** Filters from `Filter.N.Name` / `Filter.N.Value.M`. */
export function filtersOf(q: Record<string, QueryValue>): { name: string; values: string[] }[] {
  return list(q.Filter).map((f) => ({ name: str(obj(f).Name) ?? '', values: list(obj(f).Value).map((x) => str(x) ?? '') }));
}

/** Tags from `TagSpecification.N.Tag.M.Key/Value` for one resource type (or `Tag.M` directly). */
export function tagsOf(tagList: QueryValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of list(tagList)) {
    const k = str(obj(t).Key);
    if (k !== undefined) out[k] = str(obj(t).Value) ?? '';
  }
  return out;
}

/** An XML value: text, a list (rendered as `<item>`s), a structure, or absent. */
export type XmlValue = string | number | boolean | null | undefined | XmlValue[] | { [k: string]: XmlValue };

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Renders `value` as the content of an element (lists as `<item>` children). */
export function xmlContent(value: XmlValue): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => `<item>${xmlContent(v)}</item>`).join('');
  if (typeof value === 'object') {
    return Object.entries(value)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => `<${k}>${xmlContent(v)}</${k}>`)
      .join('');
  }
  return escapeXml(String(value));
}

/** A successful response document for `action`. */
export function xmlResponse(action: string, requestId: string, body: Record<string, XmlValue>): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${Ec2XmlNamespace}"><requestId>${requestId}</requestId>${xmlContent(body)}</${action}Response>`;
}

/** An error response document, as EC2 returns it with HTTP 4xx/5xx. */
export function xmlError(code: string, message: string, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`;
}
