/**
 * POST/GET /api/nodes/{node_uuid} on a real store: every operation's success and stored state,
 * each validation rule and error path, both identifier forms (also as copy_to/move_to targets),
 * virtual and top-level folders, favorites, path and myaccess. Trash and blob sharing are in
 * trash.test.ts; other users' nodes in isolation.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type HttpStoreClient } from '../../../src/store-client/index.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import {
  checksumsOf,
  createFolder,
  createSeeder,
  entryNamed,
  names,
  nodeRow,
  raw,
  topLevelRow,
  uploadFile,
  type SeededUser,
} from '../../helpers/seed.js';

let store: TestStore;
let client: HttpStoreClient;
let alice: SeededUser;
let homeUuid: string;

beforeAll(async () => {
  store = await startTestStore();
  const seeder = await createSeeder(store);
  client = seeder.client;
  alice = await seeder.user('Alice Example');
  homeUuid = (await topLevelRow(store, alice.uuid, 'home')).uuid;
});

afterAll(async () => {
  await client?.close();
  await store?.close();
});

const post = (id: string, body: unknown) => raw(client, alice.session, 'POST', `/api/nodes/${id}`, body);
const get = (urlPath: string) => raw(client, alice.session, 'GET', urlPath);

/** A fresh folder in home, so tests do not see each other's entries. */
let folderCount = 0;
async function scratch(): Promise<string> {
  folderCount += 1;
  return createFolder(client, alice.session, 'home', `scratch ${folderCount}`);
}

function expectError(res: { status: number; body: unknown }, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ status: 'error', code });
  expect(typeof (res.body as { msg: unknown }).msg).toBe('string');
}

