/**
 * A group's nodes and the four node permissions (docs/store-semantics.md, "Groups and
 * administration"): a member lacking each of read, write, delete and download tries every node
 * operation on the group's nodes and is refused (403, nothing changed) exactly where that
 * permission is needed; myaccess reports exactly what each caller may do; group administrators
 * and the built-in admin may do everything; non-members, members of another group and
 * administrators (other than the built-in one) get the 404 of an unknown node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawResponse, StoreSession } from '../../../src/store-client/index.js';
import type { TestStore } from '../../helpers/start-store.js';
import { createFolder, nodeRow, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { ALL_NODE_PERMISSIONS, call, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { readChildNames } from '../../helpers/sharing.js';

const LATEST = '999999999999999';
const UNKNOWN = '00000000-0000-4000-8000-0000000000aa';
const NOT_FOUND = { status: 'error', msg: 'node not found', code: 'not_found' };

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let groupUuid: string;
let otherGroupUuid: string;
let owner: SeededUser; // member with every node permission, not a group administrator
const lacking: Record<string, SeededUser> = {};

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
  groupUuid = await ga.group('Research');
  otherGroupUuid = await ga.group('Marketing');
  owner = await seeder.user('Olga Owner');
  await ga.member(groupUuid, owner.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
  for (const missing of ALL_NODE_PERMISSIONS) {
    const user = await seeder.user(`Lacks ${missing.replace(/./, (c) => c.toUpperCase())}`);
    await ga.member(groupUuid, user.uuid, { node_permissions: ALL_NODE_PERMISSIONS.filter((p) => p !== missing) });
    lacking[missing] = user;
  }
});

afterAll(() => stopGroupStore({ seeder, store }));

/** A fresh folder in the group's home holding `a.txt`, plus a second folder to move or copy into. */
interface Scratch {
  folder: string;
  file: string;
  target: string;
  trashed: string;
}

let scratchCount = 0;
async function scratch(): Promise<Scratch> {
  scratchCount += 1;
  const { client } = seeder;
  const folder = await createFolder(client, owner.session, `home:${groupUuid}`, `work ${scratchCount}`);
  const target = await createFolder(client, owner.session, `home:${groupUuid}`, `target ${scratchCount}`);
  const file = await uploadFile(client, owner.session, folder, 'a.txt', `content ${scratchCount}`);
  const trashed = await uploadFile(client, owner.session, folder, 'old.txt', `old ${scratchCount}`);
  await client.remove(owner.session, trashed);
  return { folder, file, target, trashed };
}

interface NodeOperation {
  label: string;
  needs: string[];
  /** Status of a success. */
  ok: number;
  run(s: StoreSession, x: Scratch): Promise<RawResponse>;
  /** What a success changed (asserted after a success; after a refusal the rows must be unchanged). */
  changed?(x: Scratch): void | Promise<void>;
}

const api = (s: StoreSession, method: 'GET' | 'POST' | 'DELETE', path: string, json?: unknown) => call(seeder.client, s, method, path, json);

const operations: NodeOperation[] = [
  { label: 'read the details of a file', needs: ['read'], ok: 200, run: (s, x) => api(s, 'GET', `/api/nodes/${x.file}`) },
  { label: 'read the path of a file', needs: ['read'], ok: 200, run: (s, x) => api(s, 'GET', `/api/nodes/${x.file}/path`) },
  { label: 'list a folder', needs: ['read'], ok: 200, run: (s, x) => api(s, 'GET', `/api/nodes/${x.folder}/dirlist`) },
  { label: "list the group's home", needs: ['read'], ok: 200, run: (s) => api(s, 'GET', `/api/nodes/home:${groupUuid}/dirlist`) },
  { label: 'star a file', needs: ['read'], ok: 204, run: (s, x) => api(s, 'POST', `/api/nodes/${x.file}`, { starred: true }) },
  {
    label: 'create a folder',
    needs: ['write'],
    ok: 204,
    run: (s, x) => api(s, 'POST', `/api/nodes/${x.folder}`, { new_dir: 'made' }),
    changed: async (x) => expect(await childNames(x.folder)).toContain('made'),
  },
  { label: 'ask for an upload token', needs: ['write'], ok: 200, run: (s, x) => api(s, 'GET', `/api/nodes/${x.folder}/upload`) },
  {
    label: 'rename a file',
    needs: ['write'],
    ok: 204,
    run: (s, x) => api(s, 'POST', `/api/nodes/${x.file}`, { new_name: 'renamed.txt' }),
    changed: async (x) => expect((await nodeRow(store, x.file))?.name).toBe('renamed.txt'),
  },
  {
    label: 'move a file into another folder of the group',
    needs: ['write'],
    ok: 204,
    run: (s, x) => api(s, 'POST', `/api/nodes/${x.file}`, { move_to: x.target }),
    changed: async (x) => expect((await nodeRow(store, x.file))?.parent_uuid).toBe(x.target),
  },
  {
    label: 'copy a file into another folder of the group',
    needs: ['read', 'write'],
    ok: 204,
    run: (s, x) => api(s, 'POST', `/api/nodes/${x.file}`, { copy_to: x.target }),
    changed: async (x) => expect(await childNames(x.target)).toEqual(['a.txt']),
  },
  {
    label: 'restore a file from trash',
    needs: ['write'],
    ok: 204,
    run: (s, x) => api(s, 'POST', `/api/nodes/${x.trashed}`, { move_to: x.target }),
    changed: async (x) => expect((await nodeRow(store, x.trashed))?.parent_uuid).toBe(x.target),
  },
  {
    label: "delete a file (into the group's trash)",
    needs: ['delete'],
    ok: 204,
    run: (s, x) => api(s, 'DELETE', `/api/nodes/${x.file}`),
    changed: async (x) => expect((await nodeRow(store, x.file))?.trashed_from).toBe(x.folder),
  },
  {
    label: "purge a file from the group's trash",
    needs: ['delete'],
    ok: 204,
    run: (s, x) => api(s, 'DELETE', `/api/nodes/${x.trashed}`),
    changed: async (x) => expect(await nodeRow(store, x.trashed)).toBeUndefined(),
  },
  {
    label: 'download a file',
    needs: ['download'],
    ok: 200,
    run: (s, x) => seeder.client.http.requestRaw({ method: 'GET', path: `/resources/auth/download/${s.fileAccessKey}/${x.file}/${LATEST}/a.txt` }),
  },
  {
    label: 'view a file',
    needs: ['download'],
    ok: 200,
    run: (s, x) => seeder.client.http.requestRaw({ method: 'GET', path: `/resources/auth/view/${s.fileAccessKey}/${x.file}/${LATEST}/a.txt` }),
  },
];

