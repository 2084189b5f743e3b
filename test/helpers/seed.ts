/**
 * Test data for the store's node suites, made through the public interface: users through
 * POST /api/admin/users, sessions through POST /auth, files through the two-step upload.
 * The readers at the bottom look at stored state (rows, blob files) for assertions; nothing
 * here writes to the database behind the store's back.
 */
import { localBlobs } from './blobs.js';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createStoreClient, nodeId, type NodeEntry, type NodeId, type RawResponse, type HttpStoreClient, type StoreSession } from '../../src/store-client/index.js';
import type { NodeRow } from '../../src/store/storage/nodes.js';
import type { TestStore } from './start-store.js';

export const USER_PASSWORD = 'Secret-Passw0rd';

export interface SeededUser {
  uuid: string;
  email: string;
  session: StoreSession;
}

export interface Seeder {
  client: HttpStoreClient;
  admin: StoreSession;
  /** Creates an active user (fullname without digits, as the admin rule wants) and logs them in. */
  user(fullname: string, options?: { quotaBytes?: number }): Promise<SeededUser>;
}

export async function createSeeder(store: TestStore): Promise<Seeder> {
  const client = createStoreClient(store.url, { retries: 0 });
  const admin = await client.login('admin', store.adminPassword);
  return {
    client,
    admin,
    async user(fullname, options = {}) {
      const email = `${fullname.toLowerCase().replace(/[^a-z]+/g, '.')}@example.test`;
      const uuid = await client.createUser(admin, { fullname, email, password: USER_PASSWORD, diskQuotaBytes: options.quotaBytes ?? 0 });
      if (!uuid) throw new Error('the store did not return the new user UUID');
      const session = await client.login(email, USER_PASSWORD);
      return { uuid, email, session };
    },
  };
}

/** `n` in letters, one per digit (12 -> "bc"): a full name made by an administrator may hold no digits. */
export const letters = (n: number): string => String.fromCharCode(...[...String(n)].map((d) => 97 + Number(d)));

/** A maker of users named `<role> <letters>`, a new suffix for each, so emails never clash within a store. */
export function people(seeder: Seeder): (role: string, options?: { quotaBytes?: number }) => Promise<SeededUser> {
  let made = 0;
  return (role, options) => seeder.user(`${role} ${letters((made += 1))}`, options);
}

/** Uploads `content` as `name` into `folder` (or a new revision when the name exists); returns the file's id. */
export async function uploadFile(client: HttpStoreClient, s: StoreSession, folder: string, name: string, content: string | Buffer): Promise<NodeId> {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const result = await client.upload(s, { folder: nodeId(folder), name }, Readable.from([bytes]), bytes.length);
  if (!result.id) throw new Error(`upload of ${name} returned no id`);
  return result.id;
}

export async function createFolder(client: HttpStoreClient, s: StoreSession, parent: string, name: string): Promise<NodeId> {
  await client.createFolder(s, nodeId(parent), name);
  return (await entryNamed(client, s, parent, name)).id;
}

export async function entryNamed(client: HttpStoreClient, s: StoreSession, folder: string, name: string): Promise<NodeEntry> {
  const entries = await client.listFolder(s, nodeId(folder));
  const entry = entries.find((e) => e.name === name);
  if (!entry) throw new Error(`no entry "${name}" in ${folder}; have: ${entries.map((e) => e.name).join(', ')}`);
  return entry;
}

export async function names(client: HttpStoreClient, s: StoreSession, folder: string): Promise<string[]> {
  return (await client.listFolder(s, nodeId(folder))).map((e) => e.name);
}

/** A raw request with the session's bearer token (status and parsed body, never thrown). */
export function raw(client: HttpStoreClient, s: StoreSession | undefined, method: 'GET' | 'POST' | 'DELETE', urlPath: string, json?: unknown): Promise<RawResponse> {
  return client.http.requestRaw({ method, path: urlPath, ...(s ? { token: s.token } : {}), ...(json === undefined ? {} : { json }) });
}

export const sha256Of = (content: string | Buffer): string => createHash('sha256').update(content).digest('hex');
/** The checksums the store publishes for `content` (docs/extensions.md "Checksums"). */
export const checksumsOf = (content: string | Buffer): { sha1: string; md5: string } => ({
  sha1: createHash('sha1').update(content).digest('hex'),
  md5: createHash('md5').update(content).digest('hex'),
});
/** The address the store gives a blob holding `content`. */
export { contentHashOf as blobHashOf } from '../../src/store/blobs/staging.js';

/** A node's row (either dialect: through the storage layer). */
export function nodeRow(store: TestStore, uuid: string): Promise<NodeRow | undefined> {
  return store.ctx.storage.sql.get<NodeRow>('SELECT * FROM nodes WHERE uuid = ?', [uuid]);
}

export async function topLevelRow(store: TestStore, ownerUuid: string, kind: string): Promise<NodeRow> {
  const row = await store.ctx.storage.sql.get<NodeRow>('SELECT * FROM nodes WHERE owner_uuid = ? AND top_kind = ?', [ownerUuid, kind]);
  if (!row) throw new Error(`user ${ownerUuid} has no ${kind}`);
  return row;
}

export function diskUsed(store: TestStore, userUuid: string): number {
  return (store.ctx.db!.prepare('SELECT disk_used FROM users WHERE uuid = ?').get(userUuid) as { disk_used: number }).disk_used;
}

/** Every blob file on disk. */
export function blobFiles(store: TestStore): string[] {
  const root = localBlobs(store).blobDir;
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else found.push(entry.name);
    }
  };
  if (existsSync(root)) walk(root);
  return found.sort();
}

// The readers below go through the storage layer and the blob backend, so they work on either
// dialect and either backend (the integration-pg project). The synchronous ones above read
// SQLite (`ctx.db`) and the blob folder directly: only durability.test.ts, which tests SQLite's
// own mechanisms, still uses them.

export async function readDiskUsed(store: TestStore, userUuid: string): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ disk_used: number }>('SELECT disk_used FROM users WHERE uuid = ?', [userUuid]);
  if (!row) throw new Error(`no user ${userUuid}`);
  return row.disk_used;
}

/** Reference count of a blob; 0 when it has no row. */
export async function readBlobRefs(store: TestStore, hash: string): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ refs: number }>('SELECT refs FROM blobs WHERE hash = ?', [hash]);
  return row?.refs ?? 0;
}

/** Whether the blob backend (folder or bucket) holds a blob. */
export async function blobInBackend(store: TestStore, hash: string): Promise<boolean> {
  return (await store.ctx.blobs.head(hash)) !== undefined;
}

/** Whether the store still keeps a blob's bytes: in its database row (small blobs) or in the backend. */
export async function readBlobStored(store: TestStore, hash: string): Promise<boolean> {
  const row = await store.ctx.storage.sql.get<{ inline: number | boolean }>('SELECT data IS NOT NULL AS inline FROM blobs WHERE hash = ?', [hash]);
  return row?.inline === 1 || row?.inline === true || (await blobInBackend(store, hash));
}

/** Every blob the backend holds, by hash. */
export async function backendBlobs(store: TestStore): Promise<string[]> {
  const found: string[] = [];
  for await (const info of store.ctx.blobs.list()) found.push(info.hash);
  return found.sort();
}
