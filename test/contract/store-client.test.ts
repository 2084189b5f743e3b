/**
 * The StoreClient contract, one script for every implementation: a real store through both
 * transports, the HTTP client (any server of the interface) and the in-process client of the
 * embedded store (src/store/local-client.ts), and the in-memory store the bridge core's unit
 * tests run on (test/helpers/memory-store.ts). Every operation the bridge relies on, with the
 * results normalised as the bridge expects them and failures of the same kinds, so the bridge
 * cannot tell them apart.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreError, nodeId, type NodeEntry, type NodeId, type StoreClient, type StoreSession } from '../../src/store-client/index.js';
import { createLocalClient } from '../../src/store/local-client.js';
import { sendBuffersInUse } from '../../src/store/ops/download.js';
import { MEMORY_ADMIN_PASSWORD, MemoryStore } from '../helpers/memory-store.js';
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

type Implementation = 'http' | 'local' | 'memory';

/** A store behind one StoreClient, with what the suite does as an administrator beside the interface. */
interface ContractStore {
  client: StoreClient;
  /** A new user, signed in through `client`. */
  newUser(options?: { quotaBytes?: number }): Promise<TestUser>;
  adminSession(): Promise<StoreSession>;
  setUserWebdrive(user: TestUser, endpoint: string): Promise<void>;
  createGroup(name: string, quotaBytes: number): Promise<string>;
  addMember(groupId: string, user: TestUser, nodePermissions: string[]): Promise<void>;
  setGroupWebdrive(groupId: string, endpoint: string, showToMembers: boolean): Promise<void>;
  close(): Promise<void>;
}

/** A real store (SQLite, or PostgreSQL + S3 in integration-pg), administered over its REST API. */
async function realStore(transport: 'http' | 'local', edition?: '1.0'): Promise<ContractStore> {
  const f = await storeFixture(edition ? { edition } : {});
  const client = transport === 'http' ? f.client : createLocalClient(f.store.ctx);
  const admin = (method: 'POST', path: string, json: unknown, token = f.admin.token) => f.client.http.requestRaw({ method, path, token, json });
  return {
    client,
    async newUser(options = {}) {
      const user = await f.newUser(options);
      return { ...user, session: await client.login(user.email, user.password) };
    },
    adminSession: () => client.login('admin', f.store.adminPassword),
    async setUserWebdrive(user, endpoint) {
      await admin('POST', '/api/user/webdrive', { endpoint }, user.session.token);
    },
    async createGroup(name, quotaBytes) {
      const group = (await admin('POST', '/api/admin/groups', { name, disk_quota: quotaBytes })).body as { data: { group_uuid: string } };
      return group.data.group_uuid;
    },
    async addMember(groupId, user, nodePermissions) {
      await admin('POST', `/api/admin/groups/${groupId}/users`, { user: user.uuid, permissions: { node_permissions: nodePermissions } });
    },
    async setGroupWebdrive(groupId, endpoint, showToMembers) {
      await admin('POST', `/api/groups/${groupId}/webdrive`, { endpoint, show_url_to_group_members: showToMembers });
    },
    close: () => f.close(),
  };
}

/** The in-memory store: the fake the bridge core's unit tests use, held to the same contract. */
function memoryStore(edition?: '1.0'): ContractStore {
  const store = new MemoryStore(edition ? { edition } : {});
  const { client } = store;
  return {
    client,
    async newUser(options = {}) {
      const user = store.admin.addUser(options);
      return { ...user, session: await client.login(user.email, user.password) };
    },
    adminSession: () => client.login('admin', MEMORY_ADMIN_PASSWORD),
    async setUserWebdrive(user, endpoint) {
      store.admin.setUserWebdrive(user.uuid, endpoint);
    },
    async createGroup(name, quotaBytes) {
      return store.admin.addGroup(name, quotaBytes);
    },
    async addMember(groupId, user, nodePermissions) {
      store.admin.addMember(groupId, user.uuid, { nodePermissions: nodePermissions as Array<'read' | 'write' | 'delete' | 'download'> });
    },
    async setGroupWebdrive(groupId, endpoint, showToMembers) {
      store.admin.setGroupWebdrive(groupId, endpoint, showToMembers);
    },
    close: async () => undefined,
  };
}

