import { describe, expect, it } from 'vitest';
import { parseMultipart, serializeMultipart } from '../../../shared/api/mime.ts';

describe('MIME multi-part (user data)', () => {
  it('reads CRLF documents, folded headers and the preamble; serializing the parts and reading them again gives the same parts', () => {
    const text =
      'MIME-Version: 1.0\r\nContent-Type: multipart/mixed;\r\n boundary=XYZ\r\n\r\npreamble\r\n--XYZ\r\nContent-Type: text/x-shellscript\r\n\r\necho a\r\n\r\n--XYZ \r\nContent-Type: text/cloud-config\r\n\r\n#cloud-config\r\n--XYZ--\r\nepilogue';
    const r = parseMultipart(text);
    expect(r).toEqual({
      parts: [
        { headers: [['Content-Type', 'text/x-shellscript']], body: 'echo a\n' },
        { headers: [['Content-Type', 'text/cloud-config']], body: '#cloud-config' },
      ],
    });
    if (!('parts' in r)) throw new Error('unreachable');
    expect(parseMultipart(serializeMultipart(r.parts))).toEqual(r);
  });

  it('picks a boundary no part contains', () => {
    const parts = [{ headers: [['Content-Type', 'text/x-shellscript']] as [string, string][], body: 'echo --//\necho --//1' }];
    const text = serializeMultipart(parts);
    expect(text).toContain('boundary="//2"');
    expect(parseMultipart(text)).toEqual({ parts });
  });

  it('says why a document is not one', () => {
    expect(parseMultipart('Content-Type: multipart/mixed\n\n--a\n')).toEqual({ problem: 'MIME Content-Type "multipart/mixed" has no boundary parameter' });
    expect(parseMultipart('MIME-Version: 1.0\n\n')).toEqual({ problem: 'MIME document has no Content-Type header' });
    expect(parseMultipart('Content-Type: multipart/mixed; boundary=a\n\n--a--\n')).toEqual({ problem: 'MIME document has no parts' });
  });
});
