/**
 * The two-step upload against a real store: new files, new revisions (through a file target
 * and through a same-name upload), the name rule, the upload token (single use, 5 s to be
 * presented, bound to the user and target that asked for it), access to other users' folders,
 * virtual folders, and the quota (checked while streaming; a refused upload stores nothing).
 */
import { blobBytes, stagedParts, stagingDir } from '../../helpers/blobs.js';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, nodeId, type RawResponse, type HttpStoreClient } from '../../../src/store-client/index.js';
import { createContentHasher, INLINE_MAX_BYTES } from '../../../src/store/blobs/staging.js';
import { inlineBlob } from '../../../src/store/storage/blob-refs.js';
import type { RevisionRow } from '../../../src/store/storage/revisions.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import {
  backendBlobs,
  blobInBackend,
  readBlobRefs,
  createFolder,
  createSeeder,
  readDiskUsed,
  nodeRow,
  raw,
  blobHashOf,
  checksumsOf,
  sha256Of,
  topLevelRow,
  type Seeder,
  type SeededUser,
} from '../../helpers/seed.js';
import { MiB, multipartStream, patternHash, patternStream, readAll, type MultipartOptions } from '../../helpers/stream-helpers.js';

let store: TestStore;
let seeder: Seeder;
let client: HttpStoreClient;
let serial = 0;

/** A fresh user per test; names are letters only (the admin rule forbids digits). */
async function newUser(options: { quotaBytes?: number } = {}): Promise<SeededUser & { home: string }> {
  serial += 1;
  let suffix = '';
  for (let n = serial; n > 0; n = Math.floor(n / 26)) suffix = String.fromCharCode(97 + (n % 26)) + suffix;
  const user = await seeder.user(`Uploader ${suffix}`, options);
  return { ...user, home: (await topLevelRow(store, user.uuid, 'home')).uuid };
}

async function tokenFor(user: SeededUser, target: string): Promise<string> {
  return client.requestUploadToken(user.session, nodeId(target));
}

/** POST /upload/{token} with a hand-made multipart body; status and parsed body. */
async function postUpload(token: string, content: Readable | Buffer | string, options: MultipartOptions = {}, headers: Record<string, string> = {}): Promise<RawResponse> {
  const { contentType, body } = multipartStream(content, options);
  return client.http.requestRaw({ method: 'POST', path: `/upload/${token}`, body, headers: { 'content-type': contentType, ...headers } });
}

async function uploadAs(user: SeededUser, target: string, filename: string, content: Readable | Buffer | string): Promise<RawResponse> {
  return postUpload(await tokenFor(user, target), content, { filename });
}

function revisions(nodeUuid: string): Promise<RevisionRow[]> {
  return store.ctx.storage.sql.all<RevisionRow>('SELECT * FROM revisions WHERE node_uuid = ? ORDER BY revision', [nodeUuid]);
}

