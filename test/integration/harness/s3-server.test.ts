/**
 * The s3rver of test/helpers/s3-server.ts as the scale-out suites share it: one server per
 * worker process, a fresh bucket per suite, buckets isolated from each other, and a server of
 * one's own that close() really stops (the S3-down fault tests rely on that).
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
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
});
