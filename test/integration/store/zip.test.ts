/**
 * Zip archives (docs/api.md "Zip archives") against a real store: the caller's own files and
 * folders (GET /resources/auth/zip/...) and a public link's folder (GET /public/{token}?download=zip),
 * unpacked with `unzip` and compared byte for byte; empty folders and modification times kept,
 * clashing names told apart; who may fetch (other users' nodes refused, in parallel), the bounds,
 * a link's password and an upload link; and a blob lost mid-archive cutting the connection.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ZIP_NODES } from '../../../src/store/ops/zip.js';
import { localBlobs } from '../../helpers/blobs.js';
import { dataOf, startGroupStore, stopGroupStore } from '../../helpers/groups.js';
import { blobHashOf, createFolder, nodeRow, topLevelRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { as, basic, fetchRaw, type Fetched } from '../../helpers/sharing.js';
import { MiB, patternBytes } from '../../helpers/stream-helpers.js';
import type { TestStore } from '../../helpers/start-store.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let store: TestStore;
let seeder: Seeder;
let ann: SeededUser;
let bob: SeededUser;
const tmp = makeTmpDir('driveway-zip-');

/** Ann's tree: Project/{readme.txt, big.bin (3 MiB), Empty/, Deep/Deeper/nested ü.txt}, plus notes.txt at home. */
const README = 'read me first\n';
const BIG = patternBytes(7, 3 * MiB + 17);
const NESTED = 'nested bytes äöü\n';
let project: string;
let notes: string;
let readme: string;

beforeAll(async () => {
  ({ store, seeder } = await startGroupStore());
  ann = await seeder.user('Ann Zipper');
  bob = await seeder.user('Bob Outsider');
  const { client } = seeder;
  project = await createFolder(client, ann.session, 'home', 'Project');
  readme = await uploadFile(client, ann.session, project, 'readme.txt', README);
  await uploadFile(client, ann.session, project, 'big.bin', BIG);
  await createFolder(client, ann.session, project, 'Empty');
  const deep = await createFolder(client, ann.session, project, 'Deep');
  const deeper = await createFolder(client, ann.session, deep, 'Deeper');
  await uploadFile(client, ann.session, deeper, 'nested ü.txt', NESTED);
  notes = await uploadFile(client, ann.session, 'home', 'notes.txt', 'top-level notes');
});

afterAll(async () => {
  await stopGroupStore({ seeder, store });
  tmp.remove();
});

const zipPath = (who: SeededUser, nodes: readonly string[], name = 'archive.zip'): string =>
  `/resources/auth/zip/${encodeURIComponent(who.session.fileAccessKey)}/${encodeURIComponent(name)}?${nodes.map((n) => `node=${encodeURIComponent(n)}`).join('&')}`;

let unpacked = 0;
/** Unpacks a zip's bytes with `unzip` (which checks every CRC) into a fresh folder; returns it. */
function unzip(body: Buffer): string {
  unpacked += 1;
  const file = path.join(tmp.dir, `a${unpacked}.zip`);
  const dir = path.join(tmp.dir, `u${unpacked}`);
  writeFileSync(file, body);
  execFileSync('unzip', ['-q', file, '-d', dir]);
  return dir;
}

/** The entry names of a zip, as `unzip -Z1` lists them. */
function entries(body: Buffer): string[] {
  unpacked += 1;
  const file = path.join(tmp.dir, `l${unpacked}.zip`);
  writeFileSync(file, body);
  return execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n').sort();
}

function expectZipHeaders(res: Fetched, name: string): void {
  expect(res.status, res.body.subarray(0, 200).toString()).toBe(200);
  expect(res.headers).toMatchObject({
    'content-type': 'application/zip',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'content-disposition': `attachment; filename="${name}"`,
  });
}