/** A folder's children by name (sorted here by code unit: PostgreSQL's ORDER BY follows its collation). */
async function childrenOf(folderUuid: string): Promise<Array<{ uuid: string; name: string; type: string }>> {
  const rows = await store.ctx.storage.sql.all<{ uuid: string; name: string; type: string }>('SELECT uuid, name, type FROM nodes WHERE parent_uuid = ?', [folderUuid]);
  return rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The stored bytes of a blob, wherever the store keeps them (its database row or a file). */
async function blobContent(hash: string): Promise<string> {
  return (await blobBytes(store, hash)).toString('utf8');
}

beforeAll(async () => {
  store = await startTestStore();
  seeder = await createSeeder(store);
  client = seeder.client;
});

afterAll(async () => {
  await client.close();
  await store.close();
});

describe('GET /api/nodes/{id}/upload', () => {
  it('answers the upload token response of docs/api.md for a folder, and stores only the token hash', async () => {
    const ann = await newUser();
    const res = await raw(client, ann.session, 'GET', '/api/nodes/home/upload');
    expect(res.status).toBe(200);
    const body = res.body as { token: string; status: string; msg: string };
    expect(body).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), status: 'success', msg: expect.any(String) });
    const row = await store.ctx.storage.sql.get('SELECT token_hash, user_uuid, target_uuid, used FROM upload_tokens WHERE user_uuid = ?', [ann.uuid]);
    expect(row).toEqual({ token_hash: sha256Of(body.token), user_uuid: ann.uuid, target_uuid: ann.home, used: null });
  });

  it('answers 404 for another user\'s folder, in both identifier forms, exactly as for an unknown id', async () => {
    const ann = await newUser();
    const bob = await newUser();
    const unknown = await raw(client, ann.session, 'GET', '/api/nodes/00000000-0000-4000-8000-000000000000/upload');
    expect(unknown.status).toBe(404);
    for (const id of [bob.home, `home:${bob.uuid}`, (await topLevelRow(store, bob.uuid, 'incoming')).uuid]) {
      const res = await raw(client, ann.session, 'GET', `/api/nodes/${id}/upload`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(unknown.body);
    }
    expect(await store.ctx.storage.sql.get('SELECT COUNT(*) AS n FROM upload_tokens WHERE user_uuid = ?', [ann.uuid])).toEqual({ n: 0 });
  });

  it.each(['favorites', 'public_shares', 'private_shares', 'shared_with_you', 'trash'])('refuses a token for %s (403 virtual_folder)', async (kind) => {
    const ann = await newUser();
    const res = await raw(client, ann.session, 'GET', `/api/nodes/${kind}/upload`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ status: 'error', code: 'virtual_folder' });
  });

  it('refuses a token for a file lying in trash', async () => {
    const ann = await newUser();
    const created = await uploadAs(ann, 'home', 'old.txt', 'old');
    const uuid = (created.body as { data: { uuid: string } }).data.uuid;
    await client.remove(ann.session, nodeId(uuid));
    const res = await raw(client, ann.session, 'GET', `/api/nodes/${uuid}/upload`);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'virtual_folder' });
  });

  it('answers 401 without a bearer token', async () => {
    const res = await raw(client, undefined, 'GET', '/api/nodes/home/upload');
    expect(res.status).toBe(401);
  });
});

