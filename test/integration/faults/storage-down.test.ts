/**
 * PostgreSQL and S3 going away under a running driveway (the real process, store on PostgreSQL
 * + S3, bridge in-process), each on servers of this suite's own so they can be stopped: requests
 * are answered 503 with Retry-After within a bound (the store's in the SPEC envelope, code
 * `unavailable`), never 500 and never a hang; /readyz on both listeners names what is down and
 * nothing more: 503 with Retry-After without the database, 200 "degraded" without S3 (listings
 * and small files still work, so a balancer must keep the instance); once the server is back,
 * requests succeed again without restarting driveway; and nothing is half-written: every
 * revision's bytes are where its row says, disk_used is the sum of the revisions, and a refused
 * upload left no row. The log says once that the change feed (or S3) went away and once that it
 * is back, and the WebDAV 503s meanwhile are warnings without a stack.
 */
import { randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_BASIC, ADMIN_PASSWORD, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { requirePostgres, startPostgres, type TestPostgres } from '../../helpers/postgres.js';
import { postgresS3Env, s3rverClient, startS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const postgres = requirePostgres();
/** How long a refused request may take at most while a dependency is down (connect refused, SDK retries). */
const REFUSAL_BOUND_MS = 10_000;
const RECOVERY_BOUND_MS = 20_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cluster: TestPostgres | undefined;
let s3: TestS3Server | undefined;
let databaseUrl = '';
let instance: DrivewayProcess | undefined;
let tmp: ReturnType<typeof makeTmpDir> | undefined;

async function put(name: string, body: Buffer): Promise<Response> {
  return fetch(`${instance!.davUrl}/home/${name}`, { method: 'PUT', headers: { authorization: ADMIN_BASIC }, body });
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const began = Date.now();
  const value = await work();
  return { value, ms: Date.now() - began };
}

/** Retries `work` until it gives `status` (a bounded number of times); the last response. */
async function until(status: number, work: () => Promise<Response>): Promise<Response> {
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  for (;;) {
    const response = await work();
    if (response.status === status || Date.now() > deadline) return response;
    await response.arrayBuffer();
    await sleep(250);
  }
}

interface Snapshot {
  files: Array<{ name: string; size: number }>;
  diskUsed: number;
  revisionBytes: number;
  externalBlobs: string[];
}

async function snapshot(): Promise<Snapshot> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const files = await db.query<{ name: string; size: string }>(
      "SELECT n.name, r.size FROM nodes n JOIN revisions r ON r.node_uuid = n.uuid JOIN users u ON u.uuid = n.owner_uuid WHERE u.username = 'admin' ORDER BY n.name, r.revision",
    );
    const used = await db.query<{ disk_used: string }>("SELECT disk_used FROM users WHERE username = 'admin'");
    const sum = await db.query<{ n: string }>(
      "SELECT COALESCE(SUM(r.size), 0) AS n FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid JOIN users u ON u.uuid = n.owner_uuid WHERE u.username = 'admin'",
    );
    const external = await db.query<{ hash: string }>('SELECT DISTINCT b.hash FROM revisions r JOIN blobs b ON b.hash = r.blob_hash WHERE b.data IS NULL ORDER BY b.hash');
    return {
      files: files.rows.map((r) => ({ name: r.name, size: Number(r.size) })),
      diskUsed: Number(used.rows[0]?.disk_used),
      revisionBytes: Number(sum.rows[0]?.n),
      externalBlobs: external.rows.map((r) => r.hash),
    };
  } finally {
    await db.end();
  }
}

/** disk_used is the sum of the revisions, and every revision's bytes kept outside its row are in the bucket. */
async function expectNothingHalfWritten(): Promise<Snapshot> {
  const state = await snapshot();
  expect(state.diskUsed).toBe(state.revisionBytes);
  const client = s3rverClient(s3!.endpoint);
  try {
    for (const hash of state.externalBlobs) {
      const head = await client.send(new HeadObjectCommand({ Bucket: s3!.bucket, Key: `blobs/${hash}` }));
      expect(head.ContentLength).toBeGreaterThan(0);
    }
  } finally {
    client.destroy();
  }
  return state;
}

