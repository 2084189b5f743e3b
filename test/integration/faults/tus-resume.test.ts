/**
 * A tus upload (bridge/uploads/tus.ts) whose uploading process is killed half-way, with the real
 * client: tus-js-client 4's Node API in a process of its own (test/helpers/tus-js-client-process.ts,
 * an fs.ReadStream in 5 MiB parts, the upload's URL kept in a FileUrlStorage on disk) against a
 * real driveway process. The process is killed with -9 (by its PID) once half the bytes are in; a
 * new process finds the upload in the storage, asks HEAD for the offset and PATCHes only the rest.
 * The file's sha256 is right and it has one revision. Then the same across two instances over one
 * PostgreSQL database and one S3 bucket: started through A, A killed too, resumed through B from
 * the stored upload URL; no part left in the bucket.
 *
 * Size: DRIVEWAY_TEST_TUS_BYTES (default 200 MB, the issue's figure), in
 * DRIVEWAY_TEST_TUS_PART_BYTES parts (default 5 MiB, tus-js-client's chunkSize as oCIS web sets it).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { twoInstancesOverPostgresS3 } from '../../helpers/two-instances.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { MiB, patternHash, patternStream } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const TOTAL = Number(process.env.DRIVEWAY_TEST_TUS_BYTES ?? 200 * 1000 * 1000);
const PART = Number(process.env.DRIVEWAY_TEST_TUS_PART_BYTES ?? 5 * MiB);
const CLIENT = fileURLToPath(new URL('../../helpers/tus-js-client-process.ts', import.meta.url));
const NAME = 'tus-big.bin';

interface ClientRun {
  location: string;
  /** Upload-Offset of the HEAD the client resumed with (undefined: it created the upload). */
  resumedAt: number | undefined;
  /** Bytes of the PATCHes the server answered. */
  patched: number;
  done: boolean;
}

/**
 * Runs the client on `file` in `dir` against `davUrl`'s home; with `killAtHalf`, kills it with -9
 * once half the bytes are in. Resolves with what it reported.
 */
async function runClient(davUrl: string, dir: string, options: { killAtHalf?: boolean; uploadUrl?: string } = {}): Promise<ClientRun> {
  const loader = process.features.typescript ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...loader, CLIENT], {
    env: {
      ...process.env,
      TUS_ENDPOINT: `${davUrl}/remote.php/dav/files/admin/home/`,
      TUS_AUTH: ADMIN_BASIC,
      TUS_FILE: path.join(dir, NAME),
      TUS_URL_STORAGE: path.join(dir, 'tus-urls.json'),
      TUS_CHUNK_BYTES: String(PART),
      ...(options.uploadUrl ? { TUS_UPLOAD_URL: options.uploadUrl } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const run: ClientRun = { location: '', resumedAt: undefined, patched: 0, done: false };
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const [what, value = ''] = line.split(' ');
      if (what === 'location') run.location = value;
      if (what === 'head') run.resumedAt = Number(value);
      if (what === 'patched') run.patched += Number(value);
      if (what === 'done') run.done = true;
      if (what === 'error') throw new Error(`tus-js-client: ${line}`);
      if (options.killAtHalf && (run.resumedAt ?? 0) + run.patched >= TOTAL / 2) {
        process.kill(child.pid as number, 'SIGKILL');
        break;
      }
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid as number, 'SIGKILL');
  }
  const code = await exited;
  if (!options.killAtHalf) expect(code).toBe(0);
  return run;
}

/** The file the clients upload: the test pattern, on disk, never whole in memory. */
async function writeContent(dir: string): Promise<string> {
  await pipeline(patternStream(TOTAL, { chunkBytes: 4 * MiB }), createWriteStream(path.join(dir, NAME)));
  return patternHash(TOTAL);
}

async function revisionsOf(instance: DrivewayProcess): Promise<number> {
  const listed = await fetch(`${instance.davUrl}/versions/home/${NAME}/`, { method: 'PROPFIND', headers: { authorization: ADMIN_BASIC, depth: '1' } });
  expect(listed.status).toBe(207);
  // The first response is the file's folder of revisions itself.
  return parseMultistatus(await listed.text()).length - 1;
}

async function fileSha(instance: DrivewayProcess): Promise<string> {
  const got = await fetch(`${instance.davUrl}/home/${NAME}`, { headers: { authorization: ADMIN_BASIC } });
  expect(got.status).toBe(200);
  const hash = createHash('sha256');
  for await (const chunk of Readable.fromWeb(got.body as import('node:stream/web').ReadableStream<Uint8Array>)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The second run resumed where the server was and sent only the rest. */
function expectResumed(first: ClientRun, second: ClientRun): void {
  expect(first.location).toMatch(/\/remote\.php\/dav\/tus\/admin\/[0-9a-f-]{36}$/);
  expect(first.done).toBe(false);
  expect(second.done).toBe(true);
  expect(second.resumedAt).toBeGreaterThanOrEqual(TOTAL / 2);
  expect(second.resumedAt).toBeLessThan(TOTAL);
  expect(second.patched).toBe(TOTAL - (second.resumedAt as number));
}

describe('tus-js-client killed half-way', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-tus-resume-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('a new process resumes from HEAD through its URL storage: every byte, one revision', async () => {
    const sha = await writeContent(tmp.dir);
    instance = await spawnDriveway({ dataDir: path.join(tmp.dir, 'data'), env: { DRIVEWAY_LOG_LEVEL: 'warn' } });
    const first = await runClient(instance.davUrl, tmp.dir, { killAtHalf: true });
    const second = await runClient(instance.davUrl, tmp.dir);
    expectResumed(first, second);
    expect(await fileSha(instance)).toBe(sha);
    expect(await revisionsOf(instance)).toBe(1);
  }, 600_000);
});

const postgres = requirePostgres();

postgres.describe('tus-js-client across two instances over PostgreSQL + S3', () => {
  const pair = twoInstancesOverPostgresS3('driveway-tus-instances-');

  /**
   * What A left where B reaches it: part objects under `uploads/` and S3 multipart uploads (a
   * `blob_intents` row `mp-<session>` each: parts of 5 MiB and more go up as multipart parts).
   */
  async function sharedParts(): Promise<{ objects: number; multipart: number }> {
    const db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
    try {
      const multipart = (await db.query("SELECT id FROM blob_intents WHERE id LIKE 'mp-%'")).rowCount ?? 0;
      return { objects: (await pair.uploadKeys()).length, multipart };
    } finally {
      await db.end();
    }
  }

  it('starts through A, A and the client killed, resumes and finishes through B', async () => {
    const sha = await writeContent(pair.tmp.dir);
    const first = await runClient(pair.a.davUrl, pair.tmp.dir, { killAtHalf: true });
    pair.a.child.kill('SIGKILL');
    expect(await pair.a.exited).toBeNull();
    const left = await sharedParts();
    expect(left.objects + left.multipart).toBeGreaterThan(0);
    // The stored URL names A's origin: the new process is given the upload on B.
    const second = await runClient(pair.b.davUrl, pair.tmp.dir, { uploadUrl: `${pair.b.davUrl}${new URL(first.location).pathname}` });
    expectResumed(first, second);
    expect(await fileSha(pair.b)).toBe(sha);
    expect(await revisionsOf(pair.b)).toBe(1);
    expect(await sharedParts()).toEqual({ objects: 0, multipart: 0 });
  }, 600_000);
});
