/**
 * The in-process client on the embedded database keeps live sessions in memory
 * (storage/sessions.ts SqliteSessionMemo), so a bridge PUT does not read its session row again,
 * and still refuses a session at once when it ends: through this store's connection (logout,
 * revocation, a user's role changed) or through another connection to the same file (the admin
 * commands beside a server), on a real SQLite file.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalClient } from '../../../src/store/local-client.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import type { StoreClient, StoreSession } from '../../../src/store-client/contract.js';
import { startTestStore, testStorageKind, type TestStore } from '../../helpers/start-store.js';

const sqliteOnly = testStorageKind() === 'sqlite' ? describe : describe.skip;

sqliteOnly('live sessions in memory on SQLite', () => {
  let store: TestStore;
  let client: StoreClient;
  let other: Database.Database;

  beforeEach(async () => {
    store = await startTestStore({ storage: 'sqlite' });
    client = createLocalClient(store.ctx, { behindFeedBarrier: true });
    other = new Database(path.join(store.dataDir, 'driveway.sqlite'), { timeout: 5000 });
  });
  afterEach(async () => {
    other?.close();
    await store?.close();
  });

  const jtiOf = (s: StoreSession): string => (JSON.parse(Buffer.from(s.token.split('.')[1] as string, 'base64url').toString('utf8')) as { jti: string }).jti;
  const connection = (): Database.Database => {
    if (!(store.ctx.storage instanceof SqliteStorage)) throw new Error('not the embedded database');
    return store.ctx.storage.db;
  };

  it('answers a session checked before from memory: a revocation its watch does not see (trigger dropped) still answers, and an upload does not drop it', async () => {
    const kept = await client.login('admin', store.adminPassword);
    expect((await client.currentUser(kept)).isAdmin).toBe(true);
    connection().exec('DROP TRIGGER temp.session_rows_updated');
    await store.ctx.storage.sql.run('UPDATE sessions SET revoked = ? WHERE id = ?', [Date.now(), jtiOf(kept)]);
    // What every upload writes: the owner's usage.
    await store.ctx.storage.sql.run("UPDATE users SET disk_used = disk_used + 1 WHERE username = 'admin'");
    expect((await client.currentUser(kept)).isAdmin).toBe(true);
    // Expiry is checked at every use, kept or not.
    store.clock.advance(store.config.store.sessionTtlSec * 1000 + 1000);
    await expect(client.currentUser(kept)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it("refuses at once a session ended on this store's connection: a logout, a revocation, the user's role changed", async () => {
    const first = await client.login('admin', store.adminPassword);
    expect((await client.currentUser(first)).isAdmin).toBe(true);
    await client.logout(first);
    await expect(client.currentUser(first)).rejects.toMatchObject({ kind: 'unauthenticated' });

    const second = await client.login('admin', store.adminPassword);
    expect((await client.currentUser(second)).isAdmin).toBe(true);
    await store.ctx.storage.sql.run('UPDATE sessions SET revoked = ? WHERE id = ?', [Date.now(), jtiOf(second)]);
    await expect(client.currentUser(second)).rejects.toMatchObject({ kind: 'unauthenticated' });

    const third = await client.login('admin', store.adminPassword);
    expect((await client.currentUser(third)).isAdmin).toBe(true);
    await store.ctx.storage.sql.run("UPDATE users SET is_admin = 0 WHERE username = 'admin'");
    expect((await client.currentUser(third)).isAdmin).toBe(false);
  });

  it('refuses at once a session ended by another connection to the same file: revoked, or its user deactivated', async () => {
    const first = await client.login('admin', store.adminPassword);
    expect((await client.currentUser(first)).isAdmin).toBe(true);
    other.prepare('UPDATE sessions SET revoked = ? WHERE id = ?').run(Date.now(), jtiOf(first));
    await expect(client.currentUser(first)).rejects.toMatchObject({ kind: 'unauthenticated' });

    const second = await client.login('admin', store.adminPassword);
    expect((await client.currentUser(second)).isAdmin).toBe(true);
    other.prepare("UPDATE users SET is_active = 0 WHERE username = 'admin'").run();
    await expect(client.currentUser(second)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });
});
