/**
 * Groups, organizations and memberships for the store suites, made through the public
 * interface (the administrator endpoints), plus raw calls with any method and readers of the
 * stored rows the assertions look at. Nothing here writes to the database behind the store's back.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { RawResponse, HttpStoreClient, StoreSession } from '../../src/store-client/index.js';
import { createSeeder, type Seeder } from './seed.js';
import { startTestStore, type TestStore, type TestStoreOptions } from './start-store.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A raw request with the session's bearer token (status and parsed body, never thrown). */
export function call(client: HttpStoreClient, s: StoreSession | undefined, method: Method, urlPath: string, json?: unknown): Promise<RawResponse> {
  return client.http.requestRaw({ method, path: urlPath, ...(s ? { token: s.token } : {}), ...(json === undefined ? {} : { json }) });
}

/** `data` of a success answer; fails the test (showing the body) otherwise. */
export async function dataOf<T = Record<string, unknown>>(response: Promise<RawResponse> | RawResponse): Promise<T> {
  const res = await response;
  expect(res.body, `HTTP ${res.status}`).toMatchObject({ status: 'success' });
  expect(res.status).toBe(200);
  return (res.body as { data: T }).data;
}

export const ALL_NODE_PERMISSIONS = ['read', 'write', 'delete', 'download'];

export interface MemberPermissions {
  is_admin?: boolean;
  node_permissions?: string[];
  tag_permissions?: string[];
  share_permissions?: string[];
}

export interface GroupAdmin {
  /**
   * Creates an organization (docs/extensions.md); the caller must be the built-in admin. It allows
   * unlimited quotas unless told otherwise, so that users made with the default quota 0 fit in.
   */
  organization(id: string, options?: { allowUnlimitedQuota?: boolean }): Promise<void>;
  /** Creates a group (POST /api/admin/groups) and answers its UUID. */
  group(name?: string, options?: { quotaBytes?: number; orgId?: string }): Promise<string>;
  /** Adds `userUuid` to the group with these permissions (POST /api/admin/groups/{uuid}/users). */
  member(groupUuid: string, userUuid: string, permissions?: MemberPermissions): Promise<void>;
}

/** Administrator actions through `admin`'s session. */
export function groupAdmin(client: HttpStoreClient, admin: StoreSession): GroupAdmin {
  return {
    async organization(id, { allowUnlimitedQuota = true } = {}) {
      await dataOf(call(client, admin, 'POST', '/api/admin/organizations', { id, name: `Organization ${id}`, allow_unlimited_quota: allowUnlimitedQuota }));
    },
    async group(name = `Group ${randomUUID().slice(0, 8)}`, { quotaBytes = 0, orgId } = {}) {
      const query = orgId ? `?org_id=${encodeURIComponent(orgId)}` : '';
      const data = await dataOf<{ group_uuid: string }>(call(client, admin, 'POST', `/api/admin/groups${query}`, { name, disk_quota: quotaBytes }));
      return data.group_uuid;
    },
    async member(groupUuid, userUuid, permissions = { node_permissions: ['read'] }) {
      await dataOf(call(client, admin, 'POST', `/api/admin/groups/${groupUuid}/users`, { user: userUuid, permissions }));
    },
  };
}

export interface GroupUsage {
  disk_quota: number;
  disk_used: number;
}

/** `countRows` through the storage layer (either dialect); the query names its count `n`. */
export async function readCountRows(store: TestStore, sql: string, ...params: unknown[]): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ n: number }>(sql, params);
  if (!row) throw new Error(`no row from ${sql}`);
  return row.n;
}

/** `groupUsage` through the storage layer (either dialect). */
export function readGroupUsage(store: TestStore, groupUuid: string): Promise<GroupUsage | undefined> {
  return store.ctx.storage.sql.get<GroupUsage>('SELECT disk_quota, disk_used FROM groups WHERE uuid = ?', [groupUuid]);
}

/** `storedBytes` through the storage layer (either dialect). */
export async function readStoredBytes(store: TestStore, ownerUuid: string): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ n: number | string }>(
    'SELECT COALESCE(SUM(r.size), 0) AS n FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ?',
    [ownerUuid],
  );
  return Number(row?.n ?? 0);
}

/** `membershipRow` through the storage layer (either dialect). */
export function readMembershipRow(store: TestStore, groupUuid: string, userUuid: string): Promise<Record<string, unknown> | undefined> {
  return store.ctx.storage.sql.get<Record<string, unknown>>('SELECT * FROM group_members WHERE group_uuid = ? AND user_uuid = ?', [groupUuid, userUuid]);
}

/** A real store with a seeder and the administrator's group actions: what the group suites start from. */
export interface GroupStore {
  store: TestStore;
  seeder: Seeder;
  ga: GroupAdmin;
  admin: StoreSession;
}

export async function startGroupStore(options: TestStoreOptions = {}): Promise<GroupStore> {
  const store = await startTestStore(options);
  const seeder = await createSeeder(store);
  return { store, seeder, ga: groupAdmin(seeder.client, seeder.admin), admin: seeder.admin };
}

export async function stopGroupStore(started: Partial<GroupStore>): Promise<void> {
  await started.seeder?.client.close();
  await started.store?.close();
}