describe('POST /upload/{token}: files and revisions', () => {
  it('stores a new file at revision 1 and answers its uuid, name, revision and size', async () => {
    const ann = await newUser();
    const before = (await store.ctx.storage.sql.get<{ updated: number }>('SELECT updated FROM nodes WHERE uuid = ?', [ann.home]))!;
    store.clock.advance(1_000);
    const res = await uploadAs(ann, 'home', 'notes.txt', 'hello, world');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success',
      msg: expect.any(String),
      data: { uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'notes.txt', revision: 1, size: 12, checksums: checksumsOf('hello, world'), file_id: expect.any(Number) },
    });
    const { uuid } = (res.body as { data: { uuid: string } }).data;
    expect(await nodeRow(store, uuid)).toMatchObject({ name: 'notes.txt', type: 'File', owner_uuid: ann.uuid, owner_type: 'User', parent_uuid: ann.home, revision: 1, size: 12 });
    const [rev] = await revisions(uuid);
    expect(rev).toMatchObject({ revision: 1, size: 12, blob_hash: blobHashOf('hello, world'), uploader_uuid: ann.uuid });
    expect(await blobContent(blobHashOf('hello, world'))).toBe('hello, world');
    expect(await readDiskUsed(store, ann.uuid)).toBe(12);
    const after = (await store.ctx.storage.sql.get<{ updated: number }>('SELECT updated FROM nodes WHERE uuid = ?', [ann.home]))!;
    expect(after.updated).toBeGreaterThan(before.updated);
    const listed = await client.listFolder(ann.session, nodeId('home'));
    expect(listed).toEqual([expect.objectContaining({ id: uuid, name: 'notes.txt', kind: 'file', sizeBytes: 12, revision: 1 })]);
  });

  it('keeps a small file in its database row and a large one in the blob backend, each readable in full', async () => {
    const ann = await newUser();
    const small = 'x'.repeat(4096);
    const large = Buffer.alloc(INLINE_MAX_BYTES + 1, 7);
    expect((await uploadAs(ann, 'home', 'small.txt', small)).status).toBe(200);
    expect((await uploadAs(ann, 'home', 'large.bin', large)).status).toBe(200);
    expect((await inlineBlob(store.ctx.storage.sql, blobHashOf(small)))?.toString()).toBe(small);
    expect(await blobInBackend(store, blobHashOf(small))).toBe(false);
    expect((await inlineBlob(store.ctx.storage.sql, blobHashOf(large)))).toBeUndefined();
    expect(await blobInBackend(store, blobHashOf(large))).toBe(true);
    expect(await blobContent(blobHashOf(large))).toBe(large.toString());
    expect(await readDiskUsed(store, ann.uuid)).toBe(4096 + INLINE_MAX_BYTES + 1);
  });

  it('stores an upload into a sub-folder and into a qualified top-level identifier', async () => {
    const ann = await newUser();
    const docs = await createFolder(client, ann.session, 'home', 'docs');
    expect((await uploadAs(ann, docs, 'a.txt', 'A')).status).toBe(200);
    expect((await uploadAs(ann, `incoming:${ann.uuid}`, 'b.txt', 'B')).status).toBe(200);
    expect((await childrenOf(docs)).map((c) => c.name)).toEqual(['a.txt']);
    expect((await childrenOf((await topLevelRow(store, ann.uuid, 'incoming')).uuid)).map((c) => c.name)).toEqual(['b.txt']);
  });

  it('adds revision n+1 when the target is a file, keeping the file\'s name whatever the part is called', async () => {
    const ann = await newUser();
    const first = await uploadAs(ann, 'home', 'report.txt', 'version one');
    const { uuid } = (first.body as { data: { uuid: string } }).data;
    const second = await uploadAs(ann, uuid, 'ignored-name.bin', 'version two, longer');
    expect(second.status).toBe(200);
    expect((second.body as { data: unknown }).data).toEqual({ uuid, name: 'report.txt', revision: 2, size: 19, checksums: checksumsOf('version two, longer'), file_id: (await nodeRow(store, uuid))?.file_id });
    expect(await nodeRow(store, uuid)).toMatchObject({ name: 'report.txt', revision: 2, size: 19 });
    expect((await revisions(uuid)).map((r) => [r.revision, r.size, r.blob_hash])).toEqual([
      [1, 11, blobHashOf('version one')],
      [2, 19, blobHashOf('version two, longer')],
    ]);
    expect((await childrenOf(ann.home)).map((c) => c.name)).toEqual(['report.txt']);
    expect(await readDiskUsed(store, ann.uuid)).toBe(11 + 19);
  });

  it('turns a new-file upload whose name exists into revision 2 of that file', async () => {
    const ann = await newUser();
    const first = await uploadAs(ann, 'home', 'same.txt', 'one');
    const again = await uploadAs(ann, 'home', 'same.txt', 'two!');
    expect(again.status).toBe(200);
    const firstData = (first.body as { data: { uuid: string } }).data;
    expect((again.body as { data: unknown }).data).toEqual({ uuid: firstData.uuid, name: 'same.txt', revision: 2, size: 4, checksums: checksumsOf('two!'), file_id: (await nodeRow(store, firstData.uuid))?.file_id });
    expect(await childrenOf(ann.home)).toHaveLength(1);
    expect(await readDiskUsed(store, ann.uuid)).toBe(3 + 4);
  });

  it('refuses a new file named like a folder in the target (409 name_conflict) and stores nothing', async () => {
    const ann = await newUser();
    await createFolder(client, ann.session, 'home', 'taken');
    const blobsBefore = await backendBlobs(store);
    const content = 'content that must not be kept 1b0e';
    const res = await uploadAs(ann, 'home', 'taken', content);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 'error', code: 'name_conflict' });
    expect((await childrenOf(ann.home)).map((c) => c.type)).toEqual(['Dir']);
    expect(await blobInBackend(store, blobHashOf(content))).toBe(false);
    expect(await backendBlobs(store)).toEqual(blobsBefore);
    expect(await readDiskUsed(store, ann.uuid)).toBe(0);
    expect(stagedParts(stagingDir(store))).toEqual([]);
  });

  it('keeps a non-ASCII name byte for byte (quoted UTF-8 and RFC 5987 forms)', async () => {
    const ann = await newUser();
    const name = 'Übersicht – 日本語 😀.txt';
    const rawRes = await uploadAs(ann, 'home', name, 'raw');
    expect(rawRes.status).toBe(200);
    expect((rawRes.body as { data: { name: string } }).data.name).toBe(name);
    const docs = await createFolder(client, ann.session, 'home', 'docs');
    const viaClient = await client.upload(ann.session, { folder: nodeId(docs), name }, Readable.from([Buffer.from('client')]), 6);
    expect((await nodeRow(store, viaClient.id as string))?.name).toBe(name);
  });

  it('shares the bytes of identical uploads but counts each toward disk_used', async () => {
    const ann = await newUser();
    await uploadAs(ann, 'home', 'one.txt', 'identical bytes 7c1d');
    await uploadAs(ann, 'home', 'two.txt', 'identical bytes 7c1d');
    expect(await readBlobRefs(store, blobHashOf('identical bytes 7c1d'))).toBe(2);
    expect(await readDiskUsed(store, ann.uuid)).toBe(2 * 20);
  });

  it('stores a large upload streamed in 1 MiB chunks with the right hash and size', async () => {
    const ann = await newUser();
    const size = 12 * MiB + 123;
    const res = await postUpload(await tokenFor(ann, 'home'), patternStream(size), { filename: 'big.bin' });
    expect(res.status).toBe(200);
    const { uuid } = (res.body as { data: { uuid: string } }).data;
    expect((await revisions(uuid))[0]).toMatchObject({ size, blob_hash: patternHash(size, createContentHasher()) });
    expect(await readDiskUsed(store, ann.uuid)).toBe(size);
  });

  it('stores an empty file', async () => {
    const ann = await newUser();
    const res = await uploadAs(ann, 'home', 'empty.txt', '');
    expect(res.status).toBe(200);
    expect((res.body as { data: { size: number } }).data.size).toBe(0);
  });
});

