/**
 * Another user's nodes do not exist for the caller: Bob, with his own valid session, gets
 * the very 404 an unknown UUID gets for every node operation on Alice's nodes, on her
 * top-level identifiers, and when her folders are his copy_to/move_to targets. Afterwards
 * Alice's data (and Bob's) is exactly as before. (Moves and copies between owners that access
 * allows, between a user's and a group's tree, are group-nodes.test.ts's.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeId, type RawResponse, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { createFolder, createSeeder, nodeRow, raw, uploadFile, type SeededUser } from '../../helpers/seed.js';

let store: TestStore;
let client: HttpStoreClient;
let admin: StoreSession;
let alice: SeededUser;
let bob: SeededUser;
const none = nodeId('');
const a: Record<'folder' | 'file' | 'nested' | 'trashed', NodeId> = { folder: none, file: none, nested: none, trashed: none };
const b: Record<'folder' | 'file', NodeId> = { folder: none, file: none };

const UNKNOWN = '00000000-0000-4000-8000-0000000000ff';

beforeAll(async () => {
  store = await startTestStore();
  const seeder = await createSeeder(store);
  client = seeder.client;
  admin = seeder.admin;
  alice = await seeder.user('Alice Private');
  bob = await seeder.user('Bob Curious');
  a.folder = await createFolder(client, alice.session, 'home', 'secret');
  a.nested = await createFolder(client, alice.session, a.folder, 'deeper');
  a.file = await uploadFile(client, alice.session, a.folder, 'plan.txt', 'the plan');
  await client.setStarred(alice.session, a.file, true);
  a.trashed = await uploadFile(client, alice.session, 'home', 'old.txt', 'old');
  await client.remove(alice.session, a.trashed);
  b.folder = await createFolder(client, bob.session, 'home', 'bobs');
  b.file = await uploadFile(client, bob.session, b.folder, 'bob.txt', 'bob');
});

afterAll(async () => {
  await client?.close();
  await store?.close();
});

/** Everything stored for a user (node rows, revisions, stars, usage) and the blob table. */
async function snapshot(userUuid: string): Promise<unknown> {
  const { sql } = store.ctx.storage;
  return {
    nodes: await sql.all('SELECT * FROM nodes WHERE owner_uuid = ? ORDER BY uuid', [userUuid]),
    revisions: await sql.all('SELECT r.* FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ? ORDER BY r.node_uuid, r.revision', [userUuid]),
    stars: await sql.all('SELECT * FROM stars WHERE user_uuid = ? ORDER BY node_uuid', [userUuid]),
    usage: await sql.get('SELECT disk_used, disk_quota FROM users WHERE uuid = ?', [userUuid]),
    blobs: await sql.all('SELECT * FROM blobs ORDER BY hash'),
  };
}

type Method = 'GET' | 'POST' | 'DELETE';
interface Attempt {
  label: string;
  method: Method;
  path: string;
  body?: unknown;
}

/** Every node operation Bob could try with `id` in the place of a node he may not see. */
function operationsOn(id: string): Attempt[] {
  return [
    { label: `details of ${id}`, method: 'GET', path: `/api/nodes/${id}` },
    { label: `path of ${id}`, method: 'GET', path: `/api/nodes/${id}/path` },
    { label: `dirlist of ${id}`, method: 'GET', path: `/api/nodes/${id}/dirlist` },
    { label: `myaccess of ${id}`, method: 'GET', path: `/api/nodes/${id}/myaccess` },
    { label: `upload token for ${id}`, method: 'GET', path: `/api/nodes/${id}/upload` },
    { label: `new_dir in ${id}`, method: 'POST', path: `/api/nodes/${id}`, body: { new_dir: 'intruder' } },
    { label: `new_name of ${id}`, method: 'POST', path: `/api/nodes/${id}`, body: { new_name: 'renamed by bob' } },
    { label: `starred true on ${id}`, method: 'POST', path: `/api/nodes/${id}`, body: { starred: true } },
    { label: `starred false on ${id}`, method: 'POST', path: `/api/nodes/${id}`, body: { starred: false } },
    { label: `copy_to of ${id} into Bob's home`, method: 'POST', path: `/api/nodes/${id}`, body: { copy_to: 'home' } },
    { label: `move_to of ${id} into Bob's folder`, method: 'POST', path: `/api/nodes/${id}`, body: { move_to: b.folder } },
    { label: `DELETE of ${id}`, method: 'DELETE', path: `/api/nodes/${id}` },
  ];
}

