/**
 * The s3rver of test/helpers/s3-server.ts as the scale-out suites share it: one server per
 * worker process, a fresh bucket per suite, buckets isolated from each other, and a server of
 * one's own that close() really stops (the S3-down fault tests rely on that), and listings past
 * S3's page of 1,000 keys (s3rver's continuation token needs OpenSSL's legacy provider, which
 * the helper's child process has).
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { freshS3Bucket, s3rverClient, sharedS3Server, startS3Server } from '../../helpers/s3-server.js';

describe('the shared s3rver and its buckets', () => {
  it('is one server per process, and each suite gets an empty bucket of its own', async () => {
    const [first, second] = await Promise.all([sharedS3Server(), sharedS3Server()]);
    expect(first).toBe(second);
    const one = await freshS3Bucket();
    const two = await freshS3Bucket();
    expect(one.endpoint).toBe(first!.endpoint);
    expect(one.bucket).not.toBe(two.bucket);

    const client = s3rverClient(one.endpoint);
    try {
      await client.send(new PutObjectCommand({ Bucket: one.bucket, Key: 'blobs/a', Body: 'hello' }));
      const inOne = await client.send(new ListObjectsV2Command({ Bucket: one.bucket }));
      const inTwo = await client.send(new ListObjectsV2Command({ Bucket: two.bucket }));
      expect(inOne.Contents?.map((o) => o.Key)).toEqual(['blobs/a']);
      expect(inTwo.Contents ?? []).toEqual([]);
      const got = await client.send(new GetObjectCommand({ Bucket: one.bucket, Key: 'blobs/a' }));
      expect(await got.Body?.transformToString()).toBe('hello');
    } finally {
      client.destroy();
    }
  });

  it('stops a server of its own on close, so requests to it fail', async () => {
    const own = await startS3Server();
    const bucket = await own.createBucket('harness-own');
    const client = s3rverClient(own.endpoint);
    try {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'v' }));
      await own.close();
      await expect(client.send(new ListObjectsV2Command({ Bucket: bucket }))).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      client.destroy();
    }
  });

  it('lists more than 1,000 objects page by page, by continuation token and by StartAfter, each key once', async () => {
    const { endpoint, bucket } = await freshS3Bucket();
    const client = s3rverClient(endpoint);
    try {
      const keys = Array.from({ length: 1_005 }, (_, i) => `many/${String(i).padStart(4, '0')}`);
      await putAll(client, bucket, keys);
      const byToken: string[] = [];
      const byStartAfter: string[] = [];
      let pages = 0;
      for (let token: string | undefined, more = true; more; pages += 1) {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'many/', ...(token ? { ContinuationToken: token } : {}) }));
        byToken.push(...(page.Contents ?? []).map((o) => o.Key as string));
        token = page.NextContinuationToken;
        more = page.IsTruncated === true;
        expect(pages).toBeLessThan(5);
      }
      for (let after: string | undefined, more = true; more; ) {
        const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'many/', MaxKeys: 400, ...(after ? { StartAfter: after } : {}) }));
        byStartAfter.push(...(page.Contents ?? []).map((o) => o.Key as string));
        after = byStartAfter.at(-1);
        more = page.IsTruncated === true;
        expect(byStartAfter.length).toBeLessThanOrEqual(keys.length);
      }
      expect(pages).toBe(2);
      expect(byToken).toEqual(keys);
      expect(byStartAfter).toEqual(keys);
    } finally {
      client.destroy();
    }
  });
});

/** PUTs an empty object at every key, a few at a time. */
async function putAll(client: S3Client, bucket: string, keys: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < keys.length) await client.send(new PutObjectCommand({ Bucket: bucket, Key: keys[next++], Body: Buffer.from('x') }));
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}
