/**
 * View and download against a real store: latest and older revisions, the headers (ETag,
 * Last-Modified, Content-Type, both Content-Disposition forms), single ranges and 416,
 * conditional GETs (304 by ETag and by date, If-Range, If-Match), HEAD, and who may fetch:
 * a revoked fileaccesskey, another user's key, folders, edition 1.0.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, LATEST_VERSION, nodeId, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { createFolder, createSeeder, topLevelRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { MiB, patternBytes, patternHash, patternStream } from '../../helpers/stream-helpers.js';

let store: TestStore;
let seeder: Seeder;
let client: HttpStoreClient;
let ann: SeededUser;
let bob: SeededUser;

/** File with two revisions: "first revision" then "second revision, longer". */
let notesId: string;
const NOTES_NAME = 'Notizen – Übersicht 日本.txt';
const REVISION_1 = 'first revision';
const REVISION_2 = 'second revision, longer';

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function fetchPath(path: string, options: { method?: 'GET' | 'HEAD'; headers?: Record<string, string> } = {}): Promise<Fetched> {
  const res = await request(store.url + path, { method: options.method ?? 'GET', headers: options.headers ?? {} });
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) };
}

function fileUrl(s: StoreSession, id: string, options: { version?: number | string; mode?: 'view' | 'download'; name?: string } = {}): string {
  return client.downloadPath(s, nodeId(id), options.name ?? 'whatever.bin', options.version ?? LATEST_VERSION, options.mode ?? 'download');
}

async function revisionCreated(id: string, revision: number): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ created: number }>('SELECT created FROM revisions WHERE node_uuid = ? AND revision = ?', [id, revision]);
  if (!row) throw new Error(`no revision ${revision} of ${id}`);
  return row.created;
}

beforeAll(async () => {
  store = await startTestStore();
  seeder = await createSeeder(store);
  client = seeder.client;
  ann = await seeder.user('Ann Reader');
  bob = await seeder.user('Bob Other');
  notesId = await uploadFile(client, ann.session, 'home', NOTES_NAME, REVISION_1);
  store.clock.advance(5_000);
  await uploadFile(client, ann.session, 'home', NOTES_NAME, REVISION_2);
});

afterAll(async () => {
  await client.close();
  await store.close();
});

