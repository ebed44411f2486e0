/**
 * MIME multi-part documents (RFC 2045 / 2046) as EC2 user data uses them: cloud-init and nodeadm
 * read each part by its Content-Type. Only what user data needs: a top-level header block whose
 * Content-Type is `multipart/*` with a `boundary`, parts opened by `--boundary` lines and the
 * document closed by `--boundary--` (the line break before a delimiter belongs to it). Pure.
 */

/** One part: its header lines as given (name, value) and its body. */
export interface MimePart {
  headers: [name: string, value: string][];
  body: string;
}

/** Whether text is meant as a MIME document (how KA bootstrap/nodeadm.go decides: it starts with one of these headers). */
export function looksLikeMime(text: string): boolean {
  const t = text.trimStart();
  return /^MIME-Version:/i.test(t) || /^Content-Type:/i.test(t);
}

/** A header block (continuation lines folded); `undefined` plus the bad line when a line is no header. */
function headerLines(lines: readonly string[]): { headers: [string, string][] } | { bad: string } {
  const headers: [string, string][] = [];
  for (const line of lines) {
    const last = headers[headers.length - 1];
    if (/^[ \t]/.test(line) && last) {
      last[1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) return { bad: line };
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return { headers };
}

/** The value of header `name` (case-insensitive), if present. */
export function headerValue(headers: readonly [string, string][], name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
}

const show = (s: string) => JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);

/**
 * The parts of a MIME multi-part document.
 * @returns the parts, or `problem`: why the text is not one (a sentence naming what is wrong).
 */
export function parseMultipart(text: string): { parts: MimePart[] } | { problem: string } {
  const lines = text
    .replace(/^\s+/, '')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''));
  const blank = lines.findIndex((l) => l === '');
  const head = headerLines(lines.slice(0, blank < 0 ? lines.length : blank));
  if ('bad' in head) return { problem: `MIME header line ${show(head.bad)} is not "Name: value"` };
  const contentType = headerValue(head.headers, 'Content-Type');
  if (!contentType) return { problem: 'MIME document has no Content-Type header' };
  if (!/^multipart\//i.test(contentType)) return { problem: `MIME Content-Type ${show(contentType)} is not multipart/*` };
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return { problem: `MIME Content-Type ${show(contentType)} has no boundary parameter` };
  const parts: MimePart[] = [];
  let current: string[] | undefined;
  const close = (): string | undefined => {
    if (!current) return undefined;
    const end = current.findIndex((l) => l === '');
    const h = headerLines(current.slice(0, end < 0 ? current.length : end));
    if ('bad' in h) return `MIME part ${parts.length + 1}: header line ${show(h.bad)} is not "Name: value"`;
    parts.push({ headers: h.headers, body: end < 0 ? '' : current.slice(end + 1).join('\n') });
    return undefined;
  };
  for (const line of blank < 0 ? [] : lines.slice(blank + 1)) {
    const trimmed = line.replace(/[ \t]+$/, '');
    if (trimmed === `--${boundary}--`) {
      const problem = close();
      if (problem) return { problem };
      if (parts.length === 0) return { problem: 'MIME document has no parts' };
      return { parts };
    }
    if (trimmed === `--${boundary}`) {
      const problem = close();
      if (problem) return { problem };
      current = [];
      continue;
    }
    current?.push(line);
  }
  return { problem: `MIME document is not closed: no "--${boundary}--" line` };
}

/**
 * Serializes parts as one multipart/mixed document (LF line breaks). The boundary is `//`, or the
 * first `//<n>` that no part contains, so a part can never end the document early. Deterministic.
 */
export function serializeMultipart(parts: readonly MimePart[]): string {
  let boundary = '//';
  for (let n = 1; parts.some((p) => p.body.includes(`--${boundary}`) || p.headers.some(([, v]) => v.includes(`--${boundary}`))); n++) boundary = `//${n}`;
  return [
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    ...parts.map((p) => [`--${boundary}`, ...p.headers.map(([n, v]) => `${n}: ${v}`), '', p.body].join('\n')),
    `--${boundary}--`,
    '',
  ].join('\n');
}
