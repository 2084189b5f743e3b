/**
 * A tus upload (bridge/uploads/tus.ts) whose uploading process is killed half-way: a real
 * driveway process, and the client a separate Node process replaying tus-js-client's requests
 * (lib/upload.ts of github:tus/tus-js-client: POST with Upload-Length and base64 Upload-Metadata
 * `filename`/`filetype`, then PATCHes of
 * `application/offset+octet-stream` with Upload-Offset; tus-js-client is not in node_modules).
 * It is killed with -9 once half the bytes are in; a new client asks HEAD for the offset and sends
 * the rest. The file's sha256 is right and it has one revision. Then the same across two
 * instances over one PostgreSQL database and one S3 bucket: started through A, A killed too,
 * resumed and finished through B; no part left in the bucket.
 *
 * Size: DRIVEWAY_TEST_TUS_BYTES (default 24 MiB; the figure is 200 MB), in
 * DRIVEWAY_TEST_TUS_PART_BYTES parts (default 5 MiB, tus-js-client's chunkSize as oCIS web sets it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { twoInstancesOverPostgresS3 } from '../../helpers/two-instances.js';
import { parseMultistatus } from '../../helpers/multistatus.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const TOTAL = Number(process.env.DRIVEWAY_TEST_TUS_BYTES ?? 24 * MiB);
const PART = Number(process.env.DRIVEWAY_TEST_TUS_PART_BYTES ?? 5 * MiB);
const TUS = { 'tus-resumable': '1.0.0' };
const sha = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The uploading client: creation, then one PATCH per part, reporting each offset on stdout. */
const CLIENT = `
import { readFileSync } from 'node:fs';
const { TUS_URL, TUS_AUTH, TUS_FILE, TUS_PART } = process.env;
const content = readFileSync(TUS_FILE);
const part = Number(TUS_PART);
const meta = 'filename ' + Buffer.from('tus-big.bin').toString('base64') + ',filetype ' + Buffer.from('application/octet-stream').toString('base64');
const created = await fetch(TUS_URL + '/remote.php/dav/files/admin/home/', { method: 'POST', headers: { authorization: TUS_AUTH, 'tus-resumable': '1.0.0', 'upload-length': String(content.length), 'upload-metadata': meta } });
if (created.status !== 201) throw new Error('POST answered ' + created.status);
console.log('location ' + created.headers.get('location'));
for (let offset = 0; offset < content.length; ) {
  const body = content.subarray(offset, offset + part);
  const patched = await fetch(TUS_URL + created.headers.get('location'), { method: 'PATCH', headers: { authorization: TUS_AUTH, 'tus-resumable': '1.0.0', 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body });
  if (patched.status !== 204) throw new Error('PATCH answered ' + patched.status);
  offset = Number(patched.headers.get('upload-offset'));
  console.log('offset ' + offset);
  await new Promise((resolve) => setTimeout(resolve, 100));
}
`;

/** Starts the client against `url`; resolves with its Location once half the bytes are in, the client then killed. */
async function uploadHalfThenKill(url: string, file: string): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', CLIENT], {
    env: { ...process.env, TUS_URL: url, TUS_AUTH: ADMIN_BASIC, TUS_FILE: file, TUS_PART: String(PART) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let location = '';
  try {
    for await (const line of createInterface({ input: child.stdout! })) {
      const [what, value] = line.split(' ');
      if (what === 'location') location = value ?? '';
      if (what === 'offset' && Number(value) >= TOTAL / 2) break;
    }
  } finally {
    child.kill('SIGKILL');
  }
  expect(location).toMatch(/^\/remote\.php\/dav\/tus\/admin\/[0-9a-f-]{36}$/);
  return location;
}

/** A new client: HEAD for the offset, then the rest in parts. Returns the offset it resumed at. */
async function resume(url: string, location: string, content: Buffer): Promise<number> {
  const head = await fetch(url + location, { method: 'HEAD', headers: { authorization: ADMIN_BASIC, ...TUS } });
  expect(head.status).toBe(200);
  expect(Number(head.headers.get('upload-length'))).toBe(content.length);
  const from = Number(head.headers.get('upload-offset'));
  for (let offset = from; offset < content.length; ) {
    const answer = await fetch(url + location, {
      method: 'PATCH',
      headers: { authorization: ADMIN_BASIC, ...TUS, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' },
      body: content.subarray(offset, offset + PART),
    });
    expect(answer.status).toBe(204);
    offset = Number(answer.headers.get('upload-offset'));
  }
  return from;
}

async function revisionsOf(instance: DrivewayProcess): Promise<number> {
  const listed = await fetch(`${instance.davUrl}/versions/home/tus-big.bin/`, { method: 'PROPFIND', headers: { authorization: ADMIN_BASIC, depth: '1' } });
  expect(listed.status).toBe(207);
  // The first response is the file's folder of revisions itself.
  return parseMultistatus(await listed.text()).length - 1;
}

async function fileSha(instance: DrivewayProcess): Promise<string> {
  const got = await fetch(`${instance.davUrl}/home/tus-big.bin`, { headers: { authorization: ADMIN_BASIC } });
  expect(got.status).toBe(200);
  return sha(new Uint8Array(await got.arrayBuffer()));
}

describe('a tus upload whose client is killed half-way', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-tus-resume-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('resumes from HEAD in a new client: every byte, one revision', async () => {
    const content = patternBytes(29, TOTAL);
    const file = path.join(tmp.dir, 'content.bin');
    writeFileSync(file, content);
    instance = await spawnDriveway({ dataDir: path.join(tmp.dir, 'data'), env: { DRIVEWAY_LOG_LEVEL: 'warn' } });
    const location = await uploadHalfThenKill(instance.davUrl, file);
    const from = await resume(instance.davUrl, location, content);
    expect(from).toBeGreaterThanOrEqual(TOTAL / 2);
    expect(from).toBeLessThan(TOTAL);
    expect(await fileSha(instance)).toBe(sha(content));
    expect(await revisionsOf(instance)).toBe(1);
  }, 240_000);
});

const postgres = requirePostgres();

postgres.describe('a tus upload across two instances over PostgreSQL + S3', () => {
  const pair = twoInstancesOverPostgresS3('driveway-tus-instances-');

  it('starts through A, A and the client killed, resumes and finishes through B', async () => {
    const content = patternBytes(31, TOTAL);
    const file = path.join(pair.tmp.dir, 'content.bin');
    writeFileSync(file, content);
    const location = await uploadHalfThenKill(pair.a.davUrl, file);
    pair.a.child.kill('SIGKILL');
    expect(await pair.a.exited).toBeNull();
    expect((await pair.uploadKeys()).length).toBeGreaterThan(0);
    const from = await resume(pair.b.davUrl, location, content);
    expect(from).toBeGreaterThanOrEqual(TOTAL / 2);
    expect(await fileSha(pair.b)).toBe(sha(content));
    expect(await revisionsOf(pair.b)).toBe(1);
    expect(await pair.uploadKeys()).toEqual([]);
  }, 240_000);
});
