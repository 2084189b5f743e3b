/**
 * kill -9 of driveway between the chunks of a Nextcloud chunked upload (bridge/uploads/): the
 * session and the chunks that arrived survive in the data directory (the session rows in the
 * store's database, the parts under <dataDir>/uploads), so after a restart the client lists what
 * arrived, sends the rest and assembles the file. The embedded default, a real process
 * (test/helpers/driveway-process.ts), stopped by its PID only. Then two instances over one
 * PostgreSQL database and one S3 bucket: the chunks go through either, the one that took the
 * first is killed, the other assembles; the parts lived in the bucket and are gone after.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { requirePostgres, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { postgresS3Env, s3rverClient, startS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const v1Name = (start: number, length: number): string => `${String(start).padStart(15, '0')}-${String(start + length - 1).padStart(15, '0')}`;

async function call(instance: DrivewayProcess, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<{ status: number; body: Buffer }> {
  const response = await fetch(`${instance.davUrl}${path}`, { method, headers: { authorization: ADMIN_BASIC, ...headers }, ...(body ? { body } : {}) });
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

describe('a chunked upload across a kill -9 of driveway', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-chunk-restart-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('resumes after the restart and assembles every byte', async () => {
    const env = { DRIVEWAY_LOG_LEVEL: 'warn' };
    const content = patternBytes(11, 3 * MiB + 777);
    const chunks = [0, MiB, 2 * MiB, 3 * MiB].map((start) => ({ start, bytes: content.subarray(start, Math.min(start + MiB, content.length)) }));
    const dir = '/remote.php/dav/uploads/admin/rclone-chunked-upload-restart';

    instance = await spawnDriveway({ dataDir: tmp.dir, env });
    expect((await call(instance, 'MKCOL', `${dir}/`)).status).toBe(201);
    for (const chunk of chunks.slice(0, 2)) expect((await call(instance, 'PUT', `${dir}/${v1Name(chunk.start, chunk.bytes.length)}`, {}, chunk.bytes)).status).toBe(201);
    instance.child.kill('SIGKILL');
    expect(await instance.exited).toBeNull();

    instance = await spawnDriveway({ dataDir: tmp.dir, env });
    const listed = await call(instance, 'PROPFIND', `${dir}/`, { depth: '1' });
    expect(listed.status).toBe(207);
    const names = parseMultistatus(listed.body.toString('utf8'))
      .map((r) => r.href)
      .filter((href) => !href.endsWith('/'));
    expect(names).toEqual(chunks.slice(0, 2).map((c) => `${dir}/${v1Name(c.start, c.bytes.length)}`));
    for (const chunk of chunks.slice(2)) expect((await call(instance, 'PUT', `${dir}/${v1Name(chunk.start, chunk.bytes.length)}`, {}, chunk.bytes)).status).toBe(201);
    const moved = await call(instance, 'MOVE', `${dir}/.file`, { destination: `${instance.davUrl}/remote.php/dav/files/admin/home/resumed.bin`, 'oc-total-length': String(content.length) });
    expect(moved.status).toBe(201);
    const got = await call(instance, 'GET', '/home/resumed.bin');
    expect(got.body.length).toBe(content.length);
    expect(sha(got.body)).toBe(sha(content));
  });
});

const postgres = requirePostgres();

postgres.describe('a chunked upload across two instances over PostgreSQL + S3, one killed with -9 between chunks', () => {
  let cluster: TestPostgres | undefined;
  let s3: TestS3Server | undefined;
  let tmp: ReturnType<typeof makeTmpDir> | undefined;
  let a: DrivewayProcess | undefined;
  let b: DrivewayProcess | undefined;

  beforeAll(async () => {
    [cluster, s3] = await Promise.all([startPostgres(), startS3Server()]);
    const env = { DRIVEWAY_LOG_LEVEL: 'warn', ...postgresS3Env(await cluster.createDatabase(), s3) };
    tmp = makeTmpDir('driveway-chunk-instances-');
    a = await spawnDriveway({ dataDir: path.join(tmp.dir, 'a'), env });
    b = await spawnDriveway({ dataDir: path.join(tmp.dir, 'b'), env });
  }, 90_000);

  afterAll(async () => {
    a?.kill();
    b?.kill();
    await Promise.allSettled([cluster?.stop(), s3?.close()]);
    tmp?.remove();
  });

  async function uploadKeys(): Promise<string[]> {
    const client = s3rverClient(s3!.endpoint);
    try {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3!.bucket, Prefix: 'uploads/' }));
      return (listed.Contents ?? []).map((o) => o.Key as string);
    } finally {
      client.destroy();
    }
  }

  it('starts through A, goes on through B after A is killed, and leaves no part in the bucket', async () => {
    const content = patternBytes(5, 2 * MiB + 4321);
    const chunkOf = (n: number): Buffer => content.subarray((n - 1) * MiB, n * MiB);
    const dir = '/remote.php/dav/uploads/admin/web-upload-7';
    const v2 = { destination: `${a!.davUrl}/remote.php/dav/files/admin/home/across.bin`, 'oc-total-length': String(content.length) };
    expect((await call(a!, 'MKCOL', `${dir}/`, v2)).status).toBe(201);
    expect((await call(a!, 'PUT', `${dir}/1`, v2, chunkOf(1))).status).toBe(201);
    expect((await call(b!, 'PUT', `${dir}/2`, { ...v2, destination: `${b!.davUrl}/remote.php/dav/files/admin/home/across.bin` }, chunkOf(2))).status).toBe(201);
    a!.child.kill('SIGKILL');
    expect(await a!.exited).toBeNull();
    const onB = { ...v2, destination: `${b!.davUrl}/remote.php/dav/files/admin/home/across.bin` };
    expect((await call(b!, 'PUT', `${dir}/3`, onB, chunkOf(3))).status).toBe(201);
    expect(await uploadKeys()).toHaveLength(3);
    expect((await call(b!, 'MOVE', `${dir}/.file`, onB)).status).toBe(201);
    const got = await call(b!, 'GET', '/home/across.bin');
    expect(sha(got.body)).toBe(sha(content));
    expect(await uploadKeys()).toEqual([]);
  });
});
