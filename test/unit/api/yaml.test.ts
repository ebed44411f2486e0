import { describe, expect, it } from 'vitest';
import { parseYamlObjects } from '../../../shared/api/yaml.ts';

describe('parseYamlObjects', () => {
  it('splits documents, skips empty ones and unwraps Lists', () => {
    const r = parseYamlObjects('a: 1\n---\n---\nkind: List\nitems: [{b: 2}, {c: 3}]\n');
    expect(r.errors).toEqual([]);
    expect(r.objects).toEqual([
      { document: 1, object: { a: 1 } },
      { document: 3, item: 1, object: { b: 2 } },
      { document: 3, item: 2, object: { c: 3 } },
    ]);
  });

  it('reports syntax errors with line and column, keeping other documents', () => {
    const r = parseYamlObjects('a: 1\n---\nb: [1, 2\nc: 3\n');
    expect(r.objects).toEqual([{ document: 1, object: { a: 1 } }]);
    expect(r.errors[0]).toMatchObject({ document: 2, line: expect.any(Number) });
    expect(r.errors[0].line).toBeGreaterThanOrEqual(3);
  });

  it('rejects duplicate keys as kubectl does', () => {
    expect(parseYamlObjects('a: 1\na: 2\n').errors[0]).toMatchObject({ document: 1, line: 2 });
  });

  it('merges YAML merge keys as kubectl does, instead of keeping a key named <<', () => {
    const r = parseYamlObjects('base: &b {cpu: "1", memory: 1Gi}\nlimits:\n  <<: *b\n  memory: 2Gi\n');
    expect(r.errors).toEqual([]);
    expect(r.objects[0].object).toEqual({ base: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } });
  });
});