describe('GET /resources/auth/{view|download}/...: content', () => {
  it('sends the latest revision for 999999999999999 with its headers', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId));
    expect(res.status).toBe(200);
    expect(res.body.toString('utf8')).toBe(REVISION_2);
    expect(res.headers).toMatchObject({
      etag: `"${notesId}-2"`,
      'last-modified': new Date(await revisionCreated(notesId, 2)).toUTCString(),
      'content-length': String(Buffer.byteLength(REVISION_2)),
      'content-type': 'text/plain',
      'accept-ranges': 'bytes',
      'cache-control': 'private',
      'x-content-type-options': 'nosniff',
    });
  });

  it('sends an older revision by number, with that revision\'s ETag and date', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId, { version: 1 }));
    expect(res.status).toBe(200);
    expect(res.body.toString('utf8')).toBe(REVISION_1);
    expect(res.headers.etag).toBe(`"${notesId}-1"`);
    expect(res.headers['last-modified']).toBe(new Date(await revisionCreated(notesId, 1)).toUTCString());
  });

  it('answers 404 for a revision the file does not have, and 400 for a version that is not a number', async () => {
    for (const version of [3, 0]) {
      const res = await fetchPath(fileUrl(ann.session, notesId, { version }));
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString())).toMatchObject({ status: 'error', code: 'not_found' });
    }
    const bad = await fetchPath(fileUrl(ann.session, notesId, { version: 'latest' }));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body.toString())).toMatchObject({ status: 'error', code: 'invalid_request' });
  });

  it('names the file inline for view and as an attachment for download, with the node\'s real name (RFC 6266 filename*)', async () => {
    const encoded = "filename*=UTF-8''Notizen%20%E2%80%93%20%C3%9Cbersicht%20%E6%97%A5%E6%9C%AC.txt";
    const view = await fetchPath(fileUrl(ann.session, notesId, { mode: 'view', name: 'cosmetic.pdf' }));
    expect(view.status).toBe(200);
    // The plain `filename` is an ASCII stand-in for old clients; `filename*` carries the name.
    expect(view.headers['content-disposition']).toBe(`inline; filename="Notizen _ _bersicht __.txt"; ${encoded}`);
    const download = await fetchPath(fileUrl(ann.session, notesId, { mode: 'download', name: 'cosmetic.pdf' }));
    expect(download.headers['content-disposition']).toBe(`attachment; filename="Notizen _ _bersicht __.txt"; ${encoded}`);
    expect(download.headers['content-type']).toBe('text/plain');
  });

  it('sends an ASCII name as a plain filename', async () => {
    const id = await uploadFile(client, ann.session, 'home', 'plain "quoted" name.txt', 'x');
    const res = await fetchPath(fileUrl(ann.session, id, { mode: 'download' }));
    expect(res.headers['content-disposition']).toBe('attachment; filename="plain \\"quoted\\" name.txt"');
  });

  it('derives Content-Type from the name, falling back to application/octet-stream', async () => {
    const pdf = await uploadFile(client, ann.session, 'home', 'paper.pdf', '%PDF-1.4');
    const unknown = await uploadFile(client, ann.session, 'home', 'data.unknownext', 'x');
    const plain = await uploadFile(client, ann.session, 'home', 'README', 'x');
    expect((await fetchPath(fileUrl(ann.session, pdf))).headers['content-type']).toBe('application/pdf');
    expect((await fetchPath(fileUrl(ann.session, unknown))).headers['content-type']).toBe('application/octet-stream');
    expect((await fetchPath(fileUrl(ann.session, plain))).headers['content-type']).toBe('application/octet-stream');
  });

  it('streams a multi-MiB file whole and in a range that crosses chunk boundaries', async () => {
    const size = 3 * MiB + 17;
    const result = await client.upload(ann.session, { folder: nodeId('home'), name: 'big.bin' }, patternStream(size), size);
    const id = result.id as string;
    const whole = await request(store.url + fileUrl(ann.session, id));
    const hash = createHash('sha256');
    for await (const chunk of whole.body) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(patternHash(size));
    const start = MiB - 5;
    const end = 2 * MiB + 10;
    const part = await fetchPath(fileUrl(ann.session, id), { headers: { range: `bytes=${start}-${end}` } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`);
    expect(part.body.equals(patternBytes(start, end - start + 1))).toBe(true);
  });

  it('sends an empty file as 200 with no bytes', async () => {
    const id = await uploadFile(client, ann.session, 'home', 'empty.txt', '');
    const res = await fetchPath(fileUrl(ann.session, id), { headers: { range: 'bytes=0-' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('0');
    expect(res.body.length).toBe(0);
  });
});

describe('ranges and conditional requests', () => {
  it('answers a single range with 206, the exact bytes and Content-Range', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId), { headers: { range: 'bytes=7-14' } });
    expect(res.status).toBe(206);
    expect(res.body.toString('utf8')).toBe(REVISION_2.slice(7, 15));
    expect(res.headers).toMatchObject({
      'content-range': `bytes 7-14/${REVISION_2.length}`,
      'content-length': '8',
      etag: `"${notesId}-2"`,
      'accept-ranges': 'bytes',
    });
  });

  it('answers suffix and open ranges', async () => {
    const suffix = await fetchPath(fileUrl(ann.session, notesId), { headers: { range: 'bytes=-6' } });
    expect(suffix.status).toBe(206);
    expect(suffix.body.toString()).toBe('longer');
    const open = await fetchPath(fileUrl(ann.session, notesId, { version: 1 }), { headers: { range: 'bytes=6-' } });
    expect(open.body.toString()).toBe('revision');
    expect(open.headers['content-range']).toBe(`bytes 6-13/${REVISION_1.length}`);
  });

  it('answers 416 with Content-Range bytes */size for a range past the end', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId), { headers: { range: `bytes=${REVISION_2.length}-` } });
    expect(res.status).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${REVISION_2.length}`);
    expect(JSON.parse(res.body.toString())).toMatchObject({ status: 'error', code: 'range_not_satisfiable' });
  });

  it('answers several disjoint ranges with the whole file', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId), { headers: { range: 'bytes=0-1,5-6' } });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(REVISION_2);
  });

  it('answers 304 without a body when If-None-Match carries the ETag', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId), { headers: { 'if-none-match': `"${notesId}-2"` } });
    expect(res.status).toBe(304);
    expect(res.body.length).toBe(0);
    expect(res.headers.etag).toBe(`"${notesId}-2"`);
    const older = await fetchPath(fileUrl(ann.session, notesId), { headers: { 'if-none-match': `"${notesId}-1"` } });
    expect(older.status).toBe(200);
  });

  it('answers 304 when If-Modified-Since is the Last-Modified date, 200 when the file is newer', async () => {
    const first = await fetchPath(fileUrl(ann.session, notesId));
    const lastModified = first.headers['last-modified'] as string;
    expect((await fetchPath(fileUrl(ann.session, notesId), { headers: { 'if-modified-since': lastModified } })).status).toBe(304);
    const before = new Date(Date.parse(lastModified) - 2_000).toUTCString();
    expect((await fetchPath(fileUrl(ann.session, notesId), { headers: { 'if-modified-since': before } })).status).toBe(200);
  });

  it('honours If-Range with the current ETag and sends the whole file when it does not match', async () => {
    const current = await fetchPath(fileUrl(ann.session, notesId), { headers: { range: 'bytes=0-5', 'if-range': `"${notesId}-2"` } });
    expect(current.status).toBe(206);
    const stale = await fetchPath(fileUrl(ann.session, notesId), { headers: { range: 'bytes=0-5', 'if-range': `"${notesId}-1"` } });
    expect(stale.status).toBe(200);
    expect(stale.body.toString()).toBe(REVISION_2);
    expect(stale.headers['content-range']).toBeUndefined();
  });

  it('answers 412 when If-Match names another revision', async () => {
    const res = await fetchPath(fileUrl(ann.session, notesId), { headers: { 'if-match': `"${notesId}-1"` } });
    expect(res.status).toBe(412);
    expect(JSON.parse(res.body.toString())).toMatchObject({ status: 'error', code: 'precondition_failed' });
  });

  it('answers HEAD with the GET headers and no body', async () => {
    for (const mode of ['view', 'download'] as const) {
      const res = await fetchPath(fileUrl(ann.session, notesId, { mode }), { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(0);
      expect(res.headers).toMatchObject({
        'content-length': String(REVISION_2.length),
        etag: `"${notesId}-2"`,
        'content-type': 'text/plain',
        'content-disposition': expect.stringMatching(mode === 'view' ? /^inline/ : /^attachment/),
      });
    }
  });
});