function contractStore(implementation: Implementation, edition?: '1.0'): Promise<ContractStore> {
  return implementation === 'memory' ? Promise.resolve(memoryStore(edition)) : realStore(implementation, edition);
}

describe.each(['http', 'local', 'memory'] as const)('StoreClient contract (%s)', (transport) => {
  let f: ContractStore;
  let u: TestUser;
  let client: StoreClient;
  beforeAll(async () => {
    f = await contractStore(transport);
    client = f.client;
    u = await f.newUser({ quotaBytes: 10_000 });
  });
  afterAll(async () => {
    await f.close();
  });

  it('logs in with a session that carries user id, token, file access key and a 24 h expiry', async () => {
    const s = await client.login(u.email, u.password);
    expect(s.userId).toBe(u.uuid);
    expect(s.token.split('.')).toHaveLength(3);
    expect(s.fileAccessKey.length).toBeGreaterThan(10);
    expect(s.expiresAtMs - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect(s.expiresAtMs - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000 + 5000);
  });

  it("carries driveway's numeric file ids, kept across rename and move, a copy's its own; a store without them has none", async () => {
    const s = u.session;
    await client.createFolder(s, home, 'numbered');
    const folder = find(await client.listFolder(s, home), 'numbered');
    await client.upload(s, { folder: folder.id, name: 'n.txt' }, Buffer.from('n'));
    const file = find(await client.listFolder(s, folder.id), 'n.txt');
    if (transport === 'memory') {
      expect([folder.fileId, file.fileId, (await client.details(s, file.id)).fileId]).toEqual([undefined, undefined, undefined]);
      await expect(client.detailsByFileId(s, 1)).rejects.toMatchObject({ kind: 'not-found' });
      return;
    }
    expect(Number.isSafeInteger(file.fileId) && (file.fileId as number) > 0).toBe(true);
    expect(folder.fileId).not.toBe(file.fileId);
    expect((await client.details(s, file.id)).fileId).toBe(file.fileId);
    expect(await client.detailsByFileId(s, file.fileId as number)).toMatchObject({ id: file.id, name: 'n.txt', fileId: file.fileId });
    await client.rename(s, file.id, 'm.txt');
    await client.moveInto(s, file.id, home);
    expect(find(await client.listFolder(s, home), 'm.txt').fileId).toBe(file.fileId);
    await client.copyInto(s, file.id, folder.id);
    expect(find(await client.listFolder(s, folder.id), 'm.txt').fileId).toBeGreaterThan(file.fileId as number);
    const other = await f.newUser();
    await expect(client.detailsByFileId(other.session, file.fileId as number)).rejects.toMatchObject({ kind: 'not-found' });
  });

  it("makes an image's thumbnail (the extension): a WebP within the size; not-found for text and for another user; the in-memory store makes none", async () => {
    const s = u.session;
    const png = await sharp({ create: { width: 400, height: 100, channels: 3, background: { r: 10, g: 200, b: 10 } } }).png().toBuffer();
    const image = await client.upload(s, { folder: home, name: 'wide.png' }, png);
    const words = await client.upload(s, { folder: home, name: 'words.png' }, Buffer.from('not an image at all'));
    const [imageId, wordsId] = [image.id as NodeId, words.id as NodeId];
    if (transport === 'memory') {
      await expect(client.thumbnail(s, imageId, 64)).rejects.toMatchObject({ kind: 'not-found' });
      return;
    }
    const made = await client.thumbnail(s, imageId, 256);
    expect(made.contentType).toBe('image/webp');
    expect(made.etag).toBe(`"${imageId}-${image.revision}-256"`);
    expect(await sharp(made.body).metadata()).toMatchObject({ format: 'webp', width: 256, height: 64 });
    await expect(client.thumbnail(s, wordsId, 64)).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.thumbnail(s, imageId, 100 as 64)).rejects.toMatchObject({ kind: 'invalid' });
    const other = await f.newUser();
    await expect(client.thumbnail(other.session, imageId, 64)).rejects.toMatchObject({ kind: 'not-found' });
    await client.remove(s, imageId);
    await client.remove(s, wordsId);
  });

  it('refuses wrong credentials as unauthenticated', async () => {
    await expect(client.login(u.email, 'Wrong-Passw0rd')).rejects.toMatchObject({ kind: 'unauthenticated', httpStatus: 401 });
  });

  it('gives folders a tree version and recursive size that move with a change below them (driveway’s store; none from the in-memory one)', async () => {
    const s = u.session;
    await client.createFolder(s, home, 'tree-outer');
    const outer = find(await client.listFolder(s, home), 'tree-outer');
    await client.createFolder(s, outer.id, 'inner');
    const inner = find(await client.listFolder(s, outer.id), 'inner');
    const before = find(await client.listFolder(s, home), 'tree-outer');
    await client.upload(s, { folder: inner.id, name: 'deep.txt' }, Readable.from([Buffer.from('twelve bytes')]), 12);
    const after = find(await client.listFolder(s, home), 'tree-outer');
    const details = await client.details(s, outer.id);
    if (transport === 'memory') {
      expect([after.treeEtag, after.treeSizeBytes, details.treeEtag]).toEqual([undefined, undefined, undefined]);
      return;
    }
    expect(after).toMatchObject({ treeEtag: expect.any(String), treeSizeBytes: 12 });
    expect(after.treeEtag).not.toBe(before.treeEtag);
    expect(details).toMatchObject({ treeEtag: after.treeEtag, treeSizeBytes: 12 });
    expect(find(await client.listFolder(s, inner.id), 'deep.txt')).not.toHaveProperty('treeEtag');
  });

  it('creates, lists, renames, moves, copies, stars and deletes with normalised entries', async () => {
    const s = u.session;
    await client.createFolder(s, home, 'contract');
    const folder = find(await client.listFolder(s, home), 'contract');
    expect(folder).toMatchObject({ kind: 'folder', sizeBytes: 0, isStarred: false });
    expect(folder.revision).toBeUndefined();
    expect(folder.updatedMs).toBeGreaterThan(1_600_000_000_000);

    const body = 'hello contract';
    const uploaded = await client.upload(s, { folder: folder.id, name: 'a b#c?.txt' }, Readable.from([Buffer.from(body)]), body.length);
    const file = find(await client.listFolder(s, folder.id), 'a b#c?.txt');
    const checksums = { sha1: createHash('sha1').update(body).digest('hex'), md5: createHash('md5').update(body).digest('hex') };
    expect(file).toMatchObject({ kind: 'file', sizeBytes: body.length, revision: 1, checksums });
    expect(uploaded).toEqual({ id: file.id, revision: 1, sizeBytes: body.length, checksums, ...(transport === 'memory' ? {} : { fileId: file.fileId }) });
    expect((await client.details(s, file.id)).checksums).toEqual(checksums);

    // A claim the bytes contradict is refused before anything is recorded; a right one passes.
    for (const source of [() => Buffer.from('v1b'), () => Readable.from([Buffer.from('v1b')])]) {
      const refused = client.upload(s, { revisionOf: file.id, name: file.name }, source(), 3, undefined, { checksum: `MD5:${checksums.md5}` });
      await expect(refused).rejects.toMatchObject({ kind: 'invalid', code: 'checksum_mismatch' });
    }
    expect(find(await client.listFolder(s, folder.id), 'a b#c?.txt').revision).toBe(1);

    await client.upload(s, { revisionOf: file.id, name: file.name }, Readable.from([Buffer.from('v2')]));
    expect(find(await client.listFolder(s, folder.id), 'a b#c?.txt')).toMatchObject({ id: file.id, revision: 2, sizeBytes: 2 });

    const latest = await client.download(s, file.id, file.name);
    expect(await text(latest.body)).toBe('v2');
    expect(latest).toMatchObject({ status: 200, rangeHonoured: false, totalBytes: 2, etag: `"${file.id}-2"` });
    const first = await client.download(s, file.id, file.name, { version: 1, range: { start: 6, end: 13 } });
    expect(await text(first.body)).toBe('contract');
    expect(first).toMatchObject({ status: 206, rangeHonoured: true, totalBytes: body.length, contentLength: 8 });

    await client.rename(s, file.id, 'renamed.txt');
    await client.createFolder(s, home, 'other');
    const other = find(await client.listFolder(s, home), 'other');
    await client.moveInto(s, file.id, other.id);
    await client.copyInto(s, file.id, folder.id);
    expect((await client.listFolder(s, other.id)).map((e) => e.name)).toEqual(['renamed.txt']);
    const copy = find(await client.listFolder(s, folder.id), 'renamed.txt');
    expect(copy.id).not.toBe(file.id);

    await client.setStarred(s, copy.id, true);
    expect(find(await client.listFolder(s, nodeId('favorites')), 'renamed.txt').isStarred).toBe(true);

    const details = await client.details(s, copy.id);
    expect(details).toMatchObject({ id: copy.id, name: 'renamed.txt', kind: 'file', ownerType: 'User', ownerId: u.uuid });
    expect((await client.path(s, copy.id)).map((p) => p.name)).toEqual(['home', 'contract', 'renamed.txt']);
    expect(await client.myAccess(s, copy.id)).toEqual(expect.arrayContaining(['read', 'write', 'delete', 'download']));

    await client.remove(s, copy.id);
    expect(find(await client.listFolder(s, nodeId('trash')), 'renamed.txt').id).toBe(copy.id);
  });

  it('classifies store failures into kinds', async () => {
    const s = u.session;
    await expect(client.listFolder(s, nodeId('00000000-0000-4000-8000-000000000000'))).rejects.toMatchObject({ kind: 'not-found' });
    await client.createFolder(s, home, 'dup');
    await expect(client.createFolder(s, home, 'dup')).rejects.toMatchObject({ kind: 'conflict', code: 'name_conflict' });
    await expect(client.createFolder(s, home, 'a/b')).rejects.toMatchObject({ kind: 'invalid' });
    await expect(client.rename(s, home, 'x')).rejects.toMatchObject({ kind: 'forbidden' });
    const big = Buffer.alloc(20_000, 1);
    await expect(client.upload(s, { folder: home, name: 'big.bin' }, Readable.from([big]), big.length)).rejects.toMatchObject({ kind: 'quota' });
    const err = await client.listFolder(s, nodeId('00000000-0000-4000-8000-000000000000')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).operation).toBe('nodes.listFolder');
  });

  it('makes a revision from another file (the extension), and refuses as the bridge expects', async () => {
    const s = u.session;
    const dest = await client.upload(s, { folder: home, name: 'save-dest.txt' }, Buffer.from('old'));
    const temp = await client.upload(s, { folder: home, name: 'save-temp.tmp' }, Buffer.from('saved'));
    const destId = dest.id as ReturnType<typeof nodeId>;
    const tempId = temp.id as ReturnType<typeof nodeId>;
    await expect(client.reviseFrom(s, destId, home, { consume: false })).rejects.toMatchObject({ kind: 'conflict', code: 'not_a_folder' });
    await expect(client.reviseFrom(s, destId, nodeId('00000000-0000-4000-8000-000000000000'), { consume: false })).rejects.toMatchObject({ kind: 'not-found' });
    expect(await client.reviseFrom(s, destId, tempId, { consume: true })).toEqual({ id: destId, revision: 2, sizeBytes: 5 });
    expect(await text((await client.download(s, destId, 'save-dest.txt')).body)).toBe('saved');
    expect(await text((await client.download(s, destId, 'save-dest.txt', { version: 1 })).body)).toBe('old');
    expect((await client.listFolder(s, home)).map((e) => e.name)).not.toContain('save-temp.tmp');
    await client.remove(s, destId);
    await client.remove(s, destId);
  });

  it('reports the quota and usage of the current user', async () => {
    const profile = await client.currentUser(u.session);
    expect(profile).toMatchObject({ id: u.uuid, email: u.email, diskQuotaBytes: 10_000, isActive: true, isAdmin: false });
    expect(profile.diskUsedBytes).toBeGreaterThan(0);
  });

  it('streams an upload whose size is unknown (chunked) and gets the same bytes back', async () => {
    const s = u.session;
    const parts = Array.from({ length: 50 }, (_, i) => Buffer.alloc(100, i));
    const expected = createHash('sha256').update(Buffer.concat(parts)).digest('hex');
    const result = await client.upload(s, { folder: home, name: 'chunked.bin' }, Readable.from(parts));
    const got = await client.download(s, result.id as ReturnType<typeof nodeId>, 'chunked.bin');
    const hash = createHash('sha256');
    for await (const chunk of got.body) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(expected);
  });

  it('uploads bytes held whole (a Buffer): a new file, a new revision, and the quota refusal', async () => {
    const s = u.session;
    const result = await client.upload(s, { folder: home, name: 'whole.bin' }, Buffer.from('held whole'));
    expect(result).toMatchObject({ revision: 1, sizeBytes: 10 });
    const file = find(await client.listFolder(s, home), 'whole.bin');
    expect(await client.upload(s, { revisionOf: file.id, name: file.name }, Buffer.from('v2'), 2)).toMatchObject({ id: file.id, revision: 2, sizeBytes: 2 });
    expect(await text((await client.download(s, file.id, file.name)).body)).toBe('v2');
    await expect(client.upload(s, { folder: home, name: 'too-big.bin' }, Buffer.alloc(20_000, 1))).rejects.toMatchObject({ kind: 'quota' });
  });

  it('serves twenty large downloads at once, whole and ranged, with the same bytes (past the send-buffer pool too)', async () => {
    const big = await f.newUser();
    const s = await client.login(big.email, big.password);
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i + 4 <= bytes.length; i += 4) bytes.writeUInt32LE(i, i);
    const file = await client.upload(s, { folder: home, name: 'big.bin' }, Readable.from([bytes]), bytes.length);
    const id = file.id as ReturnType<typeof nodeId>;
    const read = async (range?: { start: number; end: number }): Promise<Buffer> => {
      const got = await client.download(s, id, 'big.bin', range ? { range } : {});
      const parts: Buffer[] = [];
      const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (parts.push(Buffer.from(chunk)), setImmediate(done)) });
      if (got.sendTo) await got.sendTo(sink);
      else for await (const chunk of got.body) parts.push(chunk as Buffer);
      return Buffer.concat(parts);
    };
    const wanted = Array.from({ length: 20 }, (_, i) => (i % 2 ? { start: i * 1000, end: i * 1000 + 1_500_000 } : undefined));
    const got = await Promise.all(wanted.map((range) => read(range)));
    got.forEach((body, i) => {
      const range = wanted[i];
      expect(body.equals(range ? bytes.subarray(range.start, range.end + 1) : bytes)).toBe(true);
    });
  });

  it('logs out: the token stops working', async () => {
    const s = await client.login(u.email, u.password);
    await client.logout(s);
    await expect(client.listFolder(s, home)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('refuses downloads and uploads the way the bridge maps them', async () => {
    const s = u.session;
    const file = await client.upload(s, { folder: home, name: 'ten.txt' }, Readable.from([Buffer.from('0123456789')]), 10);
    const id = file.id as ReturnType<typeof nodeId>;
    const tail = await client.download(s, id, 'ten.txt', { range: { start: 7 } });
    expect(await text(tail.body)).toBe('789');
    expect(tail).toMatchObject({ status: 206, rangeHonoured: true, totalBytes: 10, contentLength: 3, etag: `"${id}-1"` });
    await expect(client.download(s, id, 'ten.txt', { range: { start: 10 } })).rejects.toMatchObject({ kind: 'range-not-satisfiable' });
    await expect(client.download(s, home, 'home')).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.download(s, id, 'ten.txt', { version: 7 })).rejects.toMatchObject({ kind: 'not-found' });
    const other = await f.newUser();
    await expect(client.download(other.session, id, 'ten.txt')).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.listFolder(other.session, id)).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.upload(s, { folder: nodeId('trash'), name: 'x.txt' }, Readable.from([Buffer.from('x')]), 1)).rejects.toMatchObject({ kind: 'forbidden', code: 'virtual_folder' });
    await expect(client.upload(s, { folder: home, name: 'a/b' }, Readable.from([Buffer.from('x')]), 1)).rejects.toMatchObject({ kind: 'invalid', code: 'invalid_name' });
    await expect(client.upload(other.session, { revisionOf: id, name: 'ten.txt' }, Readable.from([Buffer.from('x')]), 1)).rejects.toMatchObject({ kind: 'not-found' });
    expect(await text((await client.download(s, id, 'ten.txt')).body)).toBe('0123456789');
  });

  it('refuses bytes held whole (a small Buffer, checked only by the transaction that records it) as it refuses a stream', async () => {
    const s = u.session;
    const file = await client.upload(s, { folder: home, name: 'kept.txt' }, Buffer.from('kept'));
    const id = file.id as ReturnType<typeof nodeId>;
    await client.createFolder(s, home, 'taken');
    const other = await f.newUser();
    const x = (): Buffer => Buffer.from('x');
    await expect(client.upload(s, { folder: nodeId('trash'), name: 'x.txt' }, x())).rejects.toMatchObject({ kind: 'forbidden', code: 'virtual_folder' });
    await expect(client.upload(s, { folder: nodeId('favorites'), name: 'x.txt' }, x())).rejects.toMatchObject({ kind: 'forbidden', code: 'virtual_folder' });
    await expect(client.upload(s, { folder: home, name: 'a/b' }, x())).rejects.toMatchObject({ kind: 'invalid', code: 'invalid_name' });
    await expect(client.upload(s, { folder: home, name: 'taken' }, x())).rejects.toMatchObject({ kind: 'conflict' });
    await expect(client.upload(other.session, { revisionOf: id, name: 'kept.txt' }, x())).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.upload(other.session, { folder: id, name: 'y.txt' }, x())).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.upload(s, { folder: nodeId('00000000-0000-4000-8000-000000000000'), name: 'y.txt' }, x())).rejects.toMatchObject({ kind: 'not-found' });
    await expect(client.upload(s, { folder: nodeId('not-an-id'), name: 'y.txt' }, x())).rejects.toMatchObject({ kind: 'not-found' });
    // Nothing of the refused uploads is there, and the file kept its one revision.
    const names = (await client.listFolder(s, home)).map((e) => e.name);
    expect(names).not.toContain('a/b');
    expect(names).not.toContain('x.txt');
    expect(find(await client.listFolder(s, home), 'kept.txt')).toMatchObject({ sizeBytes: 4 });
    expect(await text((await client.download(s, id, 'kept.txt')).body)).toBe('kept');
  });

  it('answers WebDAV endpoints, groups, group endpoints and group usage', async () => {
    const member = await f.newUser();
    const session = member.session;
    expect(await client.userWebdrive(session)).toBeUndefined();
    expect(await client.listGroups(session)).toEqual([]);
    await f.setUserWebdrive(member, `c${transport}`);
    expect(await client.userWebdrive(session)).toEqual({ endpoint: `c${transport}` });

    const groupId = await f.createGroup(`Contract ${transport}`, 5000);
    await f.addMember(groupId, member, ['read']);
    expect(await client.listGroups(session)).toEqual([
      { id: groupId, name: `Contract ${transport}`, isAdmin: false, nodePermissions: ['read'], tagPermissions: [], sharePermissions: [] },
    ]);
    expect(await client.groupUsage(session, groupId)).toEqual({ quotaBytes: 5000, usedBytes: 0 });
    expect(await client.groupWebdrive(session, groupId)).toBeUndefined();
    await f.setGroupWebdrive(groupId, `g${transport}`, false);
    // Hidden from members: no endpoint for them, whatever the transport.
    expect(await client.groupWebdrive(session, groupId)).toBeUndefined();
    expect(await client.myAccess(session, nodeId(`home:${groupId}`))).toEqual(['read']);
    await expect(client.createFolder(session, nodeId(`home:${groupId}`), 'nope')).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(client.groupUsage(u.session, groupId)).rejects.toMatchObject({ kind: 'not-found' });
  });
});

