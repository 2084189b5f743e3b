/**
 * The StoreClient contract, run against a real store: every operation the bridge relies on,
 * with the results normalised as the bridge expects them.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError, nodeId, type NodeEntry } from '../../src/store-client/index.js';
import { storeFixture, type StoreFixture, type TestUser } from '../helpers/store-fixture.js';

const home = nodeId('home');

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function find(entries: NodeEntry[], name: string): NodeEntry {
  const entry = entries.find((e) => e.name === name);
  if (!entry) throw new Error(`${name} not listed`);
  return entry;
}

describe('StoreClient contract (real store)', () => {
  let f: StoreFixture;
  let u: TestUser;
  beforeAll(async () => {
    f = await storeFixture();
    u = await f.newUser({ quotaBytes: 10_000 });
  });
  afterAll(async () => {
    await f.close();
  });

  it('logs in with a session that carries user id, token, file access key and a 24 h expiry', async () => {
    const s = await f.client.login(u.email, u.password);
    expect(s.userId).toBe(u.uuid);
    expect(s.token.split('.')).toHaveLength(3);
    expect(s.fileAccessKey.length).toBeGreaterThan(10);
    expect(s.expiresAtMs - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect(s.expiresAtMs - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000 + 5000);
  });

  it('refuses wrong credentials as unauthenticated', async () => {
    await expect(f.client.login(u.email, 'Wrong-Passw0rd')).rejects.toMatchObject({ kind: 'unauthenticated', httpStatus: 401 });
  });

  it('creates, lists, renames, moves, copies, stars and deletes with normalised entries', async () => {
    const s = u.session;
    await f.client.createFolder(s, home, 'contract');
    const folder = find(await f.client.listFolder(s, home), 'contract');
    expect(folder).toMatchObject({ kind: 'folder', sizeBytes: 0, isStarred: false });
    expect(folder.revision).toBeUndefined();
    expect(folder.updatedMs).toBeGreaterThan(1_600_000_000_000);

    const body = 'hello contract';
    const uploaded = await f.client.upload(s, { folder: folder.id, name: 'a b#c?.txt' }, Readable.from([Buffer.from(body)]), body.length);
    const file = find(await f.client.listFolder(s, folder.id), 'a b#c?.txt');
    expect(file).toMatchObject({ kind: 'file', sizeBytes: body.length, revision: 1 });
    expect(uploaded).toEqual({ id: file.id, revision: 1, sizeBytes: body.length });

    await f.client.upload(s, { revisionOf: file.id, name: file.name }, Readable.from([Buffer.from('v2')]));
    expect(find(await f.client.listFolder(s, folder.id), 'a b#c?.txt')).toMatchObject({ id: file.id, revision: 2, sizeBytes: 2 });

    const latest = await f.client.download(s, file.id, file.name);
    expect(await text(latest.body)).toBe('v2');
    expect(latest).toMatchObject({ status: 200, rangeHonoured: false, totalBytes: 2, etag: `"${file.id}-2"` });
    const first = await f.client.download(s, file.id, file.name, { version: 1, range: { start: 6, end: 13 } });
    expect(await text(first.body)).toBe('contract');
    expect(first).toMatchObject({ status: 206, rangeHonoured: true, totalBytes: body.length, contentLength: 8 });

    await f.client.rename(s, file.id, 'renamed.txt');
    await f.client.createFolder(s, home, 'other');
    const other = find(await f.client.listFolder(s, home), 'other');
    await f.client.moveInto(s, file.id, other.id);
    await f.client.copyInto(s, file.id, folder.id);
    expect((await f.client.listFolder(s, other.id)).map((e) => e.name)).toEqual(['renamed.txt']);
    const copy = find(await f.client.listFolder(s, folder.id), 'renamed.txt');
    expect(copy.id).not.toBe(file.id);

    await f.client.setStarred(s, copy.id, true);
    expect(find(await f.client.listFolder(s, nodeId('favorites')), 'renamed.txt').isStarred).toBe(true);

    const details = await f.client.details(s, copy.id);
    expect(details).toMatchObject({ id: copy.id, name: 'renamed.txt', kind: 'file', ownerType: 'User', ownerId: u.uuid });
    expect((await f.client.path(s, copy.id)).map((p) => p.name)).toEqual(['home', 'contract', 'renamed.txt']);
    expect(await f.client.myAccess(s, copy.id)).toEqual(expect.arrayContaining(['read', 'write', 'delete', 'download']));

    await f.client.remove(s, copy.id);
    expect(find(await f.client.listFolder(s, nodeId('trash')), 'renamed.txt').id).toBe(copy.id);
  });

  it('classifies store failures into kinds', async () => {
    const s = u.session;
    await expect(f.client.listFolder(s, nodeId('00000000-0000-4000-8000-000000000000'))).rejects.toMatchObject({ kind: 'not-found' });
    await f.client.createFolder(s, home, 'dup');
    await expect(f.client.createFolder(s, home, 'dup')).rejects.toMatchObject({ kind: 'conflict', code: 'name_conflict' });
    await expect(f.client.createFolder(s, home, 'a/b')).rejects.toMatchObject({ kind: 'invalid' });
    await expect(f.client.rename(s, home, 'x')).rejects.toMatchObject({ kind: 'forbidden' });
    const big = Buffer.alloc(20_000, 1);
    await expect(f.client.upload(s, { folder: home, name: 'big.bin' }, Readable.from([big]), big.length)).rejects.toMatchObject({ kind: 'quota' });
    const err = await f.client.listFolder(s, nodeId('00000000-0000-4000-8000-000000000000')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).operation).toBe('nodes.listFolder');
  });

  it('reports the quota and usage of the current user', async () => {
    const profile = await f.client.currentUser(u.session);
    expect(profile).toMatchObject({ id: u.uuid, email: u.email, diskQuotaBytes: 10_000, isActive: true, isAdmin: false });
    expect(profile.diskUsedBytes).toBeGreaterThan(0);
  });

  it('streams an upload whose size is unknown (chunked) and gets the same bytes back', async () => {
    const s = u.session;
    const parts = Array.from({ length: 50 }, (_, i) => Buffer.alloc(100, i));
    const expected = createHash('sha256').update(Buffer.concat(parts)).digest('hex');
    const result = await f.client.upload(s, { folder: home, name: 'chunked.bin' }, Readable.from(parts));
    const got = await f.client.download(s, result.id as ReturnType<typeof nodeId>, 'chunked.bin');
    const hash = createHash('sha256');
    for await (const chunk of got.body) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(expected);
  });

  it('logs out: the token stops working', async () => {
    const s = await f.client.login(u.email, u.password);
    await f.client.logout(s);
    await expect(f.client.listFolder(s, home)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });
});