describe('POST /upload/{token}: refused bodies', () => {
  it.each([
    ['empty', ''],
    ['dot', '.'],
    ['dot-dot', '..'],
    ['slash', 'a/b.txt'],
    ['too long', `${'é'.repeat(128)}.txt`],
  ])('refuses a %s file name (400 invalid_name) and stores nothing', async (_label, filename) => {
    const ann = await newUser();
    const content = `rejected ${filename.length}`;
    const res = await uploadAs(ann, 'home', filename, content);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 'error', code: 'invalid_name' });
    expect(await childrenOf(ann.home)).toEqual([]);
    expect(await blobInBackend(store, blobHashOf(content))).toBe(false);
    expect(await readDiskUsed(store, ann.uuid)).toBe(0);
  });

  it('answers 400 when the form has no part named file', async () => {
    const ann = await newUser();
    const noFile = await postUpload(await tokenFor(ann, 'home'), '', { withoutFile: true, fieldsBefore: { note: 'x' } });
    expect(noFile.status).toBe(400);
    expect(noFile.body).toMatchObject({ status: 'error', code: 'invalid_request' });
    const otherField = await postUpload(await tokenFor(ann, 'home'), 'data', { fieldName: 'upload', filename: 'x.txt' });
    expect(otherField.status).toBe(400);
    expect(await childrenOf(ann.home)).toEqual([]);
  });

  it('accepts text fields before the file part', async () => {
    const ann = await newUser();
    const res = await postUpload(await tokenFor(ann, 'home'), 'data', { filename: 'x.txt', fieldsBefore: { comment: 'hi' } });
    expect(res.status).toBe(200);
  });

  it('answers 400 to a body that is not multipart', async () => {
    const ann = await newUser();
    const token = await tokenFor(ann, 'home');
    const res = await client.http.requestRaw({ method: 'POST', path: `/upload/${token}`, json: { file: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request' });
  });

  it('answers 400 to a multipart body cut off inside the file part, and stores nothing', async () => {
    const ann = await newUser();
    const token = await tokenFor(ann, 'home');
    const body = Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\npartial content', 'utf8');
    const res = await client.http.requestRaw({
      method: 'POST',
      path: `/upload/${token}`,
      body,
      headers: { 'content-type': 'multipart/form-data; boundary=XyZ' },
    });
    expect(res.status).toBe(400);
    expect(await childrenOf(ann.home)).toEqual([]);
    expect(stagedParts(stagingDir(store))).toEqual([]);
  });
});

describe('the upload token', () => {
  it('works once: presenting it again answers 410 upload_token_used', async () => {
    const ann = await newUser();
    const token = await tokenFor(ann, 'home');
    expect((await postUpload(token, 'first', { filename: 'once.txt' })).status).toBe(200);
    const again = await postUpload(token, 'second', { filename: 'twice.txt' });
    expect(again.status).toBe(410);
    expect(again.body).toMatchObject({ status: 'error', code: 'upload_token_used' });
    expect((await childrenOf(ann.home)).map((c) => c.name)).toEqual(['once.txt']);
  });

  it('is used up even when the upload it carried was refused', async () => {
    const ann = await newUser();
    const token = await tokenFor(ann, 'home');
    expect((await postUpload(token, 'x', { filename: '..' })).status).toBe(400);
    expect((await postUpload(token, 'x', { filename: 'fine.txt' })).status).toBe(410);
  });

  it('answers 410 upload_token_used for a token the store never issued', async () => {
    for (const token of ['A'.repeat(43), 'not%20a%20token']) {
      const res = await postUpload(token, 'x', { filename: 'x.txt' });
      expect(res.status).toBe(410);
      expect(res.body).toMatchObject({ code: 'upload_token_used' });
    }
  });

  it('expires 5 s after it was issued (410 upload_token_expired) and is still good at 4999 ms', async () => {
    const ann = await newUser();
    store.clock.freeze();
    const late = await tokenFor(ann, 'home');
    const inTime = await tokenFor(ann, 'home');
    store.clock.advance(4_999);
    const ok = await postUpload(inTime, 'in time', { filename: 'in-time.txt' });
    expect(ok.status).toBe(200);
    store.clock.advance(2);
    const expired = await postUpload(late, 'too late', { filename: 'late.txt' });
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ status: 'error', code: 'upload_token_expired' });
    expect((await childrenOf(ann.home)).map((c) => c.name)).toEqual(['in-time.txt']);
  });

  it('bounds only the presenting: a slow transfer that started in time completes', async () => {
    const ann = await newUser();
    const token = await tokenFor(ann, 'home');
    let advanced = false;
    const slow = new Readable({
      read() {
        if (!advanced) {
          advanced = true;
          this.push(Buffer.from('first half, '));
          // The store has the token by now; time passes mid-transfer.
          setImmediate(() => {
            store.clock.advance(60_000);
            this.push(Buffer.from('second half'));
            this.push(null);
          });
        }
      },
    });
    const res = await postUpload(token, slow, { filename: 'slow.txt' });
    expect(res.status).toBe(200);
    expect(await blobContent(blobHashOf('first half, second half'))).toBe('first half, second half');
  });

  it('always lands in the target and account of the user who asked for it, whoever presents it', async () => {
    const ann = await newUser();
    const bob = await newUser();
    const token = await tokenFor(ann, 'home');
    // Bob presents Ann's token with his own bearer token: the upload step takes no
    // Authorization, the identity is the token's.
    const res = await postUpload(token, 'for ann', { filename: 'from-bob.txt' }, { authorization: `Bearer ${bob.session.token}` });
    expect(res.status).toBe(200);
    const { uuid } = (res.body as { data: { uuid: string } }).data;
    expect(await nodeRow(store, uuid)).toMatchObject({ owner_uuid: ann.uuid, parent_uuid: ann.home });
    expect((await revisions(uuid))[0]?.uploader_uuid).toBe(ann.uuid);
    expect(await readDiskUsed(store, ann.uuid)).toBe(7);
    expect(await readDiskUsed(store, bob.uuid)).toBe(0);
    expect(await childrenOf(bob.home)).toEqual([]);
  });

  it('dies with the session that asked for it: after logout the upload answers 401', async () => {
    const ann = await newUser();
    const token = await tokenFor(ann, 'home');
    await client.logout(ann.session);
    const res = await postUpload(token, 'x', { filename: 'after-logout.txt' });
    expect(res.status).toBe(401);
    expect(await childrenOf(ann.home)).toEqual([]);
  });

  it('answers 404 when the target folder was deleted for good before the token was presented', async () => {
    const ann = await newUser();
    const docs = await createFolder(client, ann.session, 'home', 'docs');
    const token = await tokenFor(ann, docs);
    await client.remove(ann.session, nodeId(docs));
    const trashed = await childrenOf((await topLevelRow(store, ann.uuid, 'trash')).uuid);
    await client.remove(ann.session, nodeId((trashed[0] as { uuid: string }).uuid));
    const res = await postUpload(token, 'x', { filename: 'orphan.txt' });
    expect(res.status).toBe(404);
  });
});