function childNames(folderUuid: string): Promise<string[]> {
  return readChildNames(store, folderUuid);
}

/** Every row of the scratch subtree and the group's usage: what a refused operation must leave as it was. */
async function snapshot(x: Scratch): Promise<unknown> {
  const { sql } = store.ctx.storage;
  return {
    nodes: await Promise.all([x.folder, x.file, x.target, x.trashed].map((uuid) => nodeRow(store, uuid))),
    children: await Promise.all([x.folder, x.target].map(childNames)),
    stars: await sql.get('SELECT COUNT(*) AS n FROM stars'),
    group: await sql.get('SELECT disk_used FROM groups WHERE uuid = ?', [groupUuid]),
  };
}

describe('a member lacking one node permission', () => {
  for (const missing of ALL_NODE_PERMISSIONS) {
    describe(`(no ${missing})`, () => {
      for (const op of operations) {
        const refused = op.needs.includes(missing);
        it(`${refused ? 'is refused (403) and changes nothing' : 'succeeds'} when trying to ${op.label}`, async () => {
          const x = await scratch();
          const before = await snapshot(x);
          const res = await op.run(lacking[missing]!.session, x);
          if (refused) {
            expect({ status: res.status, body: res.body }).toEqual({
              status: 403,
              body: { status: 'error', code: 'forbidden', msg: `${missing} permission required` },
            });
            expect(await snapshot(x)).toEqual(before);
          } else {
            expect(res.status, JSON.stringify(res.body)).toBe(op.ok);
            await op.changed?.(x);
          }
        });
      }
    });
  }
});