describe('POST new_dir', () => {
  it('creates a folder and answers 204 with no body', async () => {
    const parent = await scratch();
    const res = await post(parent, { new_dir: 'Projects' });
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    const entry = await entryNamed(client, alice.session, parent, 'Projects');
    const row = await nodeRow(store, entry.id);
    expect(row).toMatchObject({ parent_uuid: parent, type: 'Dir', owner_uuid: alice.uuid, owner_type: 'User', size: 0, revision: null });
  });

  it('accepts the bare and the owner-qualified home identifier and a colon in the path', async () => {
    expect((await post('home', { new_dir: 'via bare home' })).status).toBe(204);
    expect((await post(`home:${alice.uuid}`, { new_dir: 'via qualified home' })).status).toBe(204);
    expect((await post(`home:${alice.uuid.toUpperCase()}`, { new_dir: 'via upper-case owner' })).status).toBe(204);
    expect((await post(`home%3A${alice.uuid}`, { new_dir: 'via encoded colon' })).status).toBe(204);
    const home = await names(client, alice.session, 'home');
    expect(home).toEqual(expect.arrayContaining(['via bare home', 'via qualified home', 'via upper-case owner', 'via encoded colon']));
    for (const name of ['via bare home', 'via qualified home']) {
      expect((await nodeRow(store, (await entryNamed(client, alice.session, 'home', name)).id))?.parent_uuid).toBe(homeUuid);
    }
  });

  it('bumps the parent folder\'s updated time', async () => {
    const parent = await scratch();
    const before = (await nodeRow(store, parent))?.updated ?? 0;
    store.clock.advance(5_000);
    await client.createFolder(alice.session, nodeId(parent), 'newer');
    expect((await nodeRow(store, parent))?.updated).toBeGreaterThanOrEqual(before + 5_000);
  });

  it('refuses a name that exists in the folder with 409 name_conflict and changes nothing', async () => {
    const parent = await scratch();
    await client.createFolder(alice.session, nodeId(parent), 'taken');
    await uploadFile(client, alice.session, parent, 'file.txt', 'x');
    expectError(await post(parent, { new_dir: 'taken' }), 409, 'name_conflict');
    expectError(await post(parent, { new_dir: 'file.txt' }), 409, 'name_conflict');
    expect(await names(client, alice.session, parent)).toEqual(['taken', 'file.txt']);
  });

  it('compares names byte for byte: case and Unicode normalisation make different names', async () => {
    const parent = await scratch();
    for (const name of ['Report', 'report', 'caf\u00e9', 'cafe\u0301']) expect((await post(parent, { new_dir: name })).status).toBe(204);
    expect((await names(client, alice.session, parent)).sort()).toEqual(['Report', 'caf\u00e9', 'cafe\u0301', 'report'].sort());
  });

  it.each([
    ['empty', ''],
    ['a dot', '.'],
    ['two dots', '..'],
    ['a slash', 'a/b'],
    ['NUL', 'a\u0000b'],
    ['256 bytes', 'x'.repeat(256)],
    ['128 two-byte characters', '\u00e9'.repeat(128)],
  ])('refuses a name that is %s with 400 invalid_name', async (_label, name) => {
    const parent = await scratch();
    expectError(await post(parent, { new_dir: name }), 400, 'invalid_name');
    expect(await names(client, alice.session, parent)).toEqual([]);
  });

  it('keeps a 255-byte name and leading or trailing spaces as given', async () => {
    const parent = await scratch();
    const long = `${'\u00e9'.repeat(127)}x`;
    expect(Buffer.byteLength(long)).toBe(255);
    expect((await post(parent, { new_dir: long })).status).toBe(204);
    expect((await post(parent, { new_dir: ' spaced ' })).status).toBe(204);
    expect((await names(client, alice.session, parent)).sort()).toEqual([' spaced ', long].sort());
  });

  it('answers 409 not_a_folder when the node is a file', async () => {
    const parent = await scratch();
    const file = await uploadFile(client, alice.session, parent, 'plain.txt', 'x');
    expectError(await post(file, { new_dir: 'inside' }), 409, 'not_a_folder');
  });

  it.each(['favorites', 'public_shares', 'private_shares', 'shared_with_you', 'trash'])(
    'refuses a folder in %s with 403 virtual_folder',
    async (top) => {
      expectError(await post(top, { new_dir: 'nope' }), 403, 'virtual_folder');
      expect(await names(client, alice.session, top)).not.toContain('nope');
    },
  );

  it('refuses a folder inside a folder that is in trash', async () => {
    const parent = await scratch();
    const doomed = await createFolder(client, alice.session, parent, 'doomed');
    await client.remove(alice.session, nodeId(doomed));
    expectError(await post(doomed, { new_dir: 'nope' }), 403, 'virtual_folder');
  });

  it('answers 404 not_found for an unknown node and for a malformed identifier', async () => {
    expectError(await post('00000000-0000-4000-8000-000000000000', { new_dir: 'x' }), 404, 'not_found');
    expectError(await post('not-an-identifier', { new_dir: 'x' }), 404, 'not_found');
    expectError(await post('home:not-a-uuid', { new_dir: 'x' }), 404, 'not_found');
  });
});