/** Bob's own nodes aimed at a target he may not see. */
function targetsOn(id: string): Attempt[] {
  return [
    { label: `copy_to ${id} of Bob's file`, method: 'POST', path: `/api/nodes/${b.file}`, body: { copy_to: id } },
    { label: `move_to ${id} of Bob's file`, method: 'POST', path: `/api/nodes/${b.file}`, body: { move_to: id } },
    { label: `copy_to ${id} of Bob's folder`, method: 'POST', path: `/api/nodes/${b.folder}`, body: { copy_to: id } },
    { label: `move_to ${id} of Bob's folder`, method: 'POST', path: `/api/nodes/${b.folder}`, body: { move_to: id } },
  ];
}

async function attempt(session: StoreSession, at: Attempt): Promise<RawResponse> {
  return raw(client, session, at.method, at.path, at.body);
}

/** The same attempt with `id` replaced by a UUID that exists for nobody. */
function withUnknown(at: Attempt, id: string): Attempt {
  const swap = (text: string): string => text.split(id).join(UNKNOWN);
  return { ...at, path: swap(at.path), body: at.body === undefined ? undefined : (JSON.parse(swap(JSON.stringify(at.body))) as unknown) };
}

const NOT_FOUND = { status: 'error', msg: 'node not found', code: 'not_found' };

describe('another user\'s nodes', () => {
  const aliceIds = (): string[] => [
    a.folder,
    a.file,
    a.nested,
    a.trashed,
    a.file.toUpperCase(),
    `home:${alice.uuid}`,
    `trash:${alice.uuid}`,
    `incoming:${alice.uuid}`,
    `favorites:${alice.uuid}`,
    `public_shares:${alice.uuid}`,
    `private_shares:${alice.uuid}`,
    `shared_with_you:${alice.uuid}`,
  ];

  it('answer 404 with the body of an unknown node for every operation, and change nothing', async () => {
    const aliceBefore = await snapshot(alice.uuid);
    const bobBefore = await snapshot(bob.uuid);
    const attempts = aliceIds().flatMap((id) => [...operationsOn(id), ...targetsOn(id)].map((at) => [id, at] as const));
    expect(attempts.length).toBeGreaterThan(150);
    for (const [id, at] of attempts) {
      const res = await attempt(bob.session, at);
      const unknown = await attempt(bob.session, withUnknown(at, id));
      expect({ op: at.label, status: res.status, body: res.body }).toEqual({ op: at.label, status: unknown.status, body: unknown.body });
      expect({ op: at.label, status: res.status, body: res.body }).toEqual({ op: at.label, status: 404, body: NOT_FOUND });
    }
    expect(await snapshot(alice.uuid)).toEqual(aliceBefore);
    expect(await snapshot(bob.uuid)).toEqual(bobBefore);
  });

  it('are unknown to an administrator too: admin rights are not node rights', async () => {
    const before = await snapshot(alice.uuid);
    for (const id of [a.folder, a.file, `home:${alice.uuid}`]) {
      for (const at of operationsOn(id)) {
        const res = await attempt(admin, at);
        expect({ op: at.label, status: res.status, body: res.body }).toEqual({ op: at.label, status: 404, body: NOT_FOUND });
      }
    }
    expect(await snapshot(alice.uuid)).toEqual(before);
  });

  it('leave the caller\'s own bare identifiers pointing at the caller\'s own folders', async () => {
    const res = await raw(client, bob.session, 'GET', '/api/nodes/home/dirlist');
    expect(res.body).toMatchObject({ status: 'success', data: [{ name: 'bobs' }] });
    const favorites = await raw(client, bob.session, 'GET', '/api/nodes/favorites/dirlist');
    expect(favorites.body).toMatchObject({ status: 'success', data: [] });
    const trash = await raw(client, bob.session, 'GET', '/api/nodes/trash/dirlist');
    expect(trash.body).toMatchObject({ status: 'success', data: [] });
  });

  it('are still Alice\'s to use afterwards', async () => {
    expect((await client.listFolder(alice.session, a.folder)).map((e) => e.name)).toEqual(['deeper', 'plan.txt']);
    expect((await client.listFolder(alice.session, nodeId('favorites'))).map((e) => e.id)).toEqual([a.file]);
    expect((await client.listFolder(alice.session, nodeId('trash'))).map((e) => e.id)).toEqual([a.trashed]);
  });
});
