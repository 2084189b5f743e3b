/**
 * Sharing suites (share_copy_with, incoming shares, approvals, share links, private shares):
 * raw calls through the real HTTP client, raw anonymous requests for public links, and readers
 * of the stored rows, blob files and usage the assertions compare. Nothing here writes to the
 * database behind the store's back.
 */
import { request } from 'undici';
import { expect } from 'vitest';
import type { RawResponse, HttpStoreClient, StoreSession } from '../../src/store-client/index.js';
import { call, readCountRows, type Method } from './groups.js';
import type { SeededUser } from './seed.js';
import type { TestStore } from './start-store.js';

export const LATEST = '999999999999999';

/** A call as `who` (a seeded user or a bare session). */
export function as(client: HttpStoreClient, who: SeededUser | StoreSession, method: Method, path: string, json?: unknown): Promise<RawResponse> {
  return call(client, 'session' in who ? who.session : who, method, path, json);
}

/** Expects an error envelope with this status and code (and `msg` matching, when given). */
export function expectError(res: RawResponse, status: number, code: string, msg?: RegExp | string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({
    status,
    body: { status: 'error', code, ...(msg === undefined ? {} : { msg: typeof msg === 'string' ? msg : expect.stringMatching(msg) }) },
  });
}

/** `incomingRow` through the storage layer (either dialect). */
export function readIncomingRow(store: TestStore, uuid: string): Promise<Record<string, unknown> | undefined> {
  return store.ctx.storage.sql.get<Record<string, unknown>>('SELECT * FROM incoming_shares WHERE uuid = ?', [uuid]);
}

export async function readGroupDiskUsed(store: TestStore, groupUuid: string): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ disk_used: number }>('SELECT disk_used FROM groups WHERE uuid = ?', [groupUuid]);
  if (!row) throw new Error(`no group ${groupUuid}`);
  return row.disk_used;
}

/** `childNames` through the storage layer (either dialect). */
export async function readChildNames(store: TestStore, folderUuid: string): Promise<string[]> {
  // Sorted here, by code unit: SQLite's ORDER BY compares bytes, PostgreSQL's follows its collation.
  return (await store.ctx.storage.sql.all<{ name: string }>('SELECT name FROM nodes WHERE parent_uuid = ?', [folderUuid])).map((r) => r.name).sort();
}

/** `requestRow` through the storage layer (either dialect). */
export function readRequestRow(store: TestStore, uuid: string): Promise<Record<string, unknown> | undefined> {
  return store.ctx.storage.sql.get<Record<string, unknown>>('SELECT * FROM share_requests WHERE uuid = ?', [uuid]);
}

/** `snapshotCounts` through the storage layer (either dialect). */
export async function readSnapshotCounts(store: TestStore): Promise<{ snapshots: number; entries: number }> {
  return {
    snapshots: await readCountRows(store, 'SELECT COUNT(*) AS n FROM snapshots'),
    entries: await readCountRows(store, 'SELECT COUNT(*) AS n FROM snapshot_entries'),
  };
}

/** `blobFolderBytes` for either backend: the backend's blobs (folder or bucket) plus small blobs' rows. */
export async function readBlobBytes(store: TestStore): Promise<number> {
  let backendBytes = 0;
  for await (const info of store.ctx.blobs.list()) backendBytes += info.sizeBytes;
  const row = await store.ctx.storage.sql.get<{ n: number | string }>('SELECT COALESCE(SUM(length(data)), 0) AS n FROM blobs WHERE data IS NOT NULL');
  return backendBytes + Number(row?.n ?? 0);
}

export interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json(): unknown;
}

/**
 * An anonymous request to the store (no token), as curl would send it: one connection per
 * request (`Connection: close`), so no kept-alive socket delays closing the store.
 */
export async function fetchRaw(
  store: TestStore,
  path: string,
  options: { method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE'; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<Fetched> {
  // A link's URL is absolute (built from the request's Host); a path is the store's.
  const res = await request(/^https?:\/\//.test(path) ? path : store.url + path, { method: options.method ?? 'GET', headers: options.headers ?? {}, body: options.body, reset: true });
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return { status: res.statusCode, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) };
}

export const basic = (password: string, user = 'anyone'): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

/** A multipart body with one part `file` named `filename`. */
export function multipartFile(filename: string, content: string | Buffer): { headers: Record<string, string>; body: Buffer } {
  const boundary = `----driveway${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    typeof content === 'string' ? Buffer.from(content) : content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body };
}

/** Downloads the latest revision of a file as `s` and answers its text. */
export async function readText(store: TestStore, s: StoreSession, fileUuid: string): Promise<string> {
  const res = await fetchRaw(store, `/resources/auth/download/${s.fileAccessKey}/${fileUuid}/${LATEST}/f`);
  if (res.status !== 200) throw new Error(`download of ${fileUuid} answered ${res.status}`);
  return res.body.toString('utf8');
}