async function readyz(baseUrl: string): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const response = await fetch(`${baseUrl}/readyz`);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
}

/** Polls /readyz until it answers `status` and its body passes `body` (its result is cached for a second). */
async function readyzUntil(baseUrl: string, status: number, body: (text: string) => boolean = () => true): Promise<{ status: number; retryAfter: string | null; text: string }> {
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  for (;;) {
    const answer = await readyz(baseUrl);
    if ((answer.status === status && body(answer.text)) || Date.now() > deadline) return answer;
    await sleep(200);
  }
}

const FEED_LOST = "the change feed lost PostgreSQL: other instances' writes reach this one's caches only as they expire, until it listens again";
const FEED_BACK = 'the change feed listens again: every cache starts over';
const S3_LOST = 'S3 stopped answering: uploads and downloads of files kept there answer 503 until it is back';
const S3_BACK = 'S3 answers again';

/** The process's JSON log lines so far. */
function logLines(): Array<Record<string, unknown>> {
  return instance!
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Waits (bounded) until a line with this message was logged. */
async function lineLogged(msg: string): Promise<void> {
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  while (!logLines().some((l) => l.msg === msg)) {
    if (Date.now() > deadline) throw new Error(`no "${msg}" line within ${RECOVERY_BOUND_MS} ms`);
    await sleep(100);
  }
}

/** Every WebDAV 503 the bridge logged is a warning with its cause, never an error with a stack. */
function expectWebDavRefusalsWarned(): void {
  const refusals = logLines().filter((l) => l.part === 'bridge' && l.status === 503);
  expect(refusals.length).toBeGreaterThan(0);
  for (const line of refusals) {
    expect(line.level).toBe(40);
    expect(line).not.toHaveProperty('err');
  }
}

postgres.describe('driveway on PostgreSQL + S3 while they go away and come back', () => {
  beforeAll(async () => {
    [cluster, s3] = await Promise.all([startPostgres(), startS3Server()]);
    databaseUrl = await cluster.createDatabase();
    tmp = makeTmpDir('driveway-faults-');
    instance = await spawnDriveway({
      dataDir: tmp.dir,
      env: {
        DRIVEWAY_LOG_LEVEL: 'info',
        DRIVEWAY_ACCESS_LOG: 'false',
        ...postgresS3Env(databaseUrl, s3),
      },
    });
  }, 90_000);

  afterAll(async () => {
    instance?.kill();
    await Promise.allSettled([cluster?.stop(), s3?.close()]);
    tmp?.remove();
  });

  it('answers 503 with Retry-After while PostgreSQL is down, and serves again once it is back', async () => {
    const first = randomBytes(200 * 1024);
    expect((await put('before.bin', first)).status).toBe(201);
    const login = await fetch(`${instance!.storeUrl}/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }) });
    const { token } = (await login.json()) as { token: string };
    const before = await expectNothingHalfWritten();

    await cluster!.stopServer();

    const refused = await timed(() => put('during.bin', randomBytes(200 * 1024)));
    expect(refused.value.status).toBe(503);
    expect(refused.value.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.ms).toBeLessThan(REFUSAL_BOUND_MS);

    const api = await timed(() => fetch(`${instance!.storeUrl}/api/user`, { headers: { authorization: `Bearer ${token}` } }));
    expect(api.value.status).toBe(503);
    expect(api.value.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await api.value.json()).toMatchObject({ status: 'error', code: 'unavailable' });
    expect(api.ms).toBeLessThan(REFUSAL_BOUND_MS);

    for (const url of [instance!.storeUrl, instance!.davUrl]) {
      const answer = await readyzUntil(url, 503);
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(answer.text)).toMatchObject({ status: 'error', checks: { database: 'down', blobs: 'up' } });
      // Names what is down, never where it is.
      expect(answer.text).not.toMatch(/postgres|127\.0\.0\.1|password|driveway:/i);
    }
    expect((await fetch(`${instance!.davUrl}/healthz`)).status).toBe(200);

    await cluster!.startServer();

    const body = randomBytes(150 * 1024);
    const recovered = await until(201, () => put('after.bin', body));
    expect(recovered.status).toBe(201);
    const get = await fetch(`${instance!.davUrl}/home/after.bin`, { headers: { authorization: ADMIN_BASIC } });
    expect(Buffer.from(await get.arrayBuffer()).equals(body)).toBe(true);
    expect((await fetch(`${instance!.storeUrl}/api/user`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await readyzUntil(instance!.storeUrl, 200)).status).toBe(200);
    expect((await readyzUntil(instance!.davUrl, 200)).status).toBe(200);

    const after = await expectNothingHalfWritten();
    expect(after.files.map((f) => f.name)).toEqual([...before.files.map((f) => f.name), 'after.bin'].sort());
    expect(instance!.child.exitCode).toBeNull();

    // The change feed's loss and return: one line each, however many reconnections failed.
    await lineLogged(FEED_BACK);
    expect(logLines().filter((l) => l.msg === FEED_LOST).map((l) => l.level)).toEqual([40]);
    expect(logLines().filter((l) => l.msg === FEED_BACK).map((l) => l.level)).toEqual([30]);
    expectWebDavRefusalsWarned();
  }, 60_000);

  it('refuses uploads with 503 while S3 is down, changing nothing, and takes them again once it is back', async () => {
    const before = await expectNothingHalfWritten();

    await s3!.stopServer();

    const refused = await timed(() => put('during-s3.bin', randomBytes(300 * 1024)));
    expect(refused.value.status).toBe(503);
    expect(refused.value.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.ms).toBeLessThan(REFUSAL_BOUND_MS);
    // A file whose bytes are in the bucket cannot be read either: 503, not 500.
    const read = await fetch(`${instance!.davUrl}/home/before.bin`, { headers: { authorization: ADMIN_BASIC } });
    expect(read.status).toBe(503);
    await read.arrayBuffer();

    // Degraded, not down: every instance shares the bucket, and listings and small files still work.
    for (const url of [instance!.storeUrl, instance!.davUrl]) {
      const answer = await readyzUntil(url, 200, (text) => text.includes('"blobs":"down"'));
      expect(answer.status).toBe(200);
      expect(answer.retryAfter).toBeNull();
      expect(JSON.parse(answer.text)).toMatchObject({ status: 'success', degraded: ['blobs'], checks: { database: 'up', blobs: 'down' } });
      expect(answer.text).not.toMatch(/http:|127\.0\.0\.1|bucket/i);
    }
    expect(await snapshot()).toEqual(before);
    expect((await fetch(`${instance!.davUrl}/home/`, { method: 'PROPFIND', headers: { authorization: ADMIN_BASIC, depth: '1' } })).status).toBe(207);
    const small = randomBytes(1024);
    expect((await put('small-during-s3.bin', small)).status).toBe(201);
    const smallBack = await fetch(`${instance!.davUrl}/home/small-during-s3.bin`, { headers: { authorization: ADMIN_BASIC } });
    expect(Buffer.from(await smallBack.arrayBuffer()).equals(small)).toBe(true);

    await s3!.startServer();

    const body = randomBytes(300 * 1024);
    expect((await until(201, () => put('after-s3.bin', body))).status).toBe(201);
    const get = await fetch(`${instance!.davUrl}/home/after-s3.bin`, { headers: { authorization: ADMIN_BASIC } });
    expect(Buffer.from(await get.arrayBuffer()).equals(body)).toBe(true);
    expect((await readyzUntil(instance!.davUrl, 200)).status).toBe(200);

    const after = await expectNothingHalfWritten();
    expect(after.files.map((f) => f.name)).toEqual([...before.files.map((f) => f.name), 'after-s3.bin', 'small-during-s3.bin'].sort());
    expect(after.files.some((f) => f.name === 'during-s3.bin')).toBe(false);

    expect(logLines().filter((l) => l.msg === S3_LOST).map((l) => l.level)).toEqual([40]);
    expect(logLines().filter((l) => l.msg === S3_BACK).map((l) => l.level)).toEqual([30]);
    expectWebDavRefusalsWarned();
  }, 60_000);
});
