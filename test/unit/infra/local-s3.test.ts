import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { startLocalS3, type LocalS3 } from '../../../infra/local/s3.ts';
import { createS3ClusterViewStore, type S3ClusterViewStore } from '../../../shared/aws/s3-cluster-view-store.ts';

const md5 = (b: Uint8Array) => `"${createHash('md5').update(b).digest('hex')}"`;

describe('local S3', () => {
  let s3: LocalS3;
  let store: S3ClusterViewStore;
  beforeAll(async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    s3 = await startLocalS3();
    store = createS3ClusterViewStore({ region: 'us-east-1', bucket: s3.bucket, cluster: 'atomic', endpoint: s3.endpoint });
  });
  afterAll(() => s3.stop());

  it("a PUT is atomic: a GET during it reads the old or the new body whole, under that body's ETag", async () => {
    // Arrange: bodies large enough that writing one takes many chunks.
    const bodies = [randomBytes(4 << 20), randomBytes(4 << 20), randomBytes(4 << 20)];
    await store.put(bodies[0]);
    const seen: { whole: boolean; etagMatches: boolean }[] = [];
    // Act: each round overwrites the object while reads run beside the write.
    for (let round = 1; round <= 6; round++) {
      const next = bodies[round % bodies.length];
      const reads = Array.from({ length: 6 }, () =>
        store.get().then(
          (r) => {
            const body = r && r !== 'unchanged' ? r.body : new Uint8Array();
            seen.push({ whole: bodies.some((b) => Buffer.compare(b, body) === 0), etagMatches: !!r && r !== 'unchanged' && r.etag === md5(body) });
          },
          () => seen.push({ whole: false, etagMatches: false }),
        ),
      );
      await Promise.all([store.put(next), ...reads]);
    }
    // Assess
    expect(seen).toHaveLength(36);
    expect(seen.filter((s) => !s.whole || !s.etagMatches)).toEqual([]);
  });
});