describe('who may view and download', () => {
  it('refuses a fileaccesskey whose session logged out (401), while a new login\'s key works', async () => {
    const carl = await seeder.user('Carl Leaving');
    const id = await uploadFile(client, carl.session, 'home', 'mine.txt', 'carl');
    expect((await fetchPath(fileUrl(carl.session, id))).status).toBe(200);
    await client.logout(carl.session);
    const revoked = await fetchPath(fileUrl(carl.session, id));
    expect(revoked.status).toBe(401);
    expect(JSON.parse(revoked.body.toString())).toMatchObject({ status: 'error', code: 'unauthenticated' });
    expect(revoked.body.toString()).not.toContain('carl"');
    const again = await client.login(carl.email, 'Secret-Passw0rd');
    expect((await fetchPath(fileUrl(again, id))).body.toString()).toBe('carl');
  });

  it('refuses an unknown fileaccesskey (401)', async () => {
    const res = await fetchPath(`/resources/auth/download/not-a-key/${notesId}/${LATEST_VERSION}/x.txt`);
    expect(res.status).toBe(401);
  });

  it('answers 404 to another user\'s key, with the body an unknown file gets', async () => {
    const theirs = await fetchPath(fileUrl(bob.session, notesId));
    const unknown = await fetchPath(fileUrl(bob.session, '00000000-0000-4000-8000-000000000000'));
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(theirs.body.toString()).toBe(unknown.body.toString());
    expect(theirs.body.toString()).not.toContain(REVISION_2);
    const older = await fetchPath(fileUrl(bob.session, notesId, { version: 1 }), { method: 'HEAD' });
    expect(older.status).toBe(404);
  });

  it('answers 404 for a folder, whether named by UUID or by top-level identifier', async () => {
    const docs = await createFolder(client, ann.session, 'home', 'docs');
    for (const id of [docs, 'home', (await topLevelRow(store, ann.uuid, 'home')).uuid]) {
      const res = await fetchPath(fileUrl(ann.session, id));
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString())).toMatchObject({ code: 'not_found' });
    }
  });

  it('still serves a file from trash to its owner', async () => {
    const id = await uploadFile(client, ann.session, 'home', 'binned.txt', 'in the bin');
    await client.remove(ann.session, nodeId(id));
    expect((await fetchPath(fileUrl(ann.session, id))).body.toString()).toBe('in the bin');
  });
});

describe('edition 1.0', () => {
  it('has no view or download endpoints (404 not_implemented)', async () => {
    const old = await startTestStore({ edition: '1.0' });
    const oldClient = createStoreClient(old.url, { retries: 0 });
    try {
      const admin = await oldClient.login('admin', old.adminPassword);
      const uploaded = await oldClient.upload(admin, { folder: nodeId('home'), name: 'v1.txt' }, Readable.from([Buffer.from('one')]), 3);
      const res = await request(old.url + oldClient.downloadPath(admin, nodeId(uploaded.id as string), 'v1.txt'));
      expect(res.statusCode).toBe(404);
      expect(await res.body.json()).toMatchObject({ status: 'error', code: 'not_implemented' });
    } finally {
      await oldClient.close();
      await old.close();
    }
  });
});
