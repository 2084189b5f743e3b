/**
 * Raw calls and stored-state readers for the current-user suites (profile, 2FA, app passwords,
 * notifications, login history, directory): requests go through the real HTTP client, the
 * readers look at rows for assertions and never write.
 */

/** Longer than the failed-login window (15 min): after it, no earlier failure counts. */
const PAST_LOGIN_WINDOW_MS = 16 * 60 * 1000;

/**
 * One store for the suite (handed to `use` once started) whose clock only the tests move
 * (codes and times are then exact), moved past the failed-login window after every test so
 * each starts with clean counters.
 */
export function frozenStoreSuite(use: (fixture: StoreFixture) => void, options: TestStoreOptions = {}): void {
  let fixture: StoreFixture | undefined;
  beforeAll(async () => {
    fixture = await storeFixture(options);
    fixture.store.clock.freeze();
    use(fixture);
  });
  afterEach(() => {
    fixture?.store.clock.advance(PAST_LOGIN_WINDOW_MS);
  });
  afterAll(async () => {
    await fixture?.close();
  });
}
import type { Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RawResponse, HttpStoreClient, StoreSession } from '../../src/store-client/index.js';
import type { UserRow } from '../../src/store/storage/users.js';
import type { TestStore, TestStoreOptions } from './start-store.js';
import { storeFixture, type StoreFixture } from './store-fixture.js';

/** A request with the session's (or a bare token's) bearer; status and body, never thrown. */
export function apiCall(
  client: HttpStoreClient,
  auth: StoreSession | string | undefined,
  method: Dispatcher.HttpMethod,
  path: string,
  json?: unknown,
  headers?: Record<string, string>,
): Promise<RawResponse> {
  const token = typeof auth === 'string' ? auth : auth?.token;
  return client.http.requestRaw({ method, path, ...(token ? { token } : {}), ...(json === undefined ? {} : { json }), ...(headers ? { headers } : {}) });
}

/** POST /auth with any body. */
export function postAuth(client: HttpStoreClient, body: unknown, headers?: Record<string, string>): Promise<RawResponse> {
  return apiCall(client, undefined, 'POST', '/auth', body, headers);
}

/** The `data` of a success envelope (fails the test when the answer is not one). */
export function dataOf<T = Record<string, unknown>>(res: RawResponse): T {
  const body = res.body as { status?: string; data?: T };
  if (res.status !== 200 || body.status !== 'success') throw new Error(`expected success, got ${res.status} ${JSON.stringify(res.body)}`);
  return body.data as T;
}

/** `userRow` through the storage layer (either dialect). */
export async function readUserRow(store: TestStore, uuid: string): Promise<UserRow> {
  const row = await store.ctx.storage.sql.get<UserRow>('SELECT * FROM users WHERE uuid = ?', [uuid]);
  if (!row) throw new Error(`no user ${uuid}`);
  return row;
}

/** `historyRows` through the storage layer (either dialect: no `IS ?`, which PostgreSQL refuses). */
export function readHistoryRows(store: TestStore, userUuid: string | null): Promise<Array<{ action: string; status: string; action_args: string; error_details: string; ip_address: string }>> {
  const columns = 'SELECT action, status, action_args, error_details, ip_address FROM login_events';
  return userUuid === null
    ? store.ctx.storage.sql.all(`${columns} WHERE user_uuid IS NULL ORDER BY id`)
    : store.ctx.storage.sql.all(`${columns} WHERE user_uuid = ? ORDER BY id`, [userUuid]);
}

/** Whether a session's token still opens /api/user. */
export async function isLive(client: HttpStoreClient, session: StoreSession | string): Promise<boolean> {
  const res = await apiCall(client, session, 'GET', '/api/user');
  if (res.status !== 200 && res.status !== 401) throw new Error(`unexpected ${res.status}`);
  return res.status === 200;
}