describe('GET /resources/auth/zip/{key}/{name}.zip?node=...', () => {
  it('streams a folder (nested, with an empty folder) and a file, byte for byte, with their modification times', async () => {
    const res = await fetchRaw(store, zipPath(ann, [project, notes], 'my files.zip'));
    expectZipHeaders(res, 'my files.zip');
    expect(res.headers['content-length']).toBeUndefined();
    expect(entries(res.body)).toEqual([
      'Project/', 'Project/Deep/', 'Project/Deep/Deeper/', 'Project/Deep/Deeper/nested ü.txt', 'Project/Empty/', 'Project/big.bin', 'Project/readme.txt', 'notes.txt',
    ]);
    const dir = unzip(res.body);
    expect(readFileSync(path.join(dir, 'Project/readme.txt'), 'utf8')).toBe(README);
    expect(readFileSync(path.join(dir, 'Project/big.bin')).equals(BIG)).toBe(true);
    expect(readFileSync(path.join(dir, 'Project/Deep/Deeper/nested ü.txt'), 'utf8')).toBe(NESTED);
    expect(readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('top-level notes');
    expect(statSync(path.join(dir, 'Project/Empty')).isDirectory()).toBe(true);
    const row = await nodeRow(store, readme);
    expect(Math.abs(statSync(path.join(dir, 'Project/readme.txt')).mtimeMs - (row?.updated ?? 0))).toBeLessThan(2_000);
  });

  it('tells clashing names apart (case-insensitively) and keeps them inside the archive', async () => {
    const a = await createFolder(seeder.client, ann.session, 'home', 'Clash A');
    const b = await createFolder(seeder.client, ann.session, 'home', 'Clash B');
    const one = await uploadFile(seeder.client, ann.session, a, 'Report.txt', 'one');
    const two = await uploadFile(seeder.client, ann.session, b, 'report.txt', 'two');
    const dots = await uploadFile(seeder.client, ann.session, b, '..txt', 'dots');
    const res = await fetchRaw(store, zipPath(ann, [one, two, dots]));
    expect(res.status).toBe(200);
    expect(entries(res.body)).toEqual(['..txt', 'Report.txt', 'report (2).txt']);
    const dir = unzip(res.body);
    expect(readFileSync(path.join(dir, 'Report.txt'), 'utf8')).toBe('one');
    expect(readFileSync(path.join(dir, 'report (2).txt'), 'utf8')).toBe('two');
  });

  it('refuses, before any byte, what the caller may not download: other users’ nodes (in parallel), unknown ones, a bad key', async () => {
    const bobsFile = await uploadFile(seeder.client, bob.session, 'home', 'bob.txt', 'bob only');
    const bobsFolder = await createFolder(seeder.client, bob.session, 'home', 'Bob private');
    const bobsHome = (await topLevelRow(store, bob.uuid, 'home')).uuid;
    const answers = await Promise.all([
      fetchRaw(store, zipPath(ann, [bobsFile])),
      fetchRaw(store, zipPath(ann, [bobsFolder])),
      fetchRaw(store, zipPath(ann, [notes, bobsHome])),
      fetchRaw(store, zipPath(ann, ['00000000-0000-4000-8000-000000000000'])),
      fetchRaw(store, zipPath(bob, [project])),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'not_found' });
    }
    const badKey = await fetchRaw(store, `/resources/auth/zip/not-a-key/a.zip?node=${notes}`);
    expect(badKey.status).toBe(401);
  });

  it(`needs 1 to ${MAX_ZIP_NODES} nodes (400 in words)`, async () => {
    const none = await fetchRaw(store, zipPath(ann, []));
    expect(none.status).toBe(400);
    expect(none.json()).toMatchObject({ status: 'error', msg: expect.stringMatching(/at least one node/) });
    const many = Array.from({ length: MAX_ZIP_NODES + 1 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const tooMany = await fetchRaw(store, zipPath(ann, many));
    expect(tooMany.status).toBe(400);
    expect(tooMany.json()).toMatchObject({ status: 'error', msg: expect.stringMatching(/at most 300 nodes/) });
  });

  it('cuts the connection when a file cannot be read mid-archive, never ending a short archive', async () => {
    const folder = await createFolder(seeder.client, ann.session, 'home', 'Lost');
    await uploadFile(seeder.client, ann.session, folder, 'a-first.bin', patternBytes(1, MiB));
    const lost = patternBytes(2, MiB);
    await uploadFile(seeder.client, ann.session, folder, 'b-lost.bin', lost);
    const hash = blobHashOf(lost);
    unlinkSync(path.join(localBlobs(store).blobDir, hash.slice(0, 2), hash.slice(2, 4), hash));
    const res = await request(store.url + zipPath(ann, [folder]), { reset: true });
    expect(res.statusCode).toBe(200);
    let received = 0;
    await expect((async () => {
      for await (const chunk of res.body) received += (chunk as Buffer).length;
    })()).rejects.toThrow();
    expect(received).toBeGreaterThan(0);
  });
});

/** Files of the blob folder this process holds open. */
function openBlobFiles(): number {
  const blobDir = localBlobs(store).blobDir;
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(blobDir);
    } catch {
      return false;
    }
  }).length;
}