describe('POST body validation', () => {
  it.each([
    ['two operation keys', { new_dir: 'a', new_name: 'b' }],
    ['all operation keys', { new_dir: 'a', new_name: 'b', starred: true, copy_to: 'home', move_to: 'home' }],
    ['no operation key', {}],
    ['an unknown key beside an operation', { new_dir: 'a', colour: 'red' }],
    ['only an unknown key', { colour: 'red' }],
    ['a non-string new_dir', { new_dir: 5 }],
    ['a null new_name', { new_name: null }],
    ['a string starred', { starred: 'true' }],
    ['an empty copy_to', { copy_to: '' }],
    ['a numeric move_to', { move_to: 1 }],
    ['an array body', [{ new_dir: 'a' }]],
    ['a string body', 'new_dir'],
  ])('answers 400 invalid_request for %s and changes nothing', async (_label, body) => {
    const parent = await scratch();
    const before = await nodeRow(store, parent);
    expectError(await post(parent, body), 400, 'invalid_request');
    expect(await nodeRow(store, parent)).toEqual(before);
    expect(await names(client, alice.session, parent)).toEqual([]);
  });

  it('answers 400 for malformed JSON and for a missing body', async () => {
    const parent = await scratch();
    const malformed = await client.http.requestRaw({
      method: 'POST',
      path: `/api/nodes/${parent}`,
      token: alice.session.token,
      headers: { 'content-type': 'application/json' },
      body: '{"new_dir":',
    });
    expectError(malformed, 400, 'invalid_request');
    const missing = await client.http.requestRaw({ method: 'POST', path: `/api/nodes/${parent}`, token: alice.session.token });
    expectError(missing, 400, 'invalid_request');
    const empty = await client.http.requestRaw({ method: 'POST', path: `/api/nodes/${parent}`, token: alice.session.token, headers: { 'content-type': 'application/json' }, body: '' });
    expectError(empty, 400, 'invalid_request');
    const polluting = await client.http.requestRaw({
      method: 'POST',
      path: `/api/nodes/${parent}`,
      token: alice.session.token,
      headers: { 'content-type': 'application/json' },
      body: '{"new_dir": "x", "__proto__": {"admin": true}}',
    });
    expectError(polluting, 400, 'invalid_request');
    expect(await names(client, alice.session, parent)).toEqual([]);
  });

  it('takes a bodiless DELETE that still says Content-Type: application/json (many HTTP clients send it)', async () => {
    const parent = await scratch();
    const res = await client.http.requestRaw({ method: 'DELETE', path: `/api/nodes/${parent}`, token: alice.session.token, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(204);
  });

  it('validates the body before looking the node up, so a bad body tells nothing about existence', async () => {
    const unknown = await post('00000000-0000-4000-8000-000000000000', { new_dir: 'a', new_name: 'b' });
    expectError(unknown, 400, 'invalid_request');
  });

  it('answers 401 without a token', async () => {
    expectError(await raw(client, undefined, 'POST', '/api/nodes/home', { new_dir: 'x' }), 401, 'unauthenticated');
  });
});

describe('POST new_name', () => {
  it('renames a file and keeps its identity, revision and size', async () => {
    const parent = await scratch();
    const file = await uploadFile(client, alice.session, parent, 'draft.txt', 'hello');
    const before = await nodeRow(store, file);
    expect((await post(file, { new_name: 'final.txt' })).status).toBe(204);
    const entry = await entryNamed(client, alice.session, parent, 'final.txt');
    expect(entry).toMatchObject({ id: file, kind: 'file', sizeBytes: 5, revision: 1 });
    expect(await nodeRow(store, file)).toEqual({ ...before, name: 'final.txt' });
  });

  it('renames a folder and bumps its own and its parent\'s updated time', async () => {
    const parent = await scratch();
    const folder = await createFolder(client, alice.session, parent, 'old');
    const t0 = store.clock.now();
    store.clock.advance(10_000);
    expect((await post(folder, { new_name: 'new' })).status).toBe(204);
    expect((await nodeRow(store, folder))?.name).toBe('new');
    expect((await nodeRow(store, folder))?.updated).toBeGreaterThanOrEqual(t0 + 10_000);
    expect((await nodeRow(store, parent))?.updated).toBeGreaterThanOrEqual(t0 + 10_000);
  });

  it('refuses a sibling\'s name with 409 name_conflict', async () => {
    const parent = await scratch();
    const a = await uploadFile(client, alice.session, parent, 'a.txt', 'a');
    await uploadFile(client, alice.session, parent, 'b.txt', 'b');
    expectError(await post(a, { new_name: 'b.txt' }), 409, 'name_conflict');
    expect((await nodeRow(store, a))?.name).toBe('a.txt');
  });

  it('treats renaming to the current name as done', async () => {
    const parent = await scratch();
    const a = await uploadFile(client, alice.session, parent, 'same.txt', 'a');
    expect((await post(a, { new_name: 'same.txt' })).status).toBe(204);
    expect(await names(client, alice.session, parent)).toEqual(['same.txt']);
  });

  it('accepts a change of case only', async () => {
    const parent = await scratch();
    const a = await uploadFile(client, alice.session, parent, 'readme', 'a');
    expect((await post(a, { new_name: 'README' })).status).toBe(204);
    expect(await names(client, alice.session, parent)).toEqual(['README']);
  });

  it('refuses an invalid name with 400 invalid_name', async () => {
    const parent = await scratch();
    const a = await uploadFile(client, alice.session, parent, 'ok.txt', 'a');
    expectError(await post(a, { new_name: 'a/b' }), 400, 'invalid_name');
    expectError(await post(a, { new_name: '..' }), 400, 'invalid_name');
    expect((await nodeRow(store, a))?.name).toBe('ok.txt');
  });

  it.each(['home', 'incoming', 'trash', 'favorites', 'public_shares', 'private_shares', 'shared_with_you'])(
    'refuses renaming %s with 403 top_level_immutable',
    async (top) => {
      expectError(await post(top, { new_name: 'mine' }), 403, 'top_level_immutable');
      expectError(await post(`${top}:${alice.uuid}`, { new_name: 'mine' }), 403, 'top_level_immutable');
      expect((await topLevelRow(store, alice.uuid, top)).name).toBe(top);
    },
  );
});

describe('POST starred and the favorites folder', () => {
  it('stars and unstars a node for the caller; favorites lists it meanwhile', async () => {
    const parent = await scratch();
    const file = await uploadFile(client, alice.session, parent, 'star.txt', 'x');
    const folder = await createFolder(client, alice.session, parent, 'star folder');
    expect((await post(file, { starred: true })).status).toBe(204);
    expect((await post(folder, { starred: true })).status).toBe(204);
    expect((await post(file, { starred: true })).status).toBe(204);

    const listing = await client.listFolder(alice.session, nodeId(parent));
    expect(listing.map((e) => [e.name, e.isStarred])).toEqual([
      ['star folder', true],
      ['star.txt', true],
    ]);
    const favorites = await client.listFolder(alice.session, nodeId('favorites'));
    expect(favorites.filter((e) => e.id === file || e.id === folder).map((e) => [e.name, e.kind, e.isStarred])).toEqual([
      ['star folder', 'folder', true],
      ['star.txt', 'file', true],
    ]);
    const stars = await store.ctx.storage.sql.all('SELECT node_uuid FROM stars WHERE user_uuid = ? AND node_uuid IN (?, ?)', [alice.uuid, file, folder]);
    expect(stars).toHaveLength(2);

    expect((await post(file, { starred: false })).status).toBe(204);
    expect((await post(file, { starred: false })).status).toBe(204);
    expect((await entryNamed(client, alice.session, parent, 'star.txt')).isStarred).toBe(false);
    expect((await client.listFolder(alice.session, nodeId('favorites'))).map((e) => e.id)).not.toContain(file);
  });

  it('leaves a starred node out of favorites while it is in trash and shows it again after restore', async () => {
    const parent = await scratch();
    const file = await uploadFile(client, alice.session, parent, 'fav-trash.txt', 'x');
    await client.setStarred(alice.session, file, true);
    await client.remove(alice.session, file);
    expect((await client.listFolder(alice.session, nodeId('favorites'))).map((e) => e.id)).not.toContain(file);
    await client.moveInto(alice.session, file, nodeId(parent));
    expect((await client.listFolder(alice.session, nodeId('favorites'))).map((e) => e.id)).toContain(file);
  });

  it('refuses starring a top-level folder with 403 top_level_immutable', async () => {
    expectError(await post('favorites', { starred: true }), 403, 'top_level_immutable');
    expectError(await post('home', { starred: true }), 403, 'top_level_immutable');
  });
});

describe('POST move_to', () => {
  it('moves a folder with its subtree into a folder given by UUID', async () => {
    const root = await scratch();
    const from = await createFolder(client, alice.session, root, 'from');
    const to = await createFolder(client, alice.session, root, 'to');
    const child = await uploadFile(client, alice.session, from, 'child.txt', 'c');
    const t0 = store.clock.now();
    store.clock.advance(3_000);
    expect((await post(from, { move_to: to })).status).toBe(204);
    expect(await names(client, alice.session, root)).toEqual(['to']);
    expect(await names(client, alice.session, to)).toEqual(['from']);
    expect((await nodeRow(store, child))?.parent_uuid).toBe(from);
    expect((await client.path(alice.session, child)).map((e) => e.name)).toEqual(['home', 'scratch ' + String(folderCount), 'to', 'from', 'child.txt']);
    for (const uuid of [root, to, from]) expect((await nodeRow(store, uuid))?.updated).toBeGreaterThanOrEqual(t0 + 3_000);
  });

  it.each([
    ['bare', () => 'home'],
    ['owner-qualified', () => `home:${alice.uuid}`],
  ])('moves into home named by its %s identifier', async (_label, target) => {
    const root = await scratch();
    const name = `moved-to-home-${_label}.txt`;
    const file = await uploadFile(client, alice.session, root, name, 'm');
    expect((await post(file, { move_to: target() })).status).toBe(204);
    expect((await nodeRow(store, file))?.parent_uuid).toBe(homeUuid);
  });

  it('moves into incoming', async () => {
    const root = await scratch();
    const file = await uploadFile(client, alice.session, root, 'to-incoming.txt', 'm');
    expect((await post(file, { move_to: 'incoming' })).status).toBe(204);
    expect(await names(client, alice.session, 'incoming')).toContain('to-incoming.txt');
  });

  it('refuses moving a folder into itself or a descendant with 409 move_into_self', async () => {
    const root = await scratch();
    const outer = await createFolder(client, alice.session, root, 'outer');
    const inner = await createFolder(client, alice.session, outer, 'inner');
    const deepest = await createFolder(client, alice.session, inner, 'deepest');
    expectError(await post(outer, { move_to: outer }), 409, 'move_into_self');
    expectError(await post(outer, { move_to: deepest }), 409, 'move_into_self');
    expect((await nodeRow(store, outer))?.parent_uuid).toBe(root);
  });

  it('refuses a target that is a file with 409 not_a_folder', async () => {
    const root = await scratch();
    const a = await uploadFile(client, alice.session, root, 'a.txt', 'a');
    const b = await uploadFile(client, alice.session, root, 'b.txt', 'b');
    expectError(await post(a, { move_to: b }), 409, 'not_a_folder');
  });

  it('refuses a target holding the same name with 409 name_conflict', async () => {
    const root = await scratch();
    const sub = await createFolder(client, alice.session, root, 'sub');
    const a = await uploadFile(client, alice.session, root, 'twin.txt', 'a');
    await uploadFile(client, alice.session, sub, 'twin.txt', 'b');
    expectError(await post(a, { move_to: sub }), 409, 'name_conflict');
    expect((await nodeRow(store, a))?.parent_uuid).toBe(root);
  });

  it('treats a move into the current folder as done', async () => {
    const root = await scratch();
    const a = await uploadFile(client, alice.session, root, 'stay.txt', 'a');
    expect((await post(a, { move_to: root })).status).toBe(204);
    expect((await nodeRow(store, a))?.parent_uuid).toBe(root);
  });

  it.each(['trash', 'favorites', 'public_shares', 'private_shares', 'shared_with_you'])(
    'refuses moving into %s (both identifier forms) with 403 virtual_folder',
    async (top) => {
      const root = await scratch();
      const a = await uploadFile(client, alice.session, root, 'nomove.txt', 'a');
      expectError(await post(a, { move_to: top }), 403, 'virtual_folder');
      expectError(await post(a, { move_to: `${top}:${alice.uuid}` }), 403, 'virtual_folder');
      expect((await nodeRow(store, a))?.parent_uuid).toBe(root);
    },
  );

  it('refuses moving a top-level folder with 403 top_level_immutable', async () => {
    const root = await scratch();
    expectError(await post('incoming', { move_to: root }), 403, 'top_level_immutable');
    expectError(await post('trash', { move_to: 'home' }), 403, 'top_level_immutable');
  });

  it('answers 404 when the target does not exist', async () => {
    const root = await scratch();
    const a = await uploadFile(client, alice.session, root, 'lost.txt', 'a');
    expectError(await post(a, { move_to: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found');
    expectError(await post(a, { move_to: 'elsewhere' }), 404, 'not_found');
  });
});

describe('POST copy_to', () => {
  it('copies a file into a folder given by UUID as a new node with revision 1', async () => {
    const root = await scratch();
    const sub = await createFolder(client, alice.session, root, 'sub');
    const file = await uploadFile(client, alice.session, root, 'orig.txt', 'v1');
    await uploadFile(client, alice.session, root, 'orig.txt', 'version 2');
    expect((await post(file, { copy_to: sub })).status).toBe(204);
    const copy = await entryNamed(client, alice.session, sub, 'orig.txt');
    expect(copy.id).not.toBe(file);
    expect(copy).toMatchObject({ kind: 'file', sizeBytes: 9, revision: 1 });
    expect((await entryNamed(client, alice.session, root, 'orig.txt')).revision).toBe(2);
  });

  it.each([
    ['bare', () => 'home'],
    ['owner-qualified', () => `home:${alice.uuid}`],
  ])('copies into home named by its %s identifier', async (label, target) => {
    const root = await scratch();
    const name = `copied-to-home-${label}.txt`;
    const file = await uploadFile(client, alice.session, root, name, 'c');
    expect((await post(file, { copy_to: target() })).status).toBe(204);
    expect(await names(client, alice.session, 'home')).toContain(name);
    expect(await names(client, alice.session, root)).toEqual([name]);
  });

  it('refuses a copy into the same folder with 409 name_conflict', async () => {
    const root = await scratch();
    const file = await uploadFile(client, alice.session, root, 'one.txt', 'c');
    expectError(await post(file, { copy_to: root }), 409, 'name_conflict');
    expect(await names(client, alice.session, root)).toEqual(['one.txt']);
  });

  it('refuses copying a folder into itself or a descendant with 409 move_into_self', async () => {
    const root = await scratch();
    const outer = await createFolder(client, alice.session, root, 'outer');
    const inner = await createFolder(client, alice.session, outer, 'inner');
    expectError(await post(outer, { copy_to: outer }), 409, 'move_into_self');
    expectError(await post(outer, { copy_to: inner }), 409, 'move_into_self');
    expect(await names(client, alice.session, inner)).toEqual([]);
  });

  it('refuses a target that is a file with 409 not_a_folder', async () => {
    const root = await scratch();
    const a = await uploadFile(client, alice.session, root, 'a.txt', 'a');
    const b = await uploadFile(client, alice.session, root, 'b.txt', 'b');
    expectError(await post(a, { copy_to: b }), 409, 'not_a_folder');
  });

  it.each(['trash', 'favorites', 'shared_with_you'])('refuses copying into %s with 403 virtual_folder', async (top) => {
    const root = await scratch();
    const a = await uploadFile(client, alice.session, root, 'nocopy.txt', 'a');
    expectError(await post(a, { copy_to: top }), 403, 'virtual_folder');
    expectError(await post(a, { copy_to: `${top}:${alice.uuid}` }), 403, 'virtual_folder');
  });

  it('refuses copying a top-level folder with 403 top_level_immutable', async () => {
    const root = await scratch();
    expectError(await post('incoming', { copy_to: root }), 403, 'top_level_immutable');
    expect(await names(client, alice.session, root)).toEqual([]);
  });
});

describe('GET details', () => {
  it('answers a file\'s details with its owner', async () => {
    const root = await scratch();
    const file = await uploadFile(client, alice.session, root, 'details.txt', 'd');
    const res = await get(`/api/nodes/${file}`);
    expect(res.status).toBe(200);
    const row = await nodeRow(store, file);
    expect(res.body).toEqual({
      status: 'success',
      msg: expect.any(String),
      data: {
        name: 'details.txt',
        type: 'File',
        uuid: file,
        owner_type: 'User',
        owner_uuid: alice.uuid,
        owner_fullname: 'Alice Example',
        created: row?.created,
        updated: row?.updated,
        // Extensions (docs/extensions.md "Checksums", "Numeric file ids").
        checksums: checksumsOf('d'),
        file_id: row?.file_id,
      },
    });
  });

  it('shows a top-level folder with its identifier as uuid, in both request forms', async () => {
    for (const id of ['home', `home:${alice.uuid}`]) {
      const res = await get(`/api/nodes/${id}`);
      expect(res.status).toBe(200);
      expect((res.body as { data: unknown }).data).toMatchObject({ name: 'home', type: 'Dir', uuid: 'home', owner_uuid: alice.uuid });
    }
    expect((await client.details(alice.session, nodeId('trash'))).id).toBe('trash');
  });

  it('answers 404 not_found for an unknown node', async () => {
    expectError(await get('/api/nodes/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  });
});

describe('GET path', () => {
  it('lists from the top-level folder down to the node itself', async () => {
    const root = await scratch();
    const a = await createFolder(client, alice.session, root, 'a');
    const b = await createFolder(client, alice.session, a, 'b');
    const file = await uploadFile(client, alice.session, b, 'deep.txt', 'd');
    const res = await get(`/api/nodes/${file}/path`);
    expect(res.status).toBe(200);
    expect((res.body as { data: unknown }).data).toEqual([
      { name: 'home', uuid: 'home' },
      { name: `scratch ${folderCount}`, uuid: root },
      { name: 'a', uuid: a },
      { name: 'b', uuid: b },
      { name: 'deep.txt', uuid: file },
    ]);
  });

  it('of a top-level folder is that folder alone', async () => {
    expect((await get('/api/nodes/incoming/path')).body).toMatchObject({ data: [{ name: 'incoming', uuid: 'incoming' }] });
    expect((await get(`/api/nodes/incoming:${alice.uuid}/path`)).body).toMatchObject({ data: [{ name: 'incoming', uuid: 'incoming' }] });
  });

  it('of a deleted node starts at trash', async () => {
    const root = await scratch();
    const file = await uploadFile(client, alice.session, root, 'gone.txt', 'g');
    await client.remove(alice.session, file);
    expect(await client.path(alice.session, file)).toEqual([
      { id: 'trash', name: 'trash' },
      { id: file, name: 'gone.txt' },
    ]);
  });
});

describe('GET dirlist', () => {
  it('lists folders first, then files, each by name in byte order, with the fields of docs/api.md', async () => {
    const root = await scratch();
    for (const name of ['b-dir', 'B-dir', '\u00e9-dir']) await client.createFolder(alice.session, nodeId(root), name);
    for (const name of ['b.txt', 'A.txt', '\u00e9.txt']) await uploadFile(client, alice.session, root, name, name);
    const res = await get(`/api/nodes/${root}/dirlist`);
    expect(res.status).toBe(200);
    const data = (res.body as { data: Array<Record<string, unknown>> }).data;
    expect(data.map((e) => e.name)).toEqual(['B-dir', 'b-dir', '\u00e9-dir', 'A.txt', 'b.txt', '\u00e9.txt']);
    const folder = data[0] as Record<string, unknown>;
    expect(folder).toEqual({
      uuid: expect.any(String),
      name: 'B-dir',
      type: 'Dir',
      is_starred: false,
      public_shares: 0,
      private_shares: 0,
      comment_count: 0,
      size: 0,
      updated: (await nodeRow(store, folder.uuid as string))?.updated,
      file_id: (await nodeRow(store, folder.uuid as string))?.file_id,
    });
    expect('revision' in folder).toBe(false);
    expect(data[5]).toEqual({
      uuid: expect.any(String),
      name: '\u00e9.txt',
      type: 'File',
      is_starred: false,
      public_shares: 0,
      private_shares: 0,
      comment_count: 0,
      size: Buffer.byteLength('\u00e9.txt'),
      updated: expect.any(Number),
      revision: 1,
      checksums: checksumsOf('\u00e9.txt'),
      file_id: (await nodeRow(store, data[5]?.uuid as string))?.file_id,
    });
  });

  it('answers 409 not_a_folder for a file', async () => {
    const root = await scratch();
    const file = await uploadFile(client, alice.session, root, 'f.txt', 'f');
    expectError(await get(`/api/nodes/${file}/dirlist`), 409, 'not_a_folder');
  });

  it.each(['public_shares', 'private_shares', 'shared_with_you'])('lists %s as empty', async (top) => {
    expect((await get(`/api/nodes/${top}/dirlist`)).body).toEqual({ status: 'success', msg: expect.any(String), data: [] });
    expect((await get(`/api/nodes/${top}:${alice.uuid}/dirlist`)).body).toMatchObject({ data: [] });
  });

  it('lists home by both identifier forms identically', async () => {
    const bare = await get('/api/nodes/home/dirlist');
    const qualified = await get(`/api/nodes/home:${alice.uuid}/dirlist`);
    expect(bare.status).toBe(200);
    expect(qualified.body).toEqual(bare.body);
  });

  it('lists a large folder completely', async () => {
    const root = await scratch();
    const now = store.clock.now();
    // Rows straight into the database: 2,000 uploads through HTTP would only slow the suite down.
    await store.ctx.storage.sql.transaction(async (tx) => {
      for (let i = 0; i < 2_000; i += 1) {
        await tx.run(`INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated) VALUES (?, ?, 'User', ?, ?, 'Dir', ?, ?)`, [
          crypto.randomUUID(),
          alice.uuid,
          root,
          `d${String(i).padStart(5, '0')}`,
          now,
          now,
        ]);
      }
    });
    const entries = await client.listFolder(alice.session, nodeId(root));
    expect(entries).toHaveLength(2_000);
    expect(entries[0]?.name).toBe('d00000');
    expect(entries[1_999]?.name).toBe('d01999');
  });
});

describe('GET myaccess', () => {
  it('grants the owner every permission on a node and on a top-level folder', async () => {
    const root = await scratch();
    const res = await get(`/api/nodes/${root}/myaccess`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', msg: expect.any(String), data: ['read', 'write', 'delete', 'download'] });
    expect(await client.myAccess(alice.session, nodeId(`home:${alice.uuid}`))).toEqual(['read', 'write', 'delete', 'download']);
  });

  it('answers 404 not_found for an unknown node', async () => {
    expectError(await get('/api/nodes/00000000-0000-4000-8000-000000000000/myaccess'), 404, 'not_found');
  });

  it('is not served in edition 1.0 (404 not_implemented) while the 1.0 node operations are', async () => {
    const old = await startTestStore({ edition: '1.0' });
    const { client: oldClient, admin } = await createSeeder(old);
    try {
      expectError(await raw(oldClient, admin, 'GET', '/api/nodes/home/myaccess'), 404, 'not_implemented');
      expect((await raw(oldClient, admin, 'POST', '/api/nodes/home', { new_dir: 'edition one' })).status).toBe(204);
      expect((await raw(oldClient, admin, 'GET', '/api/nodes/home/dirlist')).body).toMatchObject({ data: [{ name: 'edition one' }] });
    } finally {
      await oldClient.close();
      await old.close();
    }
  });
});