describe('myaccess', () => {
  it('reports exactly the permissions of each member, also to a member who may not read', async () => {
    const x = await scratch();
    for (const missing of ALL_NODE_PERMISSIONS) {
      const expected = ALL_NODE_PERMISSIONS.filter((p) => p !== missing);
      for (const id of [x.file, x.folder, `home:${groupUuid}`, `trash:${groupUuid}`]) {
        expect(await dataOf(api(lacking[missing]!.session, 'GET', `/api/nodes/${id}/myaccess`))).toEqual(expected);
      }
    }
    expect(await dataOf(api(owner.session, 'GET', `/api/nodes/${x.file}/myaccess`))).toEqual(ALL_NODE_PERMISSIONS);
  });

  it('reports nothing but the node for a member without any node permission, who may do nothing else', async () => {
    const user = await seeder.user('Nadia Nothing');
    await ga.member(groupUuid, user.uuid, { node_permissions: [] });
    const x = await scratch();
    expect(await dataOf(api(user.session, 'GET', `/api/nodes/${x.file}/myaccess`))).toEqual([]);
    for (const op of operations) {
      const res = await op.run(user.session, x);
      expect({ op: op.label, status: res.status }).toEqual({ op: op.label, status: 403 });
    }
  });

  it('reports every permission to a group administrator without node permissions, who may then delete', async () => {
    const user = await seeder.user('Greta Groupadmin');
    await ga.member(groupUuid, user.uuid, { is_admin: true, node_permissions: [] });
    const x = await scratch();
    expect(await dataOf(api(user.session, 'GET', `/api/nodes/${x.file}/myaccess`))).toEqual(ALL_NODE_PERMISSIONS);
    expect((await api(user.session, 'DELETE', `/api/nodes/${x.file}`)).status).toBe(204);
    expect((await nodeRow(store, x.file))?.trashed_from).toBe(x.folder);
  });

  it('reports every permission to the built-in admin, who needs no membership', async () => {
    const x = await scratch();
    const admin = seeder.admin;
    expect(await dataOf(api(admin, 'GET', `/api/nodes/home:${groupUuid}/myaccess`))).toEqual(ALL_NODE_PERMISSIONS);
    expect((await api(admin, 'POST', `/api/nodes/${x.folder}`, { new_dir: 'by the admin' })).status).toBe(204);
    expect(await childNames(x.folder)).toContain('by the admin');
    expect((await api(admin, 'GET', `/api/nodes/${x.folder}/dirlist`)).body).toMatchObject({ status: 'success' });
  });

  it('follows a membership change at once (no cached permission)', async () => {
    const user = await seeder.user('Chris Changing');
    await ga.member(groupUuid, user.uuid, { node_permissions: ['read'] });
    const x = await scratch();
    expect((await api(user.session, 'DELETE', `/api/nodes/${x.file}`)).status).toBe(403);
    await dataOf(call(seeder.client, seeder.admin, 'PUT', `/api/admin/groups/${groupUuid}/users/${user.uuid}`, { node_permissions: ['read', 'delete'] }));
    expect(await dataOf(api(user.session, 'GET', `/api/nodes/${x.file}/myaccess`))).toEqual(['read', 'delete']);
    expect((await api(user.session, 'DELETE', `/api/nodes/${x.file}`)).status).toBe(204);
    await dataOf(call(seeder.client, seeder.admin, 'DELETE', `/api/admin/groups/${groupUuid}/users/${user.uuid}`));
    expect({ status: (await api(user.session, 'GET', `/api/nodes/${x.folder}`)).status }).toEqual({ status: 404 });
  });
});

describe("the group's nodes for those outside it", () => {
  async function outsiders(): Promise<Array<[string, StoreSession]>> {
    const stranger = await seeder.user('Sam Stranger');
    const otherMember = await seeder.user('Mia Marketing');
    await ga.member(otherGroupUuid, otherMember.uuid, { is_admin: true, node_permissions: ALL_NODE_PERMISSIONS });
    const sameOrgAdminId = await seeder.client.createUser(seeder.admin, {
      fullname: 'Ada Orgadmin',
      email: 'ada.orgadmin@example.test',
      password: 'Secret-Passw0rd',
      isAdmin: true,
    });
    await ga.organization('elsewhere');
    await seeder.client.createUser(
      seeder.admin,
      { fullname: 'Eli Elsewhere', email: 'eli.elsewhere@example.test', password: 'Secret-Passw0rd', isAdmin: true },
      'elsewhere',
    );
    expect(sameOrgAdminId).toBeDefined();
    return [
      ['a user of the organization who is no member', stranger.session],
      ['an administrator of another group', otherMember.session],
      ['an administrator of the organization who is no member', await seeder.client.login('ada.orgadmin@example.test', 'Secret-Passw0rd')],
      ['an administrator of another organization', await seeder.client.login('eli.elsewhere@example.test', 'Secret-Passw0rd')],
    ];
  }

  it('are unknown (the 404 of an unknown node) for every operation, and nothing changes', async () => {
    const x = await scratch();
    const before = await snapshot(x);
    for (const [who, session] of await outsiders()) {
      for (const op of operations.filter((o) => !o.label.startsWith('download') && !o.label.startsWith('view'))) {
        const res = await op.run(session, x);
        expect({ who, op: op.label, status: res.status, body: res.body }).toEqual({ who, op: op.label, status: 404, body: NOT_FOUND });
      }
      for (const id of [`home:${groupUuid}`, `trash:${groupUuid}`, `incoming:${groupUuid}`]) {
        const res = await api(session, 'GET', `/api/nodes/${id}/myaccess`);
        const unknown = await api(session, 'GET', `/api/nodes/home:${UNKNOWN}/myaccess`);
        expect({ who, id, status: res.status, body: res.body }).toEqual({ who, id, status: unknown.status, body: unknown.body });
      }
      const download = await operations.find((o) => o.label === 'download a file')!.run(session, x);
      expect({ who, status: download.status }).toEqual({ who, status: 404 });
      // Their own folders are no door in: not as a move or copy target, not as a source.
      const mine = await createFolder(seeder.client, session, 'home', `outsider ${Math.random()}`);
      for (const body of [{ move_to: mine }, { copy_to: mine }]) {
        expect((await api(session, 'POST', `/api/nodes/${x.file}`, body)).body).toEqual(NOT_FOUND);
      }
      for (const body of [{ move_to: x.target }, { copy_to: x.target }]) {
        expect((await api(session, 'POST', `/api/nodes/${mine}`, body)).body).toEqual(NOT_FOUND);
      }
    }
    expect(await snapshot(x)).toEqual(before);
  });
});