describe('a client that goes away mid-archive', () => {
  it('closes the file being read, and reads no further', async () => {
    const folder = await createFolder(seeder.client, ann.session, 'home', 'Abandoned');
    await uploadFile(seeder.client, ann.session, folder, 'one.bin', patternBytes(3, 8 * MiB));
    await uploadFile(seeder.client, ann.session, folder, 'two.bin', patternBytes(4, 8 * MiB));
    const before = openBlobFiles();
    const res = await request(store.url + zipPath(ann, [folder]), { reset: true });
    expect(res.statusCode).toBe(200);
    for await (const chunk of res.body) {
      expect((chunk as Buffer).length).toBeGreaterThan(0);
      break;
    }
    res.body.destroy();
    await expect.poll(openBlobFiles, { timeout: 5_000 }).toBe(before);
  });
});

describe('GET /public/{token}[/{path}]?download=zip', () => {
  it('zips a password link’s folder and a folder below it, with the same password proof as any GET', async () => {
    const link = await dataOf<{ url: string }>(as(seeder.client, ann, 'POST', `/api/nodes/${project}/shares`, { type: 'public', password: 'zip-Passw0rd!' }));
    const without = await fetchRaw(store, `${link.url}?download=zip`);
    expect(without.status).toBe(401);
    expect(without.headers['content-type']).toMatch(/json/);
    const wrong = await fetchRaw(store, `${link.url}?download=zip`, { headers: basic('nope') });
    expect(wrong.status).toBe(401);

    const whole = await fetchRaw(store, `${link.url}?download=zip`, { headers: basic('zip-Passw0rd!') });
    expectZipHeaders(whole, 'Project.zip');
    const dir = unzip(whole.body);
    expect(readFileSync(path.join(dir, 'Project/big.bin')).equals(BIG)).toBe(true);
    expect(statSync(path.join(dir, 'Project/Empty')).isDirectory()).toBe(true);

    const below = await fetchRaw(store, `${link.url}/Deep?download=zip`, { headers: basic('zip-Passw0rd!') });
    expectZipHeaders(below, 'Deep.zip');
    expect(entries(below.body)).toEqual(['Deep/', 'Deep/Deeper/', 'Deep/Deeper/nested ü.txt']);
    const head = await fetchRaw(store, `${link.url}?download=zip`, { method: 'HEAD', headers: basic('zip-Passw0rd!') });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
  });

  it('refuses an upload link (403) and a path outside the link (404)', async () => {
    const box = await createFolder(seeder.client, ann.session, 'home', 'Dropbox');
    await uploadFile(seeder.client, ann.session, box, 'secret.txt', 'not for visitors');
    const upload = await dataOf<{ url: string }>(as(seeder.client, ann, 'POST', `/api/nodes/${box}/shares`, { type: 'upload' }));
    const refused = await fetchRaw(store, `${upload.url}?download=zip`);
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ status: 'error', msg: 'this link accepts uploads only' });
    const open = await dataOf<{ url: string }>(as(seeder.client, ann, 'POST', `/api/nodes/${project}/shares`, { type: 'public' }));
    expect((await fetchRaw(store, `${open.url}/../Dropbox?download=zip`)).status).toBe(404);
    expect((await fetchRaw(store, `${open.url}/Nothing?download=zip`)).status).toBe(404);
  });
});