describe.each(['http', 'local', 'memory'] as const)('StoreClient against an edition 1.0 store (%s)', (transport) => {
  let f: ContractStore;
  let client: StoreClient;
  let session: StoreSession;
  beforeAll(async () => {
    f = await contractStore(transport, '1.0');
    client = f.client;
    session = await f.adminSession();
  });
  afterAll(async () => {
    await f.close();
  });

  it('serves what 1.0 has and answers not-found (not_implemented) for what it lacks', async () => {
    const file = await client.upload(session, { folder: home, name: 'one.txt' }, Readable.from([Buffer.from('1.0')]), 3);
    expect((await client.listFolder(session, home)).map((e) => e.name)).toEqual(['one.txt']);
    for (const missing of [
      () => client.myAccess(session, home),
      () => client.download(session, file.id as ReturnType<typeof nodeId>, 'one.txt'),
      () => client.currentUser(session),
      () => client.listGroups(session),
      () => client.reviseFrom(session, file.id as ReturnType<typeof nodeId>, file.id as ReturnType<typeof nodeId>, { consume: false }),
      () => client.thumbnail(session, file.id as ReturnType<typeof nodeId>, 64),
    ]) {
      await expect(missing()).rejects.toMatchObject({ kind: 'not-found', code: 'not_implemented' });
    }
  });
});