describe('quota', () => {
  it('refuses an upload that would pass disk_quota (507) and keeps nothing of it', async () => {
    const ann = await newUser({ quotaBytes: 1_000 });
    expect((await uploadAs(ann, 'home', 'first.bin', 'a'.repeat(600))).status).toBe(200);
    const blobsBefore = await backendBlobs(store);
    const res = await uploadAs(ann, 'home', 'second.bin', 'b'.repeat(600));
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ status: 'error', code: 'quota_exceeded' });
    expect((await childrenOf(ann.home)).map((c) => c.name)).toEqual(['first.bin']);
    expect(await backendBlobs(store)).toEqual(blobsBefore);
    expect(await readDiskUsed(store, ann.uuid)).toBe(600);
    expect(stagedParts(stagingDir(store))).toEqual([]);
  });

  it('of many parallel uploads by one user (committed together on PostgreSQL), refuses exactly those past the quota, and the rest are stored whole', async () => {
    const ann = await newUser({ quotaBytes: 10_000 });
    // 16 uploads of 1,000 bytes (distinct bytes each) race for a quota of 10: ten fit.
    const tokens = await Promise.all(Array.from({ length: 16 }, () => tokenFor(ann, 'home')));
    const answers = await Promise.all(tokens.map((token, i) => postUpload(token, String.fromCharCode(65 + i).repeat(1_000), { filename: `p-${i}.bin` })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 507)).toHaveLength(6);
    const stored = await childrenOf(ann.home);
    expect(stored).toHaveLength(10);
    for (const child of stored) {
      const [revision] = await revisions(child.uuid);
      const letter = String.fromCharCode(65 + Number(/p-(\d+)\.bin/.exec(child.name)?.[1]));
      expect(await blobContent(revision!.blob_hash)).toBe(letter.repeat(1_000));
    }
    expect(await readDiskUsed(store, ann.uuid)).toBe(10_000);
  });

  it('accepts an upload that fills the quota exactly', async () => {
    const ann = await newUser({ quotaBytes: 1_000 });
    expect((await uploadAs(ann, 'home', 'exact.bin', 'x'.repeat(1_000))).status).toBe(200);
    expect(await readDiskUsed(store, ann.uuid)).toBe(1_000);
  });

  it('counts a new revision against the quota like a new file', async () => {
    const ann = await newUser({ quotaBytes: 1_000 });
    const first = await uploadAs(ann, 'home', 'grow.bin', 'x'.repeat(600));
    const { uuid } = (first.body as { data: { uuid: string } }).data;
    const res = await uploadAs(ann, uuid, 'grow.bin', 'y'.repeat(500));
    expect(res.status).toBe(507);
    expect(await nodeRow(store, uuid)).toMatchObject({ revision: 1, size: 600 });
    expect(await revisions(uuid)).toHaveLength(1);
  });

  it('stops a streamed upload as soon as it passes the quota, answering before the body is sent, and keeps the connection usable', async () => {
    const ann = await newUser({ quotaBytes: 2 * MiB });
    const blobsBefore = await backendBlobs(store);
    const size = 128 * MiB;
    let producedBytes = 0;
    const source = patternStream(size, {
      onChunk: (produced) => {
        producedBytes = produced;
      },
    });
    // No Content-Length: the excess is only found while streaming.
    const res = await postUpload(await tokenFor(ann, 'home'), source, { filename: 'huge.bin' });
    expect(res.status).toBe(507);
    expect(res.body).toMatchObject({ status: 'error', code: 'quota_exceeded' });
    expect(producedBytes).toBeLessThan(size);
    source.destroy();
    expect(await backendBlobs(store)).toEqual(blobsBefore);
    expect(await childrenOf(ann.home)).toEqual([]);
    expect(await readDiskUsed(store, ann.uuid)).toBe(0);
    expect(stagedParts(stagingDir(store))).toEqual([]);
    expect((await uploadAs(ann, 'home', 'small.txt', 'fits')).status).toBe(200);
  });

  it('keeps disk_used equal to the bytes of every revision the user owns', async () => {
    const ann = await newUser();
    const a = await uploadAs(ann, 'home', 'a.txt', '12345');
    await uploadAs(ann, 'home', 'a.txt', '1234567');
    await uploadAs(ann, (a.body as { data: { uuid: string } }).data.uuid, 'a.txt', '1');
    await uploadAs(ann, 'incoming', 'b.txt', '123');
    const sum = (await store.ctx.storage.sql.get<{ total: number }>(
      'SELECT COALESCE(SUM(r.size), 0) AS total FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ?',
      [ann.uuid],
    ))!;
    expect(sum.total).toBe(5 + 7 + 1 + 3);
    expect(await readDiskUsed(store, ann.uuid)).toBe(sum.total);
    expect((await client.currentUser(ann.session)).diskUsedBytes).toBe(sum.total);
  });
});

describe('edition 1.0', () => {
  it('serves both upload steps', async () => {
    const old = await startTestStore({ edition: '1.0' });
    const oldClient = createStoreClient(old.url, { retries: 0 });
    try {
      // Edition 1.0 has no admin endpoints; the built-in admin uploads into its own home.
      const admin = await oldClient.login('admin', old.adminPassword);
      const result = await oldClient.upload(admin, { folder: nodeId('home'), name: 'v1.txt' }, Readable.from([Buffer.from('one')]), 3);
      expect(result).toMatchObject({ revision: 1, sizeBytes: 3 });
    } finally {
      await oldClient.close();
      await old.close();
    }
  });
});