// Only the in-process transport writes into a target itself (sendTo); over HTTP the body is a stream.
describe('StoreClient in-process downloads (sendTo)', () => {
  let f: StoreFixture;
  let client: StoreClient;
  beforeAll(async () => {
    f = await storeFixture();
    client = createLocalClient(f.store.ctx);
  });
  afterAll(async () => {
    await f.close();
  });

  it('settles a download whose target closes mid-write, and gives its pool buffers back', async () => {
    const big = await f.newUser();
    const s = await client.login(big.email, big.password);
    const bytes = Buffer.alloc(512 * 1024, 7);
    const file = await client.upload(s, { folder: home, name: 'cut.bin' }, Readable.from([bytes]), bytes.length);
    const id = file.id as ReturnType<typeof nodeId>;
    // As a response whose socket was destroyed before its 'close': the write is dropped, its callback never called.
    const cut = async (): Promise<unknown> => {
      const got = await client.download(s, id, 'cut.bin');
      const sink = new Writable({ write: () => setImmediate(() => sink.destroy()) });
      return (got.sendTo as NonNullable<typeof got.sendTo>)(sink).then(
        () => 'completed',
        (err: unknown) => err,
      );
    };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => cut()));
    for (const outcome of outcomes) expect(outcome).toBeInstanceOf(Error);
    expect(sendBuffersInUse()).toBe(0);
  });
});
